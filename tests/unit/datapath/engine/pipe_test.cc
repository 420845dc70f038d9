// Mode-III's Pipe (pipe.h) as packet tables: a Pipe of N = 8 entries (window 4), two
// in-endpoints (fan-in 2) and two out-endpoints, first PSN S. Each row is a step — a contribution
// (in-endpoint, PSN, int32 value, length), "send what is ready" (pipe_next_ready/pipe_sent in a
// loop), or an ACK (out-endpoint, PSN) — with the verdict expected and psnStart, maxPsnSent and
// the entries recycled after it. Every expectation is worked out by hand from EPIC's Pipe rules
// (DESIGN.md §2, the EPIC specification's Mode-III): the range [psnStart, psnStart + N), drop
// beyond it, ACK again below it, results on in PSN order, psnStart = min(lastAcked) + 1, and
// recycling only then. Tables run for S = 100 and for S just before the 2^24 wrap.
// Also covered: Mode-II's pitfall (a fast in-endpoint reaching p + N while a slow out-endpoint
// has not acknowledged p is refused, not allowed to clear p's entry), the zombie guard after
// recycling, results summed, retransmission runs, and refused initialisation.
#include "datapath/engine/pipe.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "datapath/wire/opcode.h"

namespace epic::engine {
namespace {

constexpr uint32_t kMask = 0xFFFFFF;
constexpr uint16_t kPmtu = 256;
constexpr uint16_t kLen = 8;  // two int32

uint32_t at(uint32_t s, int64_t off) { return static_cast<uint32_t>((s + off) & kMask); }

SlotClaim claim(uint16_t len = kLen) {
  SlotClaim c;
  c.opcode = wire::op::kSendOnly;
  c.payload_len = len;
  c.dtype = arith::DType::kInt32;
  c.op = arith::ReduceOp::kSum;
  return c;
}

std::vector<uint8_t> payload(int32_t v, uint16_t len = kLen) {
  std::vector<uint8_t> b(len);
  for (size_t k = 0; k + 4 <= b.size(); k += 4) std::memcpy(b.data() + k, &v, 4);
  return b;
}

struct TestPipe {
  SlotRegion entries{4, kPmtu};  // 2 * 4 = 8 entries
  PipeState p;
  explicit TestPipe(uint32_t s, uint8_t outs = 2) { EXPECT_TRUE(pipe_init(p, &entries, s, outs)); }
  PipeReceive receive(int child, uint32_t psn, int32_t v, uint16_t len = kLen,
                      uint16_t fan_in = 2) {
    const std::vector<uint8_t> b = payload(v, len);
    return pipe_receive(p, psn, child, claim(len), b.data(), len, fan_in);
  }
  // Sends every result that is ready, in PSN order; how many.
  uint32_t send_ready() {
    uint32_t n = 0;
    uint32_t psn = 0;
    while (pipe_next_ready(p, psn)) {
      pipe_sent(p, psn);
      ++n;
    }
    return n;
  }
};

// --- the step table ---------------------------------------------------------------------------

enum class Kind { kReceive, kSend, kAck };

struct Step {
  const char* name;
  Kind kind;
  int who;      // in-endpoint (receive) or out-endpoint (ACK)
  int64_t off;  // PSN as an offset from S
  int32_t value = 1;
  uint16_t len = kLen;
  int verdict = 0;              // a PipeReceive or PipeAck, or the number sent (kSend)
  int64_t start_after = 0;      // psnStart - S after the step
  int64_t max_sent_after = -1;  // maxPsnSent - S after the step
  uint32_t recycled = 0;        // entries freed (kAck)
};

constexpr int R(PipeReceive v) { return static_cast<int>(v); }
constexpr int A(PipeAck v) { return static_cast<int>(v); }

const Step kSteps[] = {
    // Nothing sent yet: an ACK acknowledges nothing.
    {"ack before any result", Kind::kAck, 0, 0, 0, kLen, A(PipeAck::kBeyondSent), 0, -1, 0},
    // PSN S: both in-endpoints; the second completes it.
    {"S from in 0", Kind::kReceive, 0, 0, 5, kLen, R(PipeReceive::kAdded), 0, -1},
    {"S from in 0 again", Kind::kReceive, 0, 0, 5, kLen, R(PipeReceive::kDuplicate), 0, -1},
    {"S+1 from in 1 first", Kind::kReceive, 1, 1, 7, kLen, R(PipeReceive::kAdded), 0, -1},
    {"S+1 from in 0: complete", Kind::kReceive, 0, 1, 8, kLen, R(PipeReceive::kCompleted), 0, -1},
    // S+1 is complete but S is not: nothing goes out of order.
    {"send: S not complete", Kind::kSend, 0, 0, 0, kLen, 0, 0, -1},
    {"S from in 1: complete", Kind::kReceive, 1, 0, 6, kLen, R(PipeReceive::kCompleted), 0, -1},
    {"send: S and S+1", Kind::kSend, 0, 0, 0, kLen, 2, 0, 1},
    {"S again after completion", Kind::kReceive, 1, 0, 6, kLen, R(PipeReceive::kDuplicate), 0, 1},
    {"S from a third in-endpoint", Kind::kReceive, 2, 0, 6, kLen, R(PipeReceive::kInconsistent), 0,
     1},
    {"S+2 first, 4 bytes", Kind::kReceive, 0, 2, 1, 4, R(PipeReceive::kAdded), 0, 1},
    {"S+2 then 8 bytes", Kind::kReceive, 1, 2, 1, kLen, R(PipeReceive::kInconsistent), 0, 1},
    // The range is [S, S+8): S+7 is in, S+8 beyond.
    {"S+7 in range", Kind::kReceive, 0, 7, 1, kLen, R(PipeReceive::kAdded), 0, 1},
    {"S+8 beyond", Kind::kReceive, 0, 8, 1, kLen, R(PipeReceive::kBeyond), 0, 1},
    {"far beyond", Kind::kReceive, 0, 1000, 1, kLen, R(PipeReceive::kBeyond), 0, 1},
    // ACKs: out 0 takes both, out 1 only S. psnStart follows the slower.
    {"ack beyond maxPsnSent", Kind::kAck, 0, 2, 0, kLen, A(PipeAck::kBeyondSent), 0, 1, 0},
    {"out 0 acks S+1", Kind::kAck, 0, 1, 0, kLen, A(PipeAck::kAdvanced), 0, 1, 0},
    {"out 0 acks S (old)", Kind::kAck, 0, 0, 0, kLen, A(PipeAck::kOld), 0, 1, 0},
    {"out 1 acks S", Kind::kAck, 1, 0, 0, kLen, A(PipeAck::kAdvanced), 1, 1, 1},
    {"S now below psnStart", Kind::kReceive, 0, 0, 5, kLen, R(PipeReceive::kRecycled), 1, 1},
    {"S+9 still beyond", Kind::kReceive, 0, 9, 1, kLen, R(PipeReceive::kBeyond), 1, 1},
    {"out 1 acks S+1", Kind::kAck, 1, 1, 0, kLen, A(PipeAck::kAdvanced), 2, 1, 1},
    // S+8 and S+9 are in range now ([S+2, S+10)); S+8's entry held S, recycled.
    {"S+8 in range", Kind::kReceive, 1, 8, 3, kLen, R(PipeReceive::kAdded), 2, 1},
    {"S+9 in range", Kind::kReceive, 1, 9, 3, kLen, R(PipeReceive::kAdded), 2, 1},
    {"S+10 beyond", Kind::kReceive, 1, 10, 3, kLen, R(PipeReceive::kBeyond), 2, 1},
    {"a late copy of S (its entry holds S+8)", Kind::kReceive, 1, 0, 6, kLen,
     R(PipeReceive::kRecycled), 2, 1},
};

TEST(PipeTable, EachStepGivesItsVerdictAndMovesTheRange) {
  for (const uint32_t s : {100u, 0xFFFFFDu}) {
    SCOPED_TRACE(s);
    TestPipe t(s);
    for (const Step& st : kSteps) {
      SCOPED_TRACE(st.name);
      const uint32_t psn = at(s, st.off);
      switch (st.kind) {
        case Kind::kReceive:
          EXPECT_EQ(static_cast<int>(t.receive(st.who, psn, st.value, st.len)), st.verdict);
          break;
        case Kind::kSend:
          EXPECT_EQ(static_cast<int>(t.send_ready()), st.verdict);
          break;
        case Kind::kAck: {
          const PipeAckResult r = pipe_ack(t.p, st.who, psn);
          EXPECT_EQ(static_cast<int>(r.verdict), st.verdict);
          EXPECT_EQ(r.recycled, st.recycled);
          break;
        }
      }
      EXPECT_EQ(t.p.psn_start, at(s, st.start_after));
      EXPECT_EQ(t.p.max_psn_sent, at(s, st.max_sent_after));
    }
  }
}

// --- results -----------------------------------------------------------------------------------

TEST(Pipe, TheResultIsTheSumOfTheFanInAndIsKeptUntilEveryOutEndpointAcks) {
  TestPipe t(100);
  EXPECT_EQ(pipe_result(t.p, 100), nullptr);  // not complete
  ASSERT_EQ(t.receive(0, 100, 40), PipeReceive::kAdded);
  EXPECT_EQ(pipe_result(t.p, 100), nullptr);
  ASSERT_EQ(t.receive(1, 100, 2), PipeReceive::kCompleted);
  const uint8_t* r = pipe_result(t.p, 100);
  ASSERT_NE(r, nullptr);
  int32_t v[2];
  std::memcpy(v, r, sizeof v);
  EXPECT_EQ(v[0], 42);
  EXPECT_EQ(v[1], 42);
  ASSERT_EQ(t.send_ready(), 1u);
  ASSERT_EQ(pipe_ack(t.p, 0, 100).verdict, PipeAck::kAdvanced);
  EXPECT_NE(pipe_result(t.p, 100), nullptr);  // out 1 has not acknowledged it: still resendable
  ASSERT_EQ(pipe_ack(t.p, 1, 100).recycled, 1u);
  EXPECT_EQ(pipe_result(t.p, 100), nullptr);  // recycled
}

TEST(Pipe, FanInIsPerPacketAndAFanInOfOneStoresWhatComes) {
  TestPipe t(100, 3);
  // A Broadcast packet: only the root's child sends (fan-in 1).
  ASSERT_EQ(t.receive(1, 100, 9, kLen, 1), PipeReceive::kCompleted);
  EXPECT_EQ(t.receive(0, 100, 9, kLen, 1), PipeReceive::kInconsistent);  // not a contributor
  // The next packet, a Reduce's: three contributors.
  EXPECT_EQ(t.receive(0, 101, 1, kLen, 3), PipeReceive::kAdded);
  EXPECT_EQ(t.receive(1, 101, 1, kLen, 3), PipeReceive::kAdded);
  EXPECT_EQ(t.receive(2, 101, 1, kLen, 3), PipeReceive::kCompleted);
  EXPECT_EQ(t.send_ready(), 2u);
}

// --- the pitfall: Mode-II's recycle rule is wrong here --------------------------------------
//
// In-endpoint 0 is fast: every PSN it sends is ACKed by this hop at once, so its window runs up
// to S + N while out-endpoint 1 has not acknowledged S. Mode-II would have cleared S's entry
// when S completed (slot of p + MW); the Pipe refuses S + N until psnStart passes S, and S's
// result stays available for out-endpoint 1's retransmission.
TEST(Pipe, AFastInEndpointCannotTakeTheEntryOfAResultASlowOutEndpointLacks) {
  TestPipe t(100);
  for (uint32_t k = 0; k < 8; ++k) {
    ASSERT_EQ(t.receive(0, 100 + k, 1), PipeReceive::kAdded);
    ASSERT_EQ(t.receive(1, 100 + k, 1), PipeReceive::kCompleted);
  }
  ASSERT_EQ(t.send_ready(), 8u);
  ASSERT_EQ(pipe_ack(t.p, 0, 107).verdict, PipeAck::kAdvanced);  // out 0 has everything
  EXPECT_EQ(t.p.psn_start, 100u);                                // out 1 has nothing yet
  EXPECT_EQ(t.receive(0, 108, 99), PipeReceive::kBeyond);
  const uint8_t* r = pipe_result(t.p, 100);
  ASSERT_NE(r, nullptr);
  int32_t v;
  std::memcpy(&v, r, 4);
  EXPECT_EQ(v, 2);  // S's result, not S + N's contribution
  // Out 1's retransmission run: all 8.
  const PsnRun run = pipe_unacked(t.p, 1);
  EXPECT_EQ(run.first, 100u);
  EXPECT_EQ(run.count, 8u);
  EXPECT_EQ(pipe_unacked(t.p, 0).count, 0u);
  // Out 1 acknowledges up to 103: four entries recycled, 108..111 now in range.
  const PipeAckResult a = pipe_ack(t.p, 1, 103);
  EXPECT_EQ(a.recycled, 4u);
  EXPECT_EQ(t.p.psn_start, 104u);
  EXPECT_EQ(t.receive(0, 111, 1), PipeReceive::kAdded);
  EXPECT_EQ(t.receive(0, 112, 1), PipeReceive::kBeyond);
  EXPECT_EQ(pipe_unacked(t.p, 1).first, 104u);
  EXPECT_EQ(pipe_unacked(t.p, 1).count, 4u);
}

// --- one out-endpoint, round and round the entries
// ----------------------------------------------------

TEST(Pipe, ThreeTimesRoundTheEntriesAcrossTheWrapWithOneOutEndpoint) {
  TestPipe t(0xFFFFF0, 1);
  uint32_t psn = 0xFFFFF0;
  uint64_t recycled = 0;
  for (int k = 0; k < 3 * 8 + 5; ++k, psn = at(psn, 1)) {
    ASSERT_EQ(t.receive(0, psn, k), PipeReceive::kAdded);
    ASSERT_EQ(t.receive(1, psn, 1), PipeReceive::kCompleted);
    ASSERT_EQ(t.send_ready(), 1u);
    const PipeAckResult a = pipe_ack(t.p, 0, psn);
    ASSERT_EQ(a.verdict, PipeAck::kAdvanced);
    recycled += a.recycled;
  }
  EXPECT_EQ(recycled, 29u);  // every entry recycled once its result was acknowledged
  EXPECT_EQ(t.p.psn_start, psn);
  EXPECT_EQ(t.p.max_psn_sent, at(psn, -1));
}

TEST(Pipe, InitialisationRefusesWhatItCannotRun) {
  PipeState p;
  SlotRegion entries(4, kPmtu);
  EXPECT_FALSE(pipe_init(p, nullptr, 0, 1));
  EXPECT_FALSE(pipe_init(p, &entries, 0, 0));   // no out-endpoint
  EXPECT_FALSE(pipe_init(p, &entries, 0, 65));  // more than kMaxChildren
  SlotRegion three(4, kPmtu);
  three.nslots = 6;  // not a power of two
  EXPECT_FALSE(pipe_init(p, &three, 0, 1));
  EXPECT_TRUE(pipe_init(p, &entries, 0x1FFFFFF, 64));
  EXPECT_EQ(p.psn_start, 0xFFFFFFu);  // 24 bits
  EXPECT_EQ(p.max_psn_sent, 0xFFFFFEu);
  // A Pipe over part of a region: inside it, a power of two.
  EXPECT_TRUE(pipe_init(p, &entries, 4, 4, 0, 1));
  EXPECT_EQ(pipe_entry(p, 5), 5u);
  EXPECT_EQ(pipe_entry(p, 6), 6u);
  EXPECT_EQ(pipe_entry(p, 9), 5u);
  EXPECT_FALSE(pipe_init(p, &entries, 6, 4, 0, 1));  // past the region's 8 entries
  EXPECT_FALSE(pipe_init(p, &entries, 0, 3, 0, 1));  // not a power of two
}

// Two Pipes in one region (a switch with a parent): each uses its own entries only.
TEST(Pipe, TwoPipesShareARegionWithoutTouchingEachOther) {
  SlotRegion entries(4, kPmtu);  // 8 entries: up [0, 4), down [4, 8)
  PipeState up, down;
  ASSERT_TRUE(pipe_init(up, &entries, 0, 4, 100, 1));
  ASSERT_TRUE(pipe_init(down, &entries, 4, 4, 100, 1));
  for (uint32_t psn = 100; psn < 104; ++psn) {
    const std::vector<uint8_t> a = payload(1), b = payload(2);
    EXPECT_EQ(pipe_receive(up, psn, 0, claim(), a.data(), kLen, 1), PipeReceive::kCompleted);
    EXPECT_EQ(pipe_receive(down, psn, 0, claim(), b.data(), kLen, 1), PipeReceive::kCompleted);
  }
  for (uint32_t psn = 100; psn < 104; ++psn) {
    int32_t u = 0, d = 0;
    std::memcpy(&u, pipe_result(up, psn), 4);
    std::memcpy(&d, pipe_result(down, psn), 4);
    EXPECT_EQ(u, 1) << psn;
    EXPECT_EQ(d, 2) << psn;
  }
}

// Holes: a PSN an out-endpoint does not receive counts as acknowledged by it when it has
// acknowledged everything before; one nobody sends here is stepped over.
TEST(Pipe, HolesCountAsAcknowledgedByAnOutEndpointThatIsUpToDate) {
  const uint32_t S = 0xFFFFFE;  // across the wrap
  TestPipe t(S);                // 8 entries, out-endpoints 0 and 1
  ASSERT_EQ(t.receive(0, at(S, 0), 1, kLen, 1), PipeReceive::kCompleted);
  uint32_t psn = 0;
  ASSERT_TRUE(pipe_next_ready(t.p, psn));
  // S goes to out-endpoint 0 only; out-endpoint 1 has everything before S: it is passed.
  EXPECT_EQ(pipe_sent_to(t.p, at(S, 0), 0b01).verdict, PipeAck::kAdvanced);
  EXPECT_EQ(t.p.last_acked[1], at(S, 0));
  EXPECT_EQ(t.p.psn_start, S);  // out-endpoint 0 has not acknowledged S yet
  // S+1 nobody here sends and nobody receives: a hole for both. Out-endpoint 0 is behind
  // (it lacks S), so only out-endpoint 1 moves.
  EXPECT_TRUE(pipe_in_range(t.p, at(S, 1)));
  pipe_sent_to(t.p, at(S, 1), 0);
  EXPECT_EQ(t.p.last_acked[0], at(S, -1));
  EXPECT_EQ(t.p.last_acked[1], at(S, 1));
  // Out-endpoint 0 acknowledges S: psnStart passes S, S+1 stays (0 did not pass the hole).
  EXPECT_EQ(pipe_ack(t.p, 0, at(S, 0)).recycled, 1u);
  EXPECT_EQ(t.p.psn_start, at(S, 1));
  // The next hole, S+2, with both up to date except 0 at S: 0 is behind again (S+1).
  pipe_sent_to(t.p, at(S, 2), 0);
  EXPECT_EQ(t.p.last_acked[0], at(S, 0));
  // Its ACK of S+2 (the composition translates "everything up to my next packet") frees all.
  EXPECT_EQ(pipe_ack(t.p, 0, at(S, 2)).recycled, 2u);
  EXPECT_EQ(t.p.psn_start, at(S, 3));
  EXPECT_FALSE(pipe_in_range(t.p, at(S, 2)));
  EXPECT_FALSE(pipe_in_range(t.p, at(S, 3 + 8)));
}

// The send window: with 4 of the 8 entries allowed in flight, the fifth complete result waits
// until an ACK by every out-endpoint frees the oldest; a go-back then covers at most 4 PSNs.
TEST(Pipe, TheSendWindowHoldsResultsBackUntilEveryOutEndpointAcknowledges) {
  for (const uint32_t S : {100u, 0xFFFFFDu}) {
    TestPipe t(S);
    EXPECT_EQ(t.p.send_window, 8u);  // N after pipe_init
    pipe_limit_send_window(t.p, 4);
    EXPECT_EQ(t.p.send_window, 4u);
    for (int k = 0; k < 6; ++k) {
      ASSERT_EQ(t.receive(0, at(S, k), 1), PipeReceive::kAdded);
      ASSERT_EQ(t.receive(1, at(S, k), 2), PipeReceive::kCompleted);
    }
    EXPECT_EQ(t.send_ready(), 4u);  // S..S+3; S+4 and S+5 are complete but wait
    EXPECT_EQ(t.p.max_psn_sent, at(S, 3));
    EXPECT_FALSE(pipe_may_send(t.p, at(S, 4)));
    EXPECT_EQ(pipe_unacked(t.p, 0).count, 4u);
    // One out-endpoint's ACK is not enough: the other still lacks S.
    EXPECT_EQ(pipe_ack(t.p, 0, at(S, 1)).verdict, PipeAck::kAdvanced);
    EXPECT_EQ(t.send_ready(), 0u);
    // The second frees S and S+1: two more go on.
    EXPECT_EQ(pipe_ack(t.p, 1, at(S, 1)).recycled, 2u);
    EXPECT_TRUE(pipe_may_send(t.p, at(S, 4)));
    EXPECT_EQ(t.send_ready(), 2u);
    EXPECT_EQ(t.p.max_psn_sent, at(S, 5));
    EXPECT_EQ(pipe_unacked(t.p, 1).count, 4u);
  }
}

TEST(Pipe, TheSendWindowIsClampedToTheEntries) {
  TestPipe t(100);
  pipe_limit_send_window(t.p, 0);
  EXPECT_EQ(t.p.send_window, 1u);
  pipe_limit_send_window(t.p, 1000);
  EXPECT_EQ(t.p.send_window, 8u);
}

}  // namespace
}  // namespace epic::engine
