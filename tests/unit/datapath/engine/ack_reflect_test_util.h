// Test bench of the ack_reflect and retransmission packet tables: a group at one switch built
// with prepare_group() from a small tree (rank children, switch children, an optional parent),
// the Actions its modules act on, and the frames they sent, decoded with wire::parse.
//
// Addresses: child c is on port c, its end of the edge has QPN kChildQp + c; the parent is on
// port kParentPort with QPN kParentQp. A decoded frame says where it went by port and
// destination QPN, so a row's expected frames name the edge.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "datapath/engine/actions.h"
#include "datapath/engine/group_instance.h"
#include "datapath/engine/translate_psn.h"
#include "datapath/wire/opcode.h"
#include "datapath/wire/parser.h"
#include "tests/unit/datapath/engine/engine_test_util.h"

namespace epic::engine::acks_testing {

inline constexpr uint32_t kChildQp = 0x100;  // child c's QPN: kChildQp + c
inline constexpr uint32_t kParentQp = 0x200;
inline constexpr uint16_t kParentPort = 9;
inline constexpr uint32_t kPsn0 = 100;  // initial PSN of every group here
inline constexpr uint8_t kAck = 0x1F;   // ACK, unlimited credits (what the switch sends)

// One child of the tree: a rank (one rank, `first`) or a switch over ranks [first, first+count).
struct ChildSpec {
  bool is_rank = true;
  uint16_t first = 0;
  uint16_t count = 1;
};
inline ChildSpec rank(uint16_t r) { return {true, r, 1}; }
inline ChildSpec subtree(uint16_t first, uint16_t count) { return {false, first, count}; }

inline GroupConfig tree(const std::vector<ChildSpec>& children, uint16_t num_ranks, bool parent,
                        uint32_t initial_psn = kPsn0) {
  GroupConfig cfg;
  cfg.group_id = 7;
  cfg.num_ranks = num_ranks;
  cfg.window = 4;  // 8 slots: group PSN p uses slot p % 8
  cfg.pmtu = 256;
  cfg.initial_psn = initial_psn;
  for (size_t c = 0; c < children.size(); ++c) {
    const auto k = static_cast<uint8_t>(c);
    ChildLink l;
    l.local = {testing::kSwitchMac, testing::kSwitchIp, 0x3000u + k};
    l.remote = {{2, 0xAA, 0, 0, 0, k}, 0x0A640000u + k, kChildQp + k};
    l.port = k;
    l.is_rank = children[c].is_rank;
    l.first_rank = children[c].first;
    l.rank_count = children[c].count;
    cfg.children.push_back(l);
  }
  if (parent) {
    ParentLink p;
    p.local = {testing::kSwitchMac, testing::kSwitchIp, 0x3100};
    p.remote = {{2, 0xBB, 0, 0, 0, 1}, 0x0A650001u, kParentQp};
    p.port = kParentPort;
    cfg.parent = p;
  }
  return cfg;
}

// One frame a module sent. `syndrome` is the AETH syndrome of an ACK (0 for a SEND);
// `len` the payload bytes of a SEND.
struct Sent {
  uint16_t port = 0;
  uint32_t dest_qp = 0;
  uint8_t opcode = 0;
  uint32_t psn = 0;
  uint8_t syndrome = 0;
  uint16_t len = 0;
  friend bool operator==(const Sent&, const Sent&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Sent& s) {
    return os << "{port " << s.port << " qp 0x" << std::hex << s.dest_qp << " op 0x"
              << int{s.opcode} << std::dec << " psn " << s.psn << " syn 0x" << std::hex
              << int{s.syndrome} << std::dec << " len " << s.len << "}";
  }
};
// An ACK (or NAK) to child c / to the parent; a SEND of `len` bytes to child c / the parent.
inline Sent ack_to(uint16_t c, uint32_t psn, uint8_t syndrome = kAck) {
  return {c, kChildQp + c, wire::op::kAck, psn, syndrome, 0};
}
inline Sent ack_up(uint32_t psn) { return {kParentPort, kParentQp, wire::op::kAck, psn, kAck, 0}; }
inline Sent data_to(uint16_t c, uint32_t psn, uint16_t len, uint8_t op = wire::op::kSendOnly) {
  return {c, kChildQp + c, op, psn, 0, len};
}
inline Sent data_up(uint32_t psn, uint16_t len, uint8_t op = wire::op::kSendOnly) {
  return {kParentPort, kParentQp, op, psn, 0, len};
}

// The group, its slots, and the Actions its modules act on.
struct Bench {
  explicit Bench(const GroupConfig& cfg) : slots(cfg.window, cfg.pmtu) {
    std::string error;
    inst = prepare_group(cfg, &slots, error);
    if (!inst) ADD_FAILURE() << "prepare_group: " << error;
  }
  GroupState& g() { return inst->state; }
  // Announces a collective (int32 sum): count elements per rank, i.e. count*4/256 packets.
  void announce(CollectiveType type, uint32_t count, uint16_t root = 0) {
    create_record(g(), {type, vocab::DType::kInt32, vocab::ReduceOp::kSum, root, count});
  }
  // Slot of group PSN `psn` as AggregateData would have left it: holding `psn` in `state`, with
  // a 256-byte data result (or the control message's).
  void hold(uint32_t psn, SlotState state, bool control = false) {
    Slot& s = slots.meta[slots.index(psn)];
    s.used = true;
    s.psn = psn;
    s.state = state;
    s.control = control;
    s.opcode = control ? wire::op::kSendOnlyImm : wire::op::kSendOnly;
    s.immdt = control ? kControlImm : 0;
    s.payload_len = control ? kControlPayloadBytes : 256;
  }
  // The frames sent so far, in order; a frame that does not parse fails the test.
  std::vector<Sent> sent() const {
    std::vector<Sent> out;
    for (size_t i = 0; i < tx.size(); ++i) {
      const auto r = wire::parse(tx.data(i), tx.frame(i).length);
      if (!r.ok()) {
        ADD_FAILURE() << "frame " << i << " does not parse";
        continue;
      }
      const bool ack = r.view.op->kind == wire::OpKind::kAck;
      out.push_back({tx.frame(i).port, r.view.dest_qp(), r.view.opcode(), r.view.psn(),
                     ack ? r.view.aeth().syndrome : uint8_t{0},
                     ack ? uint16_t{0} : r.view.data_len()});
    }
    return out;
  }

  SlotRegion slots;
  std::unique_ptr<GroupInstance> inst;
  TxBatch tx;
  EngineCounters n;
  Actions a{tx, n};
};

}  // namespace epic::engine::acks_testing
