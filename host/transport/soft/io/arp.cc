#include "host/transport/soft/io/arp.h"

#include <cstring>

#include "datapath/wire/bytes.h"
#include "datapath/wire/layout.h"

namespace epic::soft::io {
namespace {

namespace eth = wire::eth;
// ARP header fields, from the end of the Ethernet header.
constexpr size_t kHtype = 0, kPtype = 2, kHlen = 4, kPlen = 5, kOper = 6, kSha = 8, kSpa = 14,
                 kTha = 18, kTpa = 24;

}  // namespace

std::optional<ArpMessage> parse_arp(const uint8_t* frame, size_t len) {
  if (len < kArpFrameLen) return std::nullopt;
  if (wire::load_be16(frame + eth::kType) != eth::kTypeArp) return std::nullopt;
  const uint8_t* a = frame + eth::kHeaderLen;
  if (wire::load_be16(a + kHtype) != 1 || wire::load_be16(a + kPtype) != eth::kTypeIpv4 ||
      a[kHlen] != 6 || a[kPlen] != 4) {
    return std::nullopt;
  }
  const uint16_t op = wire::load_be16(a + kOper);
  if (op != 1 && op != 2) return std::nullopt;
  ArpMessage m;
  m.op = static_cast<ArpOp>(op);
  std::memcpy(m.sender_mac.data(), a + kSha, 6);
  m.sender_ip = wire::load_be32(a + kSpa);
  std::memcpy(m.target_mac.data(), a + kTha, 6);
  m.target_ip = wire::load_be32(a + kTpa);
  return m;
}

ArpFrame build_arp(const vocab::MacAddr& eth_dst, const ArpMessage& m) {
  ArpFrame f{};
  std::memcpy(f.data() + eth::kDst, eth_dst.data(), 6);
  std::memcpy(f.data() + eth::kSrc, m.sender_mac.data(), 6);
  wire::store_be16(f.data() + eth::kType, eth::kTypeArp);
  uint8_t* a = f.data() + eth::kHeaderLen;
  wire::store_be16(a + kHtype, 1);
  wire::store_be16(a + kPtype, eth::kTypeIpv4);
  a[kHlen] = 6;
  a[kPlen] = 4;
  wire::store_be16(a + kOper, static_cast<uint16_t>(m.op));
  std::memcpy(a + kSha, m.sender_mac.data(), 6);
  wire::store_be32(a + kSpa, m.sender_ip);
  std::memcpy(a + kTha, m.target_mac.data(), 6);
  wire::store_be32(a + kTpa, m.target_ip);
  return f;
}

std::optional<ArpFrame> ArpAgent::handle(const ArpMessage& m) {
  if (m.target_ip != ip_ || m.sender_ip == 0 || m.sender_ip == ip_) return std::nullopt;
  if (table_.size() < kMaxEntries || table_.count(m.sender_ip) != 0) {
    table_[m.sender_ip] = m.sender_mac;
  }
  if (m.op != ArpOp::kRequest) return std::nullopt;
  ++requests_answered_;
  ArpMessage reply;
  reply.op = ArpOp::kReply;
  reply.sender_mac = mac_;
  reply.sender_ip = ip_;
  reply.target_mac = m.sender_mac;
  reply.target_ip = m.sender_ip;
  return build_arp(m.sender_mac, reply);
}

ArpFrame ArpAgent::request(uint32_t target_ip) const {
  ArpMessage m;
  m.op = ArpOp::kRequest;
  m.sender_mac = mac_;
  m.sender_ip = ip_;
  m.target_ip = target_ip;
  return build_arp(kBroadcastMac, m);
}

std::optional<vocab::MacAddr> ArpAgent::lookup(uint32_t ipv4) const {
  auto it = table_.find(ipv4);
  if (it == table_.end()) return std::nullopt;
  return it->second;
}

}  // namespace epic::soft::io
