// Mode-III at one switch, as packet tables: what the switch answers to each frame of two
// ranks (in order: taken and ACKed, one coalesced ACK per burst; ahead of ePSN: one NAK per
// gap; behind: ACKed again; beyond the Pipe: RNR NAK), what it sends on (results in each
// rank's receive sequence) and what it does with the ranks' ACKs and NAKs (recycling,
// go-back-N resend, timeout with back-off, the retry limit ending the group). Bad input is
// dropped and counted by reason; another group's state is untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/parser.h"
#include "proto/vocab/aeth.h"
#include "tests/unit/datapath/engine/engine_test_util.h"

namespace epic::engine {
namespace {

namespace w = epic::wire;
namespace aeth = vocab::aeth;

using testing::control;
using testing::frame;

GroupConfig mode3_group(uint32_t id, uint32_t qp_base, uint32_t window = 4) {
  GroupConfig cfg = testing::two_rank_group(id, qp_base, window);
  cfg.mode = vocab::GroupMode::kMode3;
  cfg.hop_timeout_us = 100;
  return cfg;
}

// An ACK (or NAK) from rank `from` for its receive sequence.
std::vector<uint8_t> ack(uint32_t dest_qp, uint32_t psn, uint8_t syndrome, uint8_t from) {
  auto b = wire::PacketBuilder()
               .eth(testing::kSwitchMac, {2, 0xAA, 0, 0, 0, from})
               .ipv4(0x0A640000u + from, testing::kSwitchIp);
  b.bth(w::op::kAck, dest_qp, psn).aeth(syndrome, 0);
  return b.build();
}

// What the switch sent, decoded: to which rank, opcode, PSN, AETH syndrome.
struct Out {
  uint32_t to_qp;
  uint8_t opcode;
  uint32_t psn;
  uint8_t syndrome;
  friend bool operator==(const Out&, const Out&) = default;
};
std::ostream& operator<<(std::ostream& o, const Out& x) {
  return o << "{qp " << std::hex << x.to_qp << std::dec << ", op " << int{x.opcode} << ", psn "
           << x.psn << ", aeth " << std::hex << int{x.syndrome} << std::dec << "}";
}

struct Switch {
  Mode2Engine engine;
  SlotRegion slots{4, 256};
  SlotRegion other_slots{4, 256};
  TxBatch tx;
  uint64_t now = 1'000'000;

  Switch() {
    engine.install_group(mode3_group(1, 0x1000), &slots);
    engine.install_group(testing::two_rank_group(2, 0x2000), &other_slots);  // Mode-II
  }
  std::vector<Out> feed(const std::vector<std::vector<uint8_t>>& frames) {
    std::vector<RxFrame> rx;
    for (const auto& f : frames) {
      rx.push_back({f.data(), static_cast<uint16_t>(f.size()), testing::ingress_port(f)});
    }
    tx.clear();
    engine.process(rx.data(), rx.size(), tx, now);
    return sent();
  }
  std::vector<Out> poll(uint64_t at) {
    now = at;
    tx.clear();
    engine.poll(now, tx);
    return sent();
  }
  std::vector<Out> sent() const {
    std::vector<Out> out;
    for (size_t i = 0; i < tx.size(); ++i) {
      const w::ParseResult r = w::parse(tx.data(i), tx.frame(i).length);
      EXPECT_TRUE(r.ok());
      const bool is_ack = r.view.op->kind == w::OpKind::kAck;
      out.push_back({r.view.dest_qp(), r.view.opcode(), r.view.psn(),
                     is_ack ? r.view.aeth().syndrome : uint8_t{0}});
    }
    return out;
  }
};

constexpr uint8_t kAck = aeth::kAckUnlimitedCredits;
const CollectiveDescriptor kAllReduce2{CollectiveType::kAllReduce, vocab::DType::kInt32,
                                       vocab::ReduceOp::kSum, 0, 128};  // 2 packets of 256

// The same frames in any order (timers of one tick expire in the wheel's order).
bool same_frames(const std::vector<Out>& a, const std::vector<Out>& b) {
  return a.size() == b.size() && std::is_permutation(a.begin(), a.end(), b.begin());
}

std::vector<uint8_t> ctrl(uint8_t from) {
  return frame(0x1000u + from, w::op::kSendOnlyImm, 100, control(kAllReduce2), kControlImm, from);
}
std::vector<uint8_t> data(uint8_t from, uint32_t psn, uint8_t fill = 1) {
  const uint8_t op = psn == 101 ? w::op::kSendFirst : w::op::kSendLast;
  return frame(0x1000u + from, op, psn, std::vector<uint8_t>(256, fill), 0, from);
}

TEST(Mode3Engine, InOrderUploadsAreTakenAndAckedOncePerBurst) {
  Switch s;
  // Rank 0's control message and both data packets in one burst: one ACK, of the last.
  EXPECT_EQ(s.feed({ctrl(0), data(0, 101), data(0, 102)}),
            (std::vector<Out>{{0x100, w::op::kAck, 102, kAck}}));
  // Rank 1's control message completes the control entry: the control result goes to both
  // ranks (their receive PSN 100), then rank 1 is ACKed.
  EXPECT_EQ(s.feed({ctrl(1)}), (std::vector<Out>{{0x100, w::op::kSendOnlyImm, 100, 0},
                                                 {0x101, w::op::kSendOnlyImm, 100, 0},
                                                 {0x101, w::op::kAck, 100, kAck}}));
  EXPECT_EQ(s.engine.counters().hop_taken, 4u);
  EXPECT_EQ(s.engine.counters().hop_acks_sent, 2u);
}

TEST(Mode3Engine, AGapIsNakedOnceAndARetransmissionAckedAgain) {
  Switch s;
  EXPECT_EQ(s.feed({ctrl(0)}), (std::vector<Out>{{0x100, w::op::kAck, 100, kAck}}));
  // 101 lost: 102 is ahead of ePSN, NAKed with 101; the rest of the gap is dropped silently.
  EXPECT_EQ(s.feed({data(0, 102)}),
            (std::vector<Out>{{0x100, w::op::kAck, 101, aeth::kNakPsnSequenceError}}));
  EXPECT_EQ(s.feed({data(0, 102)}), std::vector<Out>{});
  // The go-back: 101, 102 taken, one ACK.
  EXPECT_EQ(s.feed({data(0, 101), data(0, 102)}),
            (std::vector<Out>{{0x100, w::op::kAck, 102, kAck}}));
  // A duplicate of something taken: ACKed again.
  EXPECT_EQ(s.feed({ctrl(0)}), (std::vector<Out>{{0x100, w::op::kAck, 102, kAck}}));
  const EngineCounters& c = s.engine.counters();
  EXPECT_EQ(c.hop_out_of_order, 2u);
  EXPECT_EQ(c.hop_naks_sent, 1u);
  EXPECT_EQ(c.hop_ack_again, 1u);
  EXPECT_EQ(c.rx_accounted(), c.rx_frames);
}

TEST(Mode3Engine, ARankWhoseLastUploadIsLostIsNudgedInsteadOfWaitingForItsOwnTimeout) {
  Switch s;
  // Rank 0 announces a 2-packet AllReduce and sends 101; 102 is lost: nothing later reveals it.
  EXPECT_EQ(s.feed({ctrl(0), data(0, 101)}), (std::vector<Out>{{0x100, w::op::kAck, 101, kAck}}));
  // A quiet interval (the hop timeout, 100 us) later the edge still owes 102: a sequence NAK.
  EXPECT_EQ(s.poll(s.now + 90'000), std::vector<Out>{});
  EXPECT_EQ(s.poll(s.now + 20'000),
            (std::vector<Out>{{0x100, w::op::kAck, 102, aeth::kNakPsnSequenceError}}));
  // Its resend was lost too: the requester would ignore a second sequence NAK for 102, so the
  // next nudge (twice the interval later) is an RNR NAK, which it always obeys.
  EXPECT_EQ(s.poll(s.now + 190'000), std::vector<Out>{});
  EXPECT_EQ(s.poll(s.now + 20'000),
            (std::vector<Out>{{0x100, w::op::kAck, 102, aeth::rnr_nak(kNudgeRnrCode)}}));
  // 102 arrives: taken and ACKed.
  EXPECT_EQ(s.feed({data(0, 102)}), (std::vector<Out>{{0x100, w::op::kAck, 102, kAck}}));
  EXPECT_EQ(s.engine.counters().hop_nudges, 2u);
  // Rank 1 never sent anything: its edge was never watched, and never nudged.
  EXPECT_EQ(s.engine.counters().hop_naks_sent, 1u);
}

TEST(Mode3Engine, ResultsAreAckedPerRankRecycledAndResentOnNakAndTimeout) {
  Switch s;
  s.feed({ctrl(0), data(0, 101, 1), data(0, 102, 1)});
  s.feed({ctrl(1)});
  // Rank 1's data completes both packets: results 101, 102 to both ranks.
  const std::vector<Out> out = s.feed({data(1, 101, 2), data(1, 102, 2)});
  ASSERT_EQ(out.size(), 5u);  // 2 results x 2 ranks + rank 1's ACK
  EXPECT_EQ(out[0], (Out{0x100, w::op::kSendFirst, 101, 0}));
  EXPECT_EQ(out[3], (Out{0x101, w::op::kSendLast, 102, 0}));
  // Rank 0 ACKs everything; rank 1 NAKs 102 (it lost it): 102 is resent to rank 1 alone, and
  // the NAK acknowledges what came before: the control message's and 101's entries are freed.
  EXPECT_EQ(s.feed({ack(0x1000, 102, kAck, 0)}), std::vector<Out>{});
  const uint64_t recycled = s.engine.counters().pipe_entries_recycled;
  EXPECT_EQ(s.feed({ack(0x1001, 102, aeth::kNakPsnSequenceError, 1)}),
            (std::vector<Out>{{0x101, w::op::kSendLast, 102, 0}}));
  EXPECT_EQ(s.engine.counters().pipe_entries_recycled - recycled, 2u);
  // No answer: the NAK was retry 1, so the hop timeout (100 us) has doubled: 200 us; then 400.
  // Meanwhile both ranks' upload edges stay quiet with nothing owed: 100 us after their last
  // take, then 200 us after that, each responder says its last ACK again (the nudge).
  const std::vector<Out> acks_again{{0x100, w::op::kAck, 102, kAck},
                                    {0x101, w::op::kAck, 102, kAck}};
  EXPECT_TRUE(same_frames(s.poll(s.now + 150'000), acks_again));
  EXPECT_EQ(s.poll(s.now + 60'000), (std::vector<Out>{{0x101, w::op::kSendLast, 102, 0}}));
  EXPECT_TRUE(same_frames(s.poll(s.now + 350'000), acks_again));
  EXPECT_EQ(s.poll(s.now + 60'000), (std::vector<Out>{{0x101, w::op::kSendLast, 102, 0}}));
  // Rank 1's ACK: the last entry recycled, no retransmission timer left.
  EXPECT_EQ(s.feed({ack(0x1001, 102, kAck, 1)}), std::vector<Out>{});
  EXPECT_EQ(s.engine.counters().pipe_entries_recycled - recycled, 3u);
  EXPECT_EQ(s.engine.counters().hop_resent, 3u);
  // The quiet checks run out after kMaxNudges (4) ACKs again per edge; then nothing is armed.
  EXPECT_TRUE(same_frames(s.poll(s.now + 1'000'000), acks_again));
  EXPECT_TRUE(same_frames(s.poll(s.now + 1'000'000), acks_again));
  EXPECT_FALSE(s.engine.next_poll_ns().has_value());
  EXPECT_EQ(s.engine.counters().hop_nudges, 8u);
  EXPECT_EQ(s.engine.counters().hop_timeouts, 2u);
}

TEST(Mode3Engine, AFullPipeAnswersRnrNakWithoutTakingThePacket) {
  // Window 1: a Pipe of 2 entries. Rank 0 runs ahead: its control message and 101 fit, 102 is
  // beyond psnStart + N and is RNR-NAKed with ePSN unchanged.
  Mode2Engine engine;
  SlotRegion slots(1, 256);
  engine.install_group(mode3_group(1, 0x1000, 1), &slots);
  TxBatch tx;
  std::vector<std::vector<uint8_t>> frames = {ctrl(0), data(0, 101), data(0, 102)};
  std::vector<RxFrame> rx;
  for (const auto& f : frames) {
    rx.push_back({f.data(), static_cast<uint16_t>(f.size()), testing::ingress_port(f)});
  }
  engine.process(rx.data(), rx.size(), tx, 0);
  ASSERT_EQ(tx.size(), 2u);
  const w::ParseResult rnr = w::parse(tx.data(0), tx.frame(0).length);
  EXPECT_EQ(rnr.view.psn(), 102u);
  EXPECT_EQ(aeth::kind(rnr.view.aeth().syndrome), aeth::Kind::kRnrNak);
  const w::ParseResult a = w::parse(tx.data(1), tx.frame(1).length);
  EXPECT_EQ(a.view.psn(), 101u);  // the coalesced ACK: 102 was not taken
  EXPECT_EQ(engine.counters().hop_pipe_full, 1u);
  EXPECT_EQ(engine.counters().hop_taken, 2u);
}

TEST(Mode3Engine, BadAcksAreRefusedAndANakFloodEndsOnlyItsGroup) {
  Switch s;
  s.feed({ctrl(0), data(0, 101, 1), data(0, 102, 1)});
  s.feed({ctrl(1), data(1, 101, 2), data(1, 102, 2)});
  // The Mode-II group next door has state of its own.
  s.feed({frame(0x2000, w::op::kSendOnlyImm, 100, control(kAllReduce2), kControlImm, 0)});
  const std::vector<Slot> other = s.other_slots.meta;
  const EngineCounters before = s.engine.counters();
  // ACKs of PSNs never sent (beyond the last result, far away, before the group's first).
  s.feed({ack(0x1000, 103, kAck, 0), ack(0x1000, 5000, kAck, 0), ack(0x1000, 50, kAck, 0)});
  EXPECT_EQ(s.engine.counters().drop_ack_refused - before.drop_ack_refused, 3u);
  // A flood of sequence NAKs for 101: each one is a retry; past the retry limit (7) the group's
  // collectives end, and its frames are dropped from then on. Resends stay bounded.
  for (int i = 0; i < 20; ++i) s.feed({ack(0x1000, 101, aeth::kNakPsnSequenceError, 0)});
  const EngineCounters& c = s.engine.counters();
  EXPECT_EQ(c.hop_failures, 1u);
  // The group's own telemetry says so (incd's metrics and log, the IncAgent's report).
  for (const GroupState* g : s.engine.groups()) {
    EXPECT_EQ(g->stats.hop_failures, g->config->group_id == 1 ? 1u : 0u) << g->config->group_id;
  }
  EXPECT_LE(c.hop_resent - before.hop_resent, 7u * 2u);  // 101 and 102, seven times at most
  EXPECT_GT(c.drop_group_failed, 0u);
  EXPECT_EQ(s.feed({data(0, 103)}), std::vector<Out>{});
  EXPECT_EQ(c.rx_accounted(), c.rx_frames);
  // The Mode-II group is untouched and still works.
  for (size_t i = 0; i < other.size(); ++i) EXPECT_EQ(s.other_slots.meta[i].psn, other[i].psn);
  const uint64_t taken = c.upward_accepted;
  s.feed({frame(0x2001, w::op::kSendOnlyImm, 100, control(kAllReduce2), kControlImm, 1)});
  EXPECT_EQ(c.upward_accepted, taken + 1);
}

}  // namespace
}  // namespace epic::engine
