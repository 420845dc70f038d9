#include "datapath/engine/hop_responder.h"

#include "proto/vocab/psn.h"

namespace epic::engine {

HopAnswer hop_answer(const HopResponder& r, uint32_t psn) {
  if (psn == r.epsn) return HopAnswer::kTake;
  // PSN order is defined within half the space: a PSN more than 2^23 behind ePSN reads as ahead
  // of it, and is answered as a gap (the requester cannot have that many outstanding).
  if (vocab::psn_gt(r.epsn, psn)) return HopAnswer::kAckAgain;
  return r.nak_outstanding ? HopAnswer::kDropSilently : HopAnswer::kNakSequence;
}

void hop_taken(HopResponder& r) {
  r.epsn = vocab::psn_add(r.epsn, 1);
  r.nak_outstanding = false;
}

void hop_nak_sent(HopResponder& r) { r.nak_outstanding = true; }

uint32_t hop_acked_psn(const HopResponder& r) { return vocab::psn_add(r.epsn, -1); }

}  // namespace epic::engine
