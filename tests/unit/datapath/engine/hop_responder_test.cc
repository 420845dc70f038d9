// Mode-III's hop responder (hop_responder.h) as a packet table: an RC responder's answers (IBA
// 9.7.5) to a sequence of uploads at one in-endpoint, worked out by hand — take the packet at
// ePSN, ACK a retransmission again with ePSN − 1, one PSN-sequence-error NAK per gap and silence
// after it, the gap closed by the packet at ePSN; and the Pipe refusing a taken packet (RNR:
// ePSN does not move). Runs at ePSN 10 and across the 2^24 wrap.
#include "datapath/engine/hop_responder.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace epic::engine {
namespace {

uint32_t at(uint32_t s, int64_t off) { return static_cast<uint32_t>((s + off) & 0xFFFFFF); }

struct Row {
  const char* name;
  int64_t psn;  // offset from the first ePSN
  HopAnswer answer;
  bool pipe_takes;     // for kTake: the Pipe had an entry (else RNR NAK, ePSN stays)
  int64_t epsn_after;  // offset
  bool nak_after;
};

const Row kRows[] = {
    {"the first packet", 0, HopAnswer::kTake, true, 1, false},
    {"the next", 1, HopAnswer::kTake, true, 2, false},
    {"a retransmission of the first", 0, HopAnswer::kAckAgain, false, 2, false},
    {"the one just taken, again", 1, HopAnswer::kAckAgain, false, 2, false},
    {"2 lost: 3 arrives", 3, HopAnswer::kNakSequence, false, 2, true},
    {"4 in the same gap", 4, HopAnswer::kDropSilently, false, 2, true},
    {"a retransmission during the gap", 1, HopAnswer::kAckAgain, false, 2, true},
    {"2 at last, but the Pipe is full (RNR)", 2, HopAnswer::kTake, false, 2, true},
    {"2 again, the Pipe takes it", 2, HopAnswer::kTake, true, 3, false},
    {"5 lost 3 and 4 again: a new gap", 5, HopAnswer::kNakSequence, false, 3, true},
    {"3", 3, HopAnswer::kTake, true, 4, false},
    {"2^23 - 1 ahead: a gap", 4 + (1 << 23) - 1, HopAnswer::kNakSequence, false, 4, true},
    {"2^23 - 1 behind: a retransmission", 4 - (1 << 23) + 1, HopAnswer::kAckAgain, false, 4, true},
    // PSN order is defined within half the space: exactly 2^23 away reads as ahead (the gap is
    // already NAKed: silence).
    {"2^23 away", 4 - (1 << 23), HopAnswer::kDropSilently, false, 4, true},
};

TEST(HopResponderTable, AnswersAsAnRcResponder) {
  for (const uint32_t s : {10u, 0xFFFFFEu}) {
    SCOPED_TRACE(s);
    HopResponder r{};
    r.epsn = s;
    for (const Row& row : kRows) {
      SCOPED_TRACE(row.name);
      // An edge that does not nudge (interval 0): the RC responder's answers alone.
      const HopAnswer a = hop_answer(r, at(s, row.psn), 0, 0);
      EXPECT_EQ(a, row.answer);
      if (a == HopAnswer::kTake && row.pipe_takes) hop_taken(r, 0);
      if (a == HopAnswer::kTake && !row.pipe_takes) hop_nak_sent(r, 0, false);  // RNR NAK
      if (a == HopAnswer::kNakSequence) hop_nak_sent(r, 0, true);
      EXPECT_EQ(r.epsn, at(s, row.epsn_after));
      EXPECT_EQ(r.nak_outstanding, row.nak_after);
      EXPECT_EQ(hop_acked_psn(r), at(s, row.epsn_after - 1));
    }
  }
}

// The nudge (hop_responder.h), by hand, with a quiet interval of 100 us: times in us.
constexpr uint64_t kUs = 1000;
constexpr uint64_t kInterval = 100 * kUs;

TEST(HopResponderNudge, AQuietEdgeOwingNothingGetsItsLastAckAgainWithBackOffThenStops) {
  HopResponder r{};
  r.epsn = 10;
  hop_taken(r, 1000 * kUs);  // ePSN 11, heard at 1000 us
  EXPECT_EQ(hop_quiet(r, 1040 * kUs, kInterval, false).what, HopNudge::kWait);
  EXPECT_EQ(hop_quiet(r, 1040 * kUs, kInterval, false).wait_ns, 60 * kUs);
  // 1100, then 200 us after that nudge, 400, 800: four ACKs again, then nothing.
  uint64_t at = 1100 * kUs;
  for (uint64_t k = 0; k < kMaxNudges; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(hop_quiet(r, at - 1, kInterval, false).what, HopNudge::kWait);
    ASSERT_EQ(hop_quiet(r, at, kInterval, false).what, HopNudge::kAckAgain);
    hop_nudged(r, at, HopNudge::kAckAgain);
    EXPECT_FALSE(r.nak_outstanding);
    at += kInterval << (k + 1);
  }
  EXPECT_EQ(hop_quiet(r, at + 100'000 * kUs, kInterval, false).what, HopNudge::kStop);
  // A take starts over.
  hop_taken(r, at);
  EXPECT_EQ(r.nudges, 0);
  EXPECT_EQ(hop_quiet(r, at + kInterval, kInterval, false).what, HopNudge::kAckAgain);
}

TEST(HopResponderNudge, AQuietEdgeOwingPacketsGetsASequenceNakThenRnrNaks) {
  HopResponder r{};
  r.epsn = 0xFFFFFF;  // across the wrap
  hop_taken(r, 0);    // ePSN 0
  // ePSN is announced (expected) and nothing comes: the tail was lost.
  ASSERT_EQ(hop_quiet(r, kInterval, kInterval, true).what, HopNudge::kNakSequence);
  hop_nudged(r, kInterval, HopNudge::kNakSequence);
  EXPECT_TRUE(r.nak_outstanding);
  EXPECT_TRUE(r.seq_nak_sent);
  // The requester went back but the resent packet was lost too: a second sequence NAK would be
  // ignored (it already went back to that PSN), so the next nudge is an RNR NAK.
  ASSERT_EQ(hop_quiet(r, 3 * kInterval, kInterval, true).what, HopNudge::kNakRnr);
  hop_nudged(r, 3 * kInterval, HopNudge::kNakRnr);
  // A packet behind ePSN (a retransmission of something taken) is heard: the quiet restarts.
  EXPECT_EQ(hop_answer(r, 0xFFFFFF, 4 * kInterval, kInterval), HopAnswer::kAckAgain);
  hop_heard(r, 4 * kInterval);
  EXPECT_EQ(hop_quiet(r, 7 * kInterval, kInterval, true).what, HopNudge::kWait);
  EXPECT_EQ(hop_quiet(r, 8 * kInterval, kInterval, true).what, HopNudge::kNakRnr);
  // ePSN at last: taken, everything starts over.
  EXPECT_EQ(hop_answer(r, 0, 9 * kInterval, kInterval), HopAnswer::kTake);
  hop_taken(r, 9 * kInterval);
  EXPECT_FALSE(r.nak_outstanding);
  EXPECT_FALSE(r.seq_nak_sent);
  EXPECT_EQ(hop_acked_psn(r), 0u);
}

TEST(HopResponderNudge, AGapThatStaysOpenWhileLaterPacketsComeIsNudged) {
  HopResponder r{};
  r.epsn = 20;
  hop_taken(r, 0);  // ePSN 21
  // 21 lost: 22 arrives at 10 us, NAKed; 23 and 24 in the same gap, silence.
  EXPECT_EQ(hop_answer(r, 22, 10 * kUs, kInterval), HopAnswer::kNakSequence);
  hop_nak_sent(r, 10 * kUs, true);
  EXPECT_EQ(hop_answer(r, 23, 20 * kUs, kInterval), HopAnswer::kDropSilently);
  EXPECT_EQ(hop_answer(r, 24, 109 * kUs, kInterval), HopAnswer::kDropSilently);
  // The go-back's 21 was lost as well, its 22 arrives a quiet interval after the NAK: nudge,
  // with an RNR NAK (the requester ignores a second sequence NAK for 21).
  EXPECT_EQ(hop_answer(r, 22, 110 * kUs, kInterval), HopAnswer::kNudge);
  EXPECT_EQ(hop_nudge_kind(r), HopNudge::kNakRnr);
  hop_nudged(r, 110 * kUs, HopNudge::kNakRnr);
  // The next nudge waits twice as long.
  EXPECT_EQ(hop_answer(r, 23, 309 * kUs, kInterval), HopAnswer::kDropSilently);
  EXPECT_EQ(hop_answer(r, 23, 310 * kUs, kInterval), HopAnswer::kNudge);
  // Without an interval (an edge that does not nudge) it never does.
  EXPECT_EQ(hop_answer(r, 23, 100'000 * kUs, 0), HopAnswer::kDropSilently);
}

TEST(HopResponderNudge, AfterAnRnrNakForAFullPipeTheFlightIsDroppedAndTheFirstNudgeIsASequenceNak) {
  HopResponder r{};
  r.epsn = 5;
  // 5 arrives, the Pipe has no entry: RNR NAK, ePSN stays; 6 and 7 of the same flight follow.
  EXPECT_EQ(hop_answer(r, 5, 0, kInterval), HopAnswer::kTake);
  hop_nak_sent(r, 0, false);
  EXPECT_EQ(hop_answer(r, 6, 1 * kUs, kInterval), HopAnswer::kDropSilently);
  EXPECT_EQ(hop_answer(r, 7, 2 * kUs, kInterval), HopAnswer::kDropSilently);
  // The RNR NAK itself was lost and the requester keeps sending: a sequence NAK goes first.
  EXPECT_EQ(hop_answer(r, 8, 100 * kUs, kInterval), HopAnswer::kNudge);
  EXPECT_EQ(hop_nudge_kind(r), HopNudge::kNakSequence);
}

}  // namespace
}  // namespace epic::engine
