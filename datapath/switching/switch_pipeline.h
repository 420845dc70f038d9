// SwitchPipeline: the per-frame decision of incd — a switch for everything
// else, the engine for EPIC's traffic (docs/design.md: "answer ARP for its own
// INC addresses and forward ordinary traffic"):
//
//   runt / longer than the port's MTU allows        -> drop (counted by reason)
//   learn the source MAC on the input port (L2Table, aging)
//   ARP request for one of the switch's INC addresses -> reply written to `replies`
//   ICMP echo request to an INC address               -> echo reply written to `replies`
//   anything else to an INC MAC                       -> drop (the switch has no IP stack)
//   IPv4 UDP 4791 to an INC address                 -> kEngine (this worker owns the
//                                                      group) or kHandoff (another does)
//   transit RoCEv2 (to anyone else)                 -> ICRC checked and counted; a bad one
//                                                      dropped or passed (config)
//   anything else                                   -> forward to the learned port, or
//                                                      flood (unknown, broadcast, multicast;
//                                                      never the 802.1D link-local group)
// The source MAC is learned once the frame has passed the size checks.
//
// DPDK-free: it sees bytes and port numbers; the DPDK worker (datapath/dpdk)
// acts on the decision with mbufs, the fuzz target and the unit tests with
// plain buffers. One instance per worker (its L2 table is the worker's own).
// Hot path: no allocation, no locks, no syscalls.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "datapath/engine/tx_batch.h"
#include "datapath/switching/inc_address.h"
#include "datapath/switching/l2_table.h"
#include "proto/vocab/psn.h"

namespace epic::switching {

enum class Verdict : uint8_t {
  kDrop,     // free it (reason in Decision::drop)
  kForward,  // to Decision::port
  kFlood,    // to every port except the input port
  kEngine,   // RoCEv2 for a group this worker owns (or for no group: the engine counts it)
  kHandoff,  // RoCEv2 for a group another worker owns: Decision::worker
  kReplied,  // consumed; the answer is in `replies`
};

enum class DropReason : uint8_t {
  kRunt,             // shorter than an Ethernet header (or than its IP header says)
  kOversize,         // longer than the input port's MTU allows
  kBadIcrc,          // transit RoCEv2 with a bad ICRC (or malformed), and bad_icrc = drop
  kHairpin,          // destination learned on the input port
  kSourceMulticast,  // a multicast/broadcast source MAC
  kNoPort,           // learned port no longer exists
  kLinkLocal,        // 01:80:C2:00:00:0X (STP, PAUSE, LACP, LLDP...): 802.1D bridges never forward
  kToSwitch,         // to an INC MAC, but not ARP, RoCEv2 or an echo request (no IP stack here)
  kSpoofedSwitch,    // from one of the switch's own INC MACs or IPv4 addresses: only it sends
                     // from them (a forged result or ACK "from the switch"; docs/security.md)
};
inline constexpr size_t kDropReasonCount = 9;
std::string_view to_string(DropReason r);

struct Decision {
  Verdict verdict = Verdict::kDrop;
  uint16_t port = 0;    // kForward
  uint16_t worker = 0;  // kHandoff
  DropReason drop = DropReason::kRunt;
};

struct PipelineCounters {
  uint64_t frames = 0;
  uint64_t forwarded = 0;  // unicast to a learned port
  uint64_t flooded = 0;
  uint64_t to_engine = 0;
  uint64_t handed_off = 0;
  uint64_t arp_replies = 0;
  uint64_t icmp_replies = 0;  // echo replies from an INC address
  uint64_t non_ip = 0;        // switched frames that are not IPv4/IPv6 (ARP included)
  uint64_t transit_roce = 0;  // RoCEv2 between hosts, switched untouched
  uint64_t transit_bad_icrc = 0;
  uint64_t transit_malformed = 0;  // UDP 4791 that does not parse as RoCEv2 (other reasons)
  std::array<uint64_t, kDropReasonCount> drops{};
};

// What every worker's pipeline shares: immutable once built (a new snapshot replaces it).
struct PipelineConfig {
  std::vector<IncAddress> inc_addresses;
  std::vector<uint32_t> max_frame;  // per port: longest frame accepted (MTU + L2 headers)
  bool drop_bad_icrc = false;
  // (INC IPv4, QPN) of every group edge at this switch -> the worker that owns the group.
  std::unordered_map<uint64_t, uint16_t> owner;
  static uint64_t key(uint32_t ipv4, uint32_t qpn) {
    return (uint64_t{ipv4} << 24) | (qpn & vocab::kQpnMask);
  }
};

class SwitchPipeline {
 public:
  SwitchPipeline(uint16_t worker, size_t l2_capacity, uint64_t l2_aging_ns);

  // The configuration in force; must stay alive until replaced (the DPDK layer keeps
  // snapshots alive through RCU).
  void set_config(const PipelineConfig* config) { config_ = config; }

  Decision classify(const uint8_t* frame, uint32_t len, uint16_t in_port, uint64_t now_ns,
                    engine::TxBatch& replies);

  const PipelineCounters& counters() const { return counters_; }
  const L2Table& l2() const { return l2_; }
  L2Table& l2() { return l2_; }

 private:
  Decision drop(DropReason r) {
    ++counters_.drops[static_cast<size_t>(r)];
    return {Verdict::kDrop, 0, 0, r};
  }
  Decision switch_l2(const uint8_t* frame, uint16_t in_port, uint64_t now_ns);
  bool is_inc_address(uint32_t ipv4) const;
  bool is_inc_mac(const uint8_t* mac) const;

  uint16_t worker_;
  const PipelineConfig* config_ = nullptr;
  L2Table l2_;
  PipelineCounters counters_;
};

}  // namespace epic::switching
