#include "proto/vocab/addr.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace epic::vocab {

std::optional<MacAddr> parse_mac(std::string_view s) {
  MacAddr m{};
  if (s.size() != 17) return std::nullopt;
  for (size_t i = 0; i < 6; ++i) {
    if (i > 0 && s[i * 3 - 1] != ':') return std::nullopt;
    unsigned v = 0;
    for (size_t k = 0; k < 2; ++k) {
      const char c = s[i * 3 + k];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        return std::nullopt;
    }
    m[i] = static_cast<uint8_t>(v);
  }
  return m;
}

std::optional<uint32_t> parse_ipv4(std::string_view s) {
  const std::string str(s);
  in_addr a{};
  if (inet_pton(AF_INET, str.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::optional<Ipv6Addr> parse_ipv6(std::string_view s) {
  const std::string str(s);
  Ipv6Addr a{};
  if (inet_pton(AF_INET6, str.c_str(), a.data()) != 1) return std::nullopt;
  return a;
}

std::string format_mac(const MacAddr& m) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                m[5]);
  return buf;
}

std::string format_ipv4(uint32_t a) {
  char buf[INET_ADDRSTRLEN];
  const in_addr n{htonl(a)};
  inet_ntop(AF_INET, &n, buf, sizeof buf);
  return buf;
}

std::string format_ipv6(const Ipv6Addr& a) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
  return buf;
}

std::string format_qpn(uint32_t qpn) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%06x", qpn);
  return buf;
}

bool is_unicast_ipv4(uint32_t ipv4) {
  const uint32_t first = ipv4 >> 24;
  return ipv4 != 0 && ipv4 != 0xFFFFFFFFu && first != 127 && first < 224;
}

bool is_unicast_mac(const MacAddr& mac) {
  bool zero = true;
  for (uint8_t b : mac) zero = zero && b == 0;
  return !zero && (mac[0] & 1) == 0;
}

Ipv6Addr ipv4_mapped_gid(uint32_t ipv4) {
  Ipv6Addr g{};
  g[10] = g[11] = 0xFF;
  g[12] = static_cast<uint8_t>(ipv4 >> 24);
  g[13] = static_cast<uint8_t>(ipv4 >> 16);
  g[14] = static_cast<uint8_t>(ipv4 >> 8);
  g[15] = static_cast<uint8_t>(ipv4);
  return g;
}

}  // namespace epic::vocab
