#include "tools/inc-rc-peer/pingpong_wire.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace epic::tools::rc_peer {
namespace {

std::optional<uint32_t> parse_hex(std::string_view s) {
  if (s.empty() || s.size() > 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    uint32_t d;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    v = (v << 4) | d;
  }
  return v;
}

}  // namespace

std::string gid_to_wire(const Gid& g) {
  std::string s;
  s.reserve(32);
  static constexpr char kHex[] = "0123456789abcdef";
  for (uint8_t b : g) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 0xF]);
  }
  return s;
}

std::optional<Gid> gid_from_wire(std::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  Gid g{};
  for (size_t i = 0; i < 16; ++i) {
    auto v = parse_hex(hex.substr(2 * i, 2));
    if (!v) return std::nullopt;
    g[i] = static_cast<uint8_t>(*v);
  }
  return g;
}

Gid gid_from_ipv4(uint32_t ipv4) {
  Gid g{};
  g[10] = 0xFF;
  g[11] = 0xFF;
  g[12] = static_cast<uint8_t>(ipv4 >> 24);
  g[13] = static_cast<uint8_t>(ipv4 >> 16);
  g[14] = static_cast<uint8_t>(ipv4 >> 8);
  g[15] = static_cast<uint8_t>(ipv4);
  return g;
}

std::optional<uint32_t> ipv4_from_gid(const Gid& g) {
  for (size_t i = 0; i < 10; ++i) {
    if (g[i] != 0) return std::nullopt;
  }
  if (g[10] != 0xFF || g[11] != 0xFF) return std::nullopt;
  return (uint32_t{g[12]} << 24) | (uint32_t{g[13]} << 16) | (uint32_t{g[14]} << 8) | g[15];
}

std::string format_gid(const Gid& g) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, g.data(), buf, sizeof buf) == nullptr) return "?";
  return buf;
}

std::array<char, kPingpongMsgLen> format_pingpong_dest(const PingpongDest& d) {
  std::array<char, kPingpongMsgLen> msg{};
  const std::string gid = gid_to_wire(d.gid);
  std::snprintf(msg.data(), msg.size(), "%04x:%06x:%06x:%s", d.lid, d.qpn & 0xFFFFFFu,
                d.psn & 0xFFFFFFu, gid.c_str());
  return msg;
}

std::optional<PingpongDest> parse_pingpong_dest(const char* msg, size_t len) {
  // fixed layout: 4 ':' 6 ':' 6 ':' 32 [NUL]
  constexpr size_t kText = 4 + 1 + 6 + 1 + 6 + 1 + 32;
  if (len < kText) return std::nullopt;
  const std::string_view s(msg, kText);
  if (s[4] != ':' || s[11] != ':' || s[18] != ':') return std::nullopt;
  if (len > kText && msg[kText] != '\0') return std::nullopt;
  auto lid = parse_hex(s.substr(0, 4));
  auto qpn = parse_hex(s.substr(5, 6));
  auto psn = parse_hex(s.substr(12, 6));
  auto gid = gid_from_wire(s.substr(19, 32));
  if (!lid || !qpn || !psn || !gid) return std::nullopt;
  PingpongDest d;
  d.lid = static_cast<uint16_t>(*lid);
  d.qpn = *qpn;
  d.psn = *psn;
  d.gid = *gid;
  return d;
}

}  // namespace epic::tools::rc_peer
