// Mode-III's hop requester: the switch's end of an out-endpoint's RC connection,
// for the results (or partial aggregates) a Pipe hands on (pipe.h). The Pipe
// keeps what went out and what came back (maxPsnSent, lastAcked); this keeps
// the retransmission state of one out-endpoint — its timer on the worker's wheel
// (timer_wheel.h), the retries since the last progress — and says what to resend
// when, as an RC requester must (IBA 9.7.5, go-back-N):
//   ACK           lastAcked moves; progress resets the retries and restarts the
//                 timer (cancelled when nothing is left unacknowledged).
//   sequence NAK  everything before the NAK's PSN is acknowledged; resend from
//                 it to maxPsnSent; counts as a retry.
//   RNR NAK       everything before its PSN is acknowledged; wait the RNR delay,
//                 then resend from it; counts against the RNR retries.
//   timeout       resend lastAcked + 1 .. maxPsnSent; counts as a retry; the next
//                 timeout doubles (up to 2^max_backoff_shift times the base).
// Past the retry limit the hop has failed: the timer stops and the caller ends the
// group's collective with an error report instead of retrying forever.
// PSNs are the Pipe's (group PSNs); the caller translates an out-endpoint's own.
// Hot path: no allocation. Owned by the group's worker.
#pragma once

#include <cstdint>

#include "datapath/engine/pipe.h"
#include "datapath/engine/timer_wheel.h"

namespace epic::engine {

struct RetryPolicy {
  uint64_t timeout_ns = 1'000'000;  // the local ACK timeout (the context's, from the link RTT)
  uint8_t retry_limit = 7;          // timeouts and sequence NAKs in a row, as IBA's retry_cnt
  uint8_t rnr_retry_limit = 7;      // RNR NAKs in a row; 7 = without limit, as IBA's rnr_retry
  uint8_t max_backoff_shift = 6;    // the timeout doubles per retry up to 2^6 times the base
};

struct HopRequester {
  TimerNode timer;          // armed while results are unacknowledged (or an RNR wait runs)
  uint8_t retries = 0;      // since the last progress
  uint8_t rnr_retries = 0;  // since the last progress
  bool rnr_wait = false;    // the timer is an RNR delay: on expiry resend, no retry counted
  bool failed = false;      // past a retry limit: nothing more is sent
};

enum class HopOutcome : uint8_t {
  kNothing,  // nothing to send now
  kResend,   // send `run` again, in order
  kRefused,  // the ACK/NAK acknowledges something never sent: dropped, nothing changed
  kFailed,   // a retry limit passed: end the collective with an error
};
struct HopStep {
  HopOutcome outcome = HopOutcome::kNothing;
  PsnRun run;
};

// A result went out to this out-endpoint: the timer runs if it did not.
void hop_sent(HopRequester& h, TimerWheel& wheel, uint64_t now_ns, const RetryPolicy& policy);
// An ACK up to `psn`.
HopStep hop_acked(HopRequester& h, PipeState& pipe, int out, uint32_t psn, TimerWheel& wheel,
                  uint64_t now_ns, const RetryPolicy& policy);
// A PSN-sequence-error NAK: the out-endpoint expects `psn` next.
HopStep hop_nak_sequence(HopRequester& h, PipeState& pipe, int out, uint32_t psn, TimerWheel& wheel,
                         uint64_t now_ns, const RetryPolicy& policy);
// An RNR NAK at `psn`, asking to wait `delay_ns` (vocab::kRnrTimerNs of its timer code).
HopStep hop_rnr_nak(HopRequester& h, PipeState& pipe, int out, uint32_t psn, uint64_t delay_ns,
                    TimerWheel& wheel, uint64_t now_ns, const RetryPolicy& policy);
// Its timer expired (the wheel's callback; the node is already unlinked).
HopStep hop_timeout(HopRequester& h, PipeState& pipe, int out, TimerWheel& wheel, uint64_t now_ns,
                    const RetryPolicy& policy);

}  // namespace epic::engine
