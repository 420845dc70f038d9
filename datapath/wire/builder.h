// Fluent builder of RoCEv2 frames for tests, tools and the user-space RC
// endpoint:
//
//   auto frame = PacketBuilder()
//                    .eth(dst_mac, src_mac).ipv4(src_ip, dst_ip).udp_src_port(0xC001)
//                    .bth(op::kSendOnly, /*dest_qp=*/0x11, /*psn=*/7).ack_req()
//                    .payload(bytes).build();
//
// Lengths, pad count, IPv4 checksum and ICRC are derived when the frame is
// built. Not for the packet path: it allocates. Thread-safe: value type.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "datapath/wire/roce_packet.h"

namespace epic::wire {

class PacketBuilder {
 public:
  PacketBuilder() = default;
  explicit PacketBuilder(RocePacket p) : p_(std::move(p)) {}

  PacketBuilder& eth(const MacAddr& dst, const MacAddr& src) {
    p_.eth_dst = dst;
    p_.eth_src = src;
    return *this;
  }
  PacketBuilder& vlan(uint16_t tci) {
    p_.has_vlan = true;
    p_.vlan_tci = tci;
    return *this;
  }
  PacketBuilder& ipv4(uint32_t src, uint32_t dst) {
    p_.ip_version = IpVersion::kV4;
    p_.ipv4_src = src;
    p_.ipv4_dst = dst;
    return *this;
  }
  PacketBuilder& ipv6(const Ipv6Addr& src, const Ipv6Addr& dst, uint32_t flow_label = 0) {
    p_.ip_version = IpVersion::kV6;
    p_.ipv6_src = src;
    p_.ipv6_dst = dst;
    p_.ipv6_flow_label = flow_label;
    return *this;
  }
  PacketBuilder& tos(uint8_t v) {
    p_.tos = v;
    return *this;
  }
  PacketBuilder& ecn(uint8_t v) {
    p_.tos = static_cast<uint8_t>((p_.tos & 0xFC) | (v & 0x3));
    return *this;
  }
  PacketBuilder& ttl(uint8_t v) {
    p_.ttl = v;
    return *this;
  }
  PacketBuilder& ipv4_id(uint16_t v) {
    p_.ipv4_id = v;
    return *this;
  }
  PacketBuilder& udp_src_port(uint16_t v) {
    p_.udp_src_port = v;
    return *this;
  }
  PacketBuilder& udp_dst_port(uint16_t v) {
    p_.udp_dst_port = v;
    return *this;
  }
  PacketBuilder& bth(uint8_t opcode, uint32_t dest_qp, uint32_t psn) {
    p_.opcode = opcode;
    p_.dest_qp = dest_qp;
    p_.psn = psn;
    return *this;
  }
  PacketBuilder& pkey(uint16_t v) {
    p_.pkey = v;
    return *this;
  }
  PacketBuilder& solicited(bool v = true) {
    p_.solicited = v;
    return *this;
  }
  PacketBuilder& mig_req(bool v = true) {
    p_.mig_req = v;
    return *this;
  }
  PacketBuilder& ack_req(bool v = true) {
    p_.ack_req = v;
    return *this;
  }
  PacketBuilder& fecn(bool v = true) {
    p_.fecn = v;
    return *this;
  }
  PacketBuilder& becn(bool v = true) {
    p_.becn = v;
    return *this;
  }
  PacketBuilder& reth(uint64_t va, uint32_t rkey, uint32_t dma_len) {
    p_.reth = {va, rkey, dma_len};
    return *this;
  }
  PacketBuilder& aeth(uint8_t syndrome, uint32_t msn) {
    p_.aeth = {syndrome, msn};
    return *this;
  }
  PacketBuilder& deth(uint32_t qkey, uint32_t src_qp) {
    p_.deth = {qkey, 0, src_qp};
    return *this;
  }
  PacketBuilder& immdt(uint32_t v) {
    p_.immdt = v;
    return *this;
  }
  PacketBuilder& payload(std::span<const uint8_t> bytes) {
    p_.payload.assign(bytes.begin(), bytes.end());
    return *this;
  }
  // `n` bytes of a recognisable pattern: byte i = (seed + i) mod 256.
  PacketBuilder& payload_pattern(size_t n, uint8_t seed = 0) {
    p_.payload.clear();
    p_.payload.reserve(n);
    for (size_t i = 0; i < n; ++i) p_.payload.push_back(static_cast<uint8_t>(seed + i));
    return *this;
  }

  RocePacket& packet() { return p_; }
  const RocePacket& packet() const { return p_; }
  std::vector<uint8_t> build() const { return encode(p_); }

 private:
  RocePacket p_;
};

}  // namespace epic::wire
