// RocePacket: every field of a RoCEv2 frame as a plain value, and the two
// conversions between it and wire bytes.
//
//   decode(view)  -> RocePacket   (all fields, reserved bits included)
//   encode(pkt)   -> bytes        (lengths, pad count, IPv4 checksum and ICRC derived)
//
// encode(decode(parse(frame).view)) reproduces a well-formed frame byte for
// byte (checked against frames captured from Linux rdma_rxe). Fields marked
// "override" exist to build malformed frames for tests; leave them empty.
// Not for the packet path: it allocates. Thread-safe: value type.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "datapath/wire/packet_view.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/pkey.h"

namespace epic::wire {

using vocab::Ipv6Addr;
using vocab::MacAddr;

struct RocePacket {
  // Ethernet
  MacAddr eth_dst{};
  MacAddr eth_src{};
  bool has_vlan = false;
  uint16_t vlan_tci = 0;  // PCP(15:13) DEI(12) VID(11:0)

  // IP
  IpVersion ip_version = IpVersion::kV4;
  uint32_t ipv4_src = 0;
  uint32_t ipv4_dst = 0;
  Ipv6Addr ipv6_src{};
  Ipv6Addr ipv6_dst{};
  uint8_t tos = 0;   // IPv4 TOS / IPv6 traffic class: DSCP(7:2) ECN(1:0)
  uint8_t ttl = 64;  // IPv4 TTL / IPv6 hop limit
  uint16_t ipv4_id = 0;
  uint16_t ipv4_flags_frag = 0x4000;  // DF
  uint32_t ipv6_flow_label = 0;

  // UDP
  uint16_t udp_src_port = 0xC000;
  uint16_t udp_dst_port = kRoceV2Port;
  uint16_t udp_checksum = 0;  // RoCEv2 senders (rxe, ConnectX) send 0 over IPv4

  // BTH
  uint8_t opcode = 0;
  bool solicited = false;
  bool mig_req = false;
  uint8_t transport_version = 0;
  uint16_t pkey = vocab::kDefaultPkey;
  bool fecn = false;
  bool becn = false;
  uint8_t bth_reserved6 = 0;  // byte 4, bits 5:0
  uint32_t dest_qp = 0;
  bool ack_req = false;
  uint8_t bth_reserved7 = 0;  // byte 8, bits 6:0
  uint32_t psn = 0;

  // Extension headers: written only when the opcode's table entry has them.
  Deth deth;
  Reth reth;
  AtomicEth atomic_eth;
  Aeth aeth;
  uint64_t atomic_ack_orig = 0;
  uint32_t immdt = 0;  // the ImmDt field read big-endian (ntohl of verbs' imm_data)
  uint32_t ieth_rkey = 0;
  std::array<uint8_t, 16> cnp_reserved{};

  std::vector<uint8_t> payload;        // data bytes, without the pad
  std::array<uint8_t, 3> pad_bytes{};  // contents of the pad (senders write zeros)

  // Overrides for malformed frames (tests only).
  std::optional<uint8_t> pad_count;
  std::optional<uint16_t> ip_length;  // IPv4 total length / IPv6 payload length
  std::optional<uint16_t> udp_length;
  std::optional<uint16_t> ipv4_checksum;
  std::optional<uint32_t> icrc;

  // Pad count that encode() writes: the override, or what aligns the payload to 4.
  uint8_t effective_pad_count() const {
    return pad_count ? *pad_count : static_cast<uint8_t>((4 - payload.size() % 4) % 4);
  }
  // Frame length that encode() produces.
  size_t encoded_size() const;

  friend bool operator==(const RocePacket&, const RocePacket&) = default;
};

RocePacket decode(const PacketView& v);

// Writes the frame into out[0..cap); returns its length, or 0 if cap is too small.
size_t encode(const RocePacket& p, uint8_t* out, size_t cap);
std::vector<uint8_t> encode(const RocePacket& p);

}  // namespace epic::wire
