#include "datapath/engine/hop_responder.h"

#include "proto/vocab/psn.h"

namespace epic::engine {

uint64_t hop_quiet_interval(const HopResponder& r, uint64_t interval_ns) {
  return interval_ns << r.nudges;
}

HopAnswer hop_answer(const HopResponder& r, uint32_t psn, uint64_t now_ns, uint64_t interval_ns) {
  if (psn == r.epsn) return HopAnswer::kTake;
  // PSN order is defined within half the space: a PSN more than 2^23 behind ePSN reads as ahead
  // of it, and is answered as a gap (the requester cannot have that many outstanding).
  if (vocab::psn_gt(r.epsn, psn)) return HopAnswer::kAckAgain;
  if (!r.nak_outstanding) return HopAnswer::kNakSequence;
  if (interval_ns != 0 && r.nudges < kMaxNudges &&
      now_ns - r.nak_ns >= hop_quiet_interval(r, interval_ns)) {
    return HopAnswer::kNudge;
  }
  return HopAnswer::kDropSilently;
}

void hop_heard(HopResponder& r, uint64_t now_ns) { r.heard_ns = now_ns; }

void hop_taken(HopResponder& r, uint64_t now_ns) {
  r.epsn = vocab::psn_add(r.epsn, 1);
  r.nak_outstanding = false;
  r.seq_nak_sent = false;
  r.nudges = 0;
  r.heard_ns = now_ns;
}

void hop_nak_sent(HopResponder& r, uint64_t now_ns, bool sequence) {
  r.nak_outstanding = true;
  r.nak_ns = now_ns;
  if (sequence) r.seq_nak_sent = true;
}

uint32_t hop_acked_psn(const HopResponder& r) { return vocab::psn_add(r.epsn, -1); }

HopNudge hop_nudge_kind(const HopResponder& r) {
  return r.seq_nak_sent ? HopNudge::kNakRnr : HopNudge::kNakSequence;
}

HopNudgeStep hop_quiet(const HopResponder& r, uint64_t now_ns, uint64_t interval_ns,
                       bool expected) {
  if (r.nudges >= kMaxNudges) return {HopNudge::kStop, 0};
  const uint64_t since = r.heard_ns > r.nak_ns ? r.heard_ns : r.nak_ns;
  const uint64_t due = since + hop_quiet_interval(r, interval_ns);
  if (now_ns < due) return {HopNudge::kWait, due - now_ns};
  if (expected || r.nak_outstanding) return {hop_nudge_kind(r), 0};
  return {HopNudge::kAckAgain, 0};
}

void hop_nudged(HopResponder& r, uint64_t now_ns, HopNudge what) {
  ++r.nudges;
  r.nak_ns = now_ns;
  if (what == HopNudge::kNakSequence) {
    r.nak_outstanding = true;
    r.seq_nak_sent = true;
  } else if (what == HopNudge::kNakRnr) {
    r.nak_outstanding = true;
  }
}

}  // namespace epic::engine
