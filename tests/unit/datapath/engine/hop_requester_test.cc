// Mode-III's hop requester (hop_requester.h): one out-endpoint of a Pipe (N = 8, two
// out-endpoints, first PSN 100) to which results 100..103 were sent at t = 0, with a 1000 ns
// timeout, retry limit 2 and a wheel of 1 ns ticks (so a timer's due tick is its deadline).
// Each step — an ACK, a sequence NAK, an RNR NAK, a timeout — is checked for what it tells the
// caller to resend, the retries, the timer's deadline and lastAcked, all worked out by hand from
// the RC requester rules (IBA 9.7.5, go-back-N): progress resets the retries and restarts the
// timer; a NAK acknowledges everything before its PSN; a stale NAK changes nothing; a NAK or ACK
// for something never sent is refused; the timeout doubles per retry; past the limit the hop
// fails and stays silent.
#include "datapath/engine/hop_requester.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "datapath/wire/opcode.h"

namespace epic::engine {
namespace {

RetryPolicy policy(uint8_t retry_limit = 2, uint8_t rnr_limit = 2) {
  RetryPolicy p;
  p.timeout_ns = 1000;
  p.retry_limit = retry_limit;
  p.rnr_retry_limit = rnr_limit;
  p.max_backoff_shift = 6;
  return p;
}

struct Hop {
  SlotRegion entries{4, 256};
  PipeState pipe;
  TimerWheel wheel{64, 1, 0};
  HopRequester h;
  RetryPolicy pol;
  explicit Hop(RetryPolicy p = policy()) : pol(p) {
    EXPECT_TRUE(pipe_init(pipe, &entries, 100, 2));
    SlotClaim c;
    c.opcode = wire::op::kSendOnly;
    c.payload_len = 4;
    const uint8_t one[4] = {1, 0, 0, 0};
    for (uint32_t psn = 100; psn < 104; ++psn) {
      EXPECT_EQ(pipe_receive(pipe, psn, 0, c, one, 4, 1), PipeReceive::kCompleted);
      uint32_t next = 0;
      EXPECT_TRUE(pipe_next_ready(pipe, next));
      pipe_sent(pipe, next);
      hop_sent(h, wheel, 0, pol);
    }
  }
  uint32_t last_acked() const { return pipe.last_acked[0]; }
};

void expect_run(const HopStep& s, uint32_t first, uint32_t count) {
  ASSERT_EQ(s.outcome, HopOutcome::kResend);
  EXPECT_EQ(s.run.first, first);
  EXPECT_EQ(s.run.count, count);
}

TEST(HopRequester, TimeoutsNaksAndAcksDriveGoBackN) {
  Hop t;
  ASSERT_TRUE(t.h.timer.armed());
  EXPECT_EQ(t.h.timer.due, 1000u);  // armed once, by the first send
  // Timeout: resend 100..103; retry 1; the next timeout doubles.
  expect_run(hop_timeout(t.h, t.pipe, 0, t.wheel, 1000, t.pol), 100, 4);
  EXPECT_EQ(t.h.retries, 1);
  EXPECT_EQ(t.h.timer.due, 1000u + 2000);
  // ACK 101: progress; retries reset; the timer restarts at the base timeout.
  EXPECT_EQ(hop_acked(t.h, t.pipe, 0, 101, t.wheel, 1500, t.pol).outcome, HopOutcome::kNothing);
  EXPECT_EQ(t.h.retries, 0);
  EXPECT_EQ(t.last_acked(), 101u);
  EXPECT_EQ(t.h.timer.due, 2500u);
  // The same ACK again: nothing.
  EXPECT_EQ(hop_acked(t.h, t.pipe, 0, 101, t.wheel, 1600, t.pol).outcome, HopOutcome::kNothing);
  EXPECT_EQ(t.h.timer.due, 2500u);
  // Sequence NAK expecting 103: 102 acknowledged, resend 103, retry 1, 2000 ns.
  expect_run(hop_nak_sequence(t.h, t.pipe, 0, 103, t.wheel, 1700, t.pol), 103, 1);
  EXPECT_EQ(t.last_acked(), 102u);
  EXPECT_EQ(t.h.retries, 1);
  EXPECT_EQ(t.h.timer.due, 1700u + 2000);
  // Refused: a NAK expecting 105 (104 = maxPsnSent + 1 is the most a NAK may name), an ACK of
  // 104. Nothing changes.
  EXPECT_EQ(hop_nak_sequence(t.h, t.pipe, 0, 105, t.wheel, 1800, t.pol).outcome,
            HopOutcome::kRefused);
  EXPECT_EQ(hop_acked(t.h, t.pipe, 0, 104, t.wheel, 1800, t.pol).outcome, HopOutcome::kRefused);
  // A stale NAK (expecting 101, already acknowledged): nothing.
  EXPECT_EQ(hop_nak_sequence(t.h, t.pipe, 0, 101, t.wheel, 1800, t.pol).outcome,
            HopOutcome::kNothing);
  EXPECT_EQ(t.h.retries, 1);
  EXPECT_EQ(t.last_acked(), 102u);
  EXPECT_EQ(t.h.timer.due, 3700u);
  // Timeout: retry 2 (the limit), 4000 ns.
  expect_run(hop_timeout(t.h, t.pipe, 0, t.wheel, 3700, t.pol), 103, 1);
  EXPECT_EQ(t.h.retries, 2);
  EXPECT_EQ(t.h.timer.due, 3700u + 4000);
  // Timeout: retry 3 > 2: failed, the timer stops, and nothing more happens.
  EXPECT_EQ(hop_timeout(t.h, t.pipe, 0, t.wheel, 7700, t.pol).outcome, HopOutcome::kFailed);
  EXPECT_TRUE(t.h.failed);
  EXPECT_FALSE(t.h.timer.armed());
  EXPECT_EQ(hop_acked(t.h, t.pipe, 0, 103, t.wheel, 7800, t.pol).outcome, HopOutcome::kNothing);
  EXPECT_EQ(t.last_acked(), 102u);
  hop_sent(t.h, t.wheel, 7900, t.pol);
  EXPECT_FALSE(t.h.timer.armed());
}

TEST(HopRequester, TheLastAckStopsTheTimer) {
  Hop t;
  EXPECT_EQ(hop_acked(t.h, t.pipe, 0, 103, t.wheel, 10, t.pol).outcome, HopOutcome::kNothing);
  EXPECT_FALSE(t.h.timer.armed());
  EXPECT_EQ(t.wheel.armed(), 0u);
  // A timer that fires anyway (a callback raced with the ACK): nothing to resend, no retry.
  EXPECT_EQ(hop_timeout(t.h, t.pipe, 0, t.wheel, 1000, t.pol).outcome, HopOutcome::kNothing);
  EXPECT_EQ(t.h.retries, 0);
  // A sequence NAK naming maxPsnSent + 1 acknowledges everything and resends nothing.
  Hop u;
  EXPECT_EQ(hop_nak_sequence(u.h, u.pipe, 0, 104, u.wheel, 10, u.pol).outcome,
            HopOutcome::kNothing);
  EXPECT_EQ(u.last_acked(), 103u);
  EXPECT_FALSE(u.h.timer.armed());
}

TEST(HopRequester, RnrNakWaitsItsDelayThenResendsWithoutCountingARetry) {
  Hop t;
  // RNR at 102 asking for 5000 ns: 101 acknowledged; the timer is the RNR delay.
  EXPECT_EQ(hop_rnr_nak(t.h, t.pipe, 0, 102, 5000, t.wheel, 100, t.pol).outcome,
            HopOutcome::kNothing);
  EXPECT_EQ(t.last_acked(), 101u);
  EXPECT_TRUE(t.h.rnr_wait);
  EXPECT_EQ(t.h.rnr_retries, 1);
  EXPECT_EQ(t.h.timer.due, 5100u);
  // The delay ends: resend 102..103, no retry counted; the timer is a timeout again.
  expect_run(hop_timeout(t.h, t.pipe, 0, t.wheel, 5100, t.pol), 102, 2);
  EXPECT_FALSE(t.h.rnr_wait);
  EXPECT_EQ(t.h.retries, 0);
  EXPECT_EQ(t.h.timer.due, 6100u);
  // Two more RNRs without progress: the second passes the limit of 2 in a row.
  EXPECT_EQ(hop_rnr_nak(t.h, t.pipe, 0, 102, 5000, t.wheel, 6000, t.pol).outcome,
            HopOutcome::kNothing);
  EXPECT_EQ(t.h.rnr_retries, 2);
  EXPECT_EQ(hop_rnr_nak(t.h, t.pipe, 0, 102, 5000, t.wheel, 6100, t.pol).outcome,
            HopOutcome::kFailed);
  EXPECT_FALSE(t.h.timer.armed());
  // An RNR NAK for something never sent (104) is refused.
  Hop u;
  EXPECT_EQ(hop_rnr_nak(u.h, u.pipe, 0, 104, 5000, u.wheel, 0, u.pol).outcome,
            HopOutcome::kRefused);
}

TEST(HopRequester, RnrRetryLimitSevenMeansWithoutLimit) {
  Hop t(policy(2, 7));
  for (int k = 0; k < 100; ++k) {
    ASSERT_EQ(hop_rnr_nak(t.h, t.pipe, 0, 100, 10, t.wheel, 0, t.pol).outcome, HopOutcome::kNothing)
        << k;
  }
  EXPECT_FALSE(t.h.failed);
}

TEST(HopRequester, TheBackOffStopsDoublingAtItsCap) {
  RetryPolicy p = policy(20);
  p.max_backoff_shift = 3;
  Hop t(p);
  uint64_t now = 1000;
  std::vector<uint64_t> timeouts;
  for (int k = 0; k < 6; ++k) {
    expect_run(hop_timeout(t.h, t.pipe, 0, t.wheel, now, t.pol), 100, 4);
    timeouts.push_back(t.h.timer.due - now);
    now = t.h.timer.due;
  }
  EXPECT_EQ(timeouts, (std::vector<uint64_t>{2000, 4000, 8000, 8000, 8000, 8000}));
}

}  // namespace
}  // namespace epic::engine
