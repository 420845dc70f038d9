#include "datapath/engine/hop_requester.h"

#include "proto/vocab/psn.h"

namespace epic::engine {

namespace {

constexpr uint8_t kRnrRetryUnlimited = 7;

// The timeout after `h.retries` retries: the base, doubled per retry up to the policy's cap.
uint64_t backoff(const HopRequester& h, const RetryPolicy& p) {
  const uint8_t shift = h.retries < p.max_backoff_shift ? h.retries : p.max_backoff_shift;
  return p.timeout_ns << shift;
}

void progress(HopRequester& h) {
  h.retries = 0;
  h.rnr_retries = 0;
}

// Resends what the out-endpoint has not acknowledged, with the timer behind it.
HopStep resend(HopRequester& h, PipeState& pipe, int out, TimerWheel& wheel, uint64_t now_ns,
               const RetryPolicy& policy) {
  const PsnRun run = pipe_unacked(pipe, out);
  if (run.count == 0) {
    wheel.cancel(h.timer);
    return {};
  }
  wheel.arm(h.timer, now_ns, backoff(h, policy));
  return {HopOutcome::kResend, run};
}

HopStep fail(HopRequester& h, TimerWheel& wheel) {
  h.failed = true;
  h.rnr_wait = false;
  wheel.cancel(h.timer);
  return {HopOutcome::kFailed, {}};
}

// A NAK at `psn` acknowledges everything before it. kRefused when `psn` was never sent (a NAK
// may name maxPsnSent + 1 only when it is a sequence NAK: `next_ok`); kNothing for a stale one
// (at or before lastAcked: an older NAK overtaken by an ACK); kResend when it is current.
HopOutcome take_nak(HopRequester& h, PipeState& pipe, int out, uint32_t psn, bool next_ok) {
  const uint32_t limit = next_ok ? vocab::psn_add(pipe.max_psn_sent, 1) : pipe.max_psn_sent;
  if (vocab::psn_gt(psn, limit)) return HopOutcome::kRefused;
  const uint32_t acked = pipe.last_acked[static_cast<size_t>(out)];
  if (!vocab::psn_gt(psn, acked)) return HopOutcome::kNothing;
  if (pipe_ack(pipe, out, vocab::psn_add(psn, -1)).verdict == PipeAck::kAdvanced) progress(h);
  return HopOutcome::kResend;
}

}  // namespace

void hop_sent(HopRequester& h, TimerWheel& wheel, uint64_t now_ns, const RetryPolicy& policy) {
  if (!h.failed && !h.timer.armed()) wheel.arm(h.timer, now_ns, backoff(h, policy));
}

HopStep hop_acked(HopRequester& h, PipeState& pipe, int out, uint32_t psn, TimerWheel& wheel,
                  uint64_t now_ns, const RetryPolicy& policy) {
  if (h.failed) return {};
  switch (pipe_ack(pipe, out, psn).verdict) {
    case PipeAck::kBeyondSent:
      return {HopOutcome::kRefused, {}};
    case PipeAck::kOld:
      return {};
    case PipeAck::kAdvanced:
      break;
  }
  progress(h);
  h.rnr_wait = false;
  if (pipe_unacked(pipe, out).count == 0) {
    wheel.cancel(h.timer);
  } else {
    wheel.arm(h.timer, now_ns, policy.timeout_ns);
  }
  return {};
}

HopStep hop_nak_sequence(HopRequester& h, PipeState& pipe, int out, uint32_t psn, TimerWheel& wheel,
                         uint64_t now_ns, const RetryPolicy& policy) {
  if (h.failed) return {};
  const HopOutcome o = take_nak(h, pipe, out, psn, true);
  if (o != HopOutcome::kResend) return {o, {}};
  if (++h.retries > policy.retry_limit) return fail(h, wheel);
  h.rnr_wait = false;
  return resend(h, pipe, out, wheel, now_ns, policy);
}

HopStep hop_rnr_nak(HopRequester& h, PipeState& pipe, int out, uint32_t psn, uint64_t delay_ns,
                    TimerWheel& wheel, uint64_t now_ns, const RetryPolicy& policy) {
  if (h.failed) return {};
  const HopOutcome o = take_nak(h, pipe, out, psn, false);
  if (o != HopOutcome::kResend) return {o, {}};
  if (policy.rnr_retry_limit != kRnrRetryUnlimited && ++h.rnr_retries > policy.rnr_retry_limit) {
    return fail(h, wheel);
  }
  h.rnr_wait = true;
  wheel.arm(h.timer, now_ns, delay_ns);
  return {};
}

HopStep hop_timeout(HopRequester& h, PipeState& pipe, int out, TimerWheel& wheel, uint64_t now_ns,
                    const RetryPolicy& policy) {
  if (h.failed) return {};
  if (h.rnr_wait) {  // the wait the out-endpoint asked for is over: not a retry
    h.rnr_wait = false;
    return resend(h, pipe, out, wheel, now_ns, policy);
  }
  if (pipe_unacked(pipe, out).count == 0) return {};
  if (++h.retries > policy.retry_limit) return fail(h, wheel);
  return resend(h, pipe, out, wheel, now_ns, policy);
}

}  // namespace epic::engine
