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
    HopResponder r{s, false};
    for (const Row& row : kRows) {
      SCOPED_TRACE(row.name);
      const HopAnswer a = hop_answer(r, at(s, row.psn));
      EXPECT_EQ(a, row.answer);
      if (a == HopAnswer::kTake && row.pipe_takes) hop_taken(r);
      if (a == HopAnswer::kNakSequence) hop_nak_sent(r);
      EXPECT_EQ(r.epsn, at(s, row.epsn_after));
      EXPECT_EQ(r.nak_outstanding, row.nak_after);
      EXPECT_EQ(hop_acked_psn(r), at(s, row.epsn_after - 1));
    }
  }
}

}  // namespace
}  // namespace epic::engine
