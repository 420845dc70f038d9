// Mode-III's hop responder: the switch's end of one in-endpoint's RC connection
// (a rank's uploads, or a child switch's partial aggregates), answering as an RC
// responder must (IBA 9.7.5): a packet at the expected PSN (ePSN) is taken —
// handed to the Pipe (pipe.h) and ACKed, or RNR-NAKed without advancing ePSN when
// the Pipe has no entry for it yet; a packet behind ePSN is a retransmission of
// something taken, ACKed again with ePSN − 1; a packet ahead of ePSN means some
// were lost: one PSN-sequence-error NAK (carrying ePSN) per gap, and silence
// for the rest of it while the requester goes back.
// In Mode-III each hop ACKs what it takes at once (no reflection, unlike Mode-II's
// ack_reflect.h); the Pipe's psnStart is what keeps a fast sender from
// overrunning an entry a slow out-endpoint still needs.
// Hot path: no allocation; the state is the group's, owned by its worker.
#pragma once

#include <cstdint>

namespace epic::engine {

struct HopResponder {
  uint32_t epsn = 0;             // the next PSN this hop takes
  bool nak_outstanding = false;  // a sequence NAK was sent for the current gap
};

enum class HopAnswer : uint8_t {
  kTake,          // psn == ePSN: to the Pipe; then hop_taken() and ACK psn, or RNR NAK ePSN
  kAckAgain,      // behind ePSN (within half the PSN space): ACK ePSN − 1 again
  kNakSequence,   // ahead of ePSN, first of this gap: NAK (PSN sequence error) with ePSN
  kDropSilently,  // ahead of ePSN, the gap already NAKed: nothing to answer
};

// How the hop answers a packet at `psn` (24-bit); changes nothing.
HopAnswer hop_answer(const HopResponder& r, uint32_t psn);
// The packet at ePSN was taken by the Pipe: ePSN advances, the gap (if any) is closed.
void hop_taken(HopResponder& r);
// The sequence NAK for the current gap went out.
void hop_nak_sent(HopResponder& r);
// The PSN an ACK of everything taken so far carries (ePSN − 1).
uint32_t hop_acked_psn(const HopResponder& r);

}  // namespace epic::engine
