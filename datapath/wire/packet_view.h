// A validated, zero-copy view of one RoCEv2 frame: where each header starts
// and what the BTH opcode says follows it. Produced only by parse(); its
// accessors read the caller's buffer, which must outlive the view.
// Thread-safe for concurrent reads.
#pragma once

#include <cstdint>

#include "datapath/wire/bytes.h"
#include "datapath/wire/layout.h"
#include "datapath/wire/opcode.h"

namespace epic::wire {

enum class IpVersion : uint8_t { kV4 = 4, kV6 = 6 };

struct Reth {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t dma_len = 0;
  friend bool operator==(const Reth&, const Reth&) = default;
};

struct Aeth {
  uint8_t syndrome = 0;
  uint32_t msn = 0;  // 24 bits
  friend bool operator==(const Aeth&, const Aeth&) = default;
};

struct Deth {
  uint32_t qkey = 0;
  uint8_t reserved = 0;  // byte 4
  uint32_t src_qp = 0;   // 24 bits
  friend bool operator==(const Deth&, const Deth&) = default;
};

struct AtomicEth {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint64_t swap_add = 0;
  uint64_t compare = 0;
  friend bool operator==(const AtomicEth&, const AtomicEth&) = default;
};

struct PacketView {
  const uint8_t* data = nullptr;
  uint16_t frame_len = 0;  // bytes through the ICRC (trailing Ethernet padding excluded)
  bool has_vlan = false;
  IpVersion ip_version = IpVersion::kV4;
  uint16_t l3_off = 0;
  uint16_t l4_off = 0;
  uint16_t bth_off = 0;
  uint16_t payload_off = 0;
  uint16_t payload_len = 0;  // includes the pad bytes
  uint16_t icrc_off = 0;
  const OpcodeInfo* op = nullptr;

  // Ethernet
  const uint8_t* eth_dst() const { return data + eth::kDst; }
  const uint8_t* eth_src() const { return data + eth::kSrc; }
  uint16_t vlan_tci() const { return has_vlan ? load_be16(data + eth::kHeaderLen) : 0; }

  // IP (IPv4 fields; IPv6 where named)
  const uint8_t* l3() const { return data + l3_off; }
  uint8_t tos() const {  // IPv4 TOS or IPv6 traffic class: DSCP(7:2) ECN(1:0)
    if (ip_version == IpVersion::kV4) return l3()[ipv4::kTos];
    return static_cast<uint8_t>(load_be16(l3()) >> 4);
  }
  uint8_t ecn() const { return tos() & 0x3; }
  uint8_t ttl() const { return l3()[ip_version == IpVersion::kV4 ? ipv4::kTtl : ipv6::kHopLimit]; }
  uint32_t ipv4_src() const { return load_be32(l3() + ipv4::kSrc); }
  uint32_t ipv4_dst() const { return load_be32(l3() + ipv4::kDst); }
  const uint8_t* ipv6_src() const { return l3() + ipv6::kSrc; }
  const uint8_t* ipv6_dst() const { return l3() + ipv6::kDst; }

  // UDP
  uint16_t udp_src_port() const { return load_be16(data + l4_off + udp::kSrcPort); }

  // BTH
  const uint8_t* bth() const { return data + bth_off; }
  uint8_t opcode() const { return bth()[bth::kOpcode]; }
  bool solicited() const { return (bth()[bth::kFlags] & 0x80) != 0; }
  bool mig_req() const { return (bth()[bth::kFlags] & 0x40) != 0; }
  uint8_t pad_count() const { return (bth()[bth::kFlags] >> 4) & 0x3; }
  uint8_t transport_version() const { return bth()[bth::kFlags] & 0xF; }
  uint16_t pkey() const { return load_be16(bth() + bth::kPkey); }
  bool fecn() const { return (bth()[bth::kFecnBecn] & 0x80) != 0; }
  bool becn() const { return (bth()[bth::kFecnBecn] & 0x40) != 0; }
  uint32_t dest_qp() const { return load_be24(bth() + bth::kDestQp); }
  bool ack_req() const { return (bth()[bth::kAckReq] & 0x80) != 0; }
  uint32_t psn() const { return load_be24(bth() + bth::kPsn); }

  // Extension headers; call only when op->has(...) says the header is present.
  const uint8_t* ext(uint8_t off) const { return bth() + bth::kHeaderLen + off; }
  Reth reth() const {
    const uint8_t* p = ext(op->off_reth);
    return {load_be64(p + reth::kVa), load_be32(p + reth::kRkey), load_be32(p + reth::kDmaLen)};
  }
  Aeth aeth() const {
    const uint8_t* p = ext(op->off_aeth);
    return {p[aeth::kSyndrome], load_be24(p + aeth::kMsn)};
  }
  Deth deth() const {
    const uint8_t* p = ext(op->off_deth);
    return {load_be32(p + deth::kQkey), p[deth::kQkey + 4], load_be24(p + deth::kSrcQp)};
  }
  AtomicEth atomic_eth() const {
    const uint8_t* p = ext(op->off_atomic_eth);
    return {load_be64(p + atomic_eth::kVa), load_be32(p + atomic_eth::kRkey),
            load_be64(p + atomic_eth::kSwapAdd), load_be64(p + atomic_eth::kCompare)};
  }
  uint64_t atomic_ack_orig() const { return load_be64(ext(op->off_atomic_ack_eth)); }
  uint32_t immdt() const { return load_be32(ext(op->off_immdt)); }  // read big-endian
  uint32_t ieth_rkey() const { return load_be32(ext(op->off_ieth)); }

  // Payload (data bytes, pad excluded) and ICRC.
  const uint8_t* payload() const { return data + payload_off; }
  uint16_t data_len() const { return static_cast<uint16_t>(payload_len - pad_count()); }
  uint32_t icrc() const { return load_le32(data + icrc_off); }
};

}  // namespace epic::wire
