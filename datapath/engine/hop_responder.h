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
//
// The nudge (docs/mode3.md, "Tail losses"). An unmodified RC requester recovers
// by itself only from a loss that a later packet reveals: a lost last packet, a
// lost NAK, a lost retransmission of ePSN (the requester ignores a second NAK for
// the PSN it already went back to, IBA and rdma_rxe alike, until it makes
// progress) or a lost last ACK leave it waiting for its own local ACK timeout —
// milliseconds to seconds. The responder knows sooner: when a gap stays open for
// `interval` while later packets keep coming, or the edge stays quiet for
// `interval` although ePSN belongs to an announced collective, it nudges the
// requester: a sequence NAK with ePSN if none went out since the last take, else
// an RNR NAK with ePSN (which a requester always obeys: it resends from ePSN after
// the short RNR delay, without spending a retry). A quiet edge with nothing
// expected gets its last ACK again. At most kMaxNudges nudges after the last
// take, the quiet interval doubling after each: a requester that does not answer
// is left to its own timeout.
// Hot path: no allocation; the state is the group's, owned by its worker.
#pragma once

#include <cstdint>

namespace epic::engine {

struct HopResponder {
  uint32_t epsn = 0;             // the next PSN this hop takes
  bool nak_outstanding = false;  // a NAK (sequence or RNR) went out for the current gap
  bool seq_nak_sent = false;     // a sequence NAK went out since the last take
  uint8_t nudges = 0;            // nudges since the last take
  uint64_t heard_ns = 0;         // the last packet from the requester
  uint64_t nak_ns = 0;           // the last NAK or nudge
};

// A nudge may go out at most this many times after a take (quiet intervals 1, 2, 4, 8 x).
inline constexpr uint8_t kMaxNudges = 4;
// The RNR timer code of a nudge's RNR NAK (vocab::aeth::kRnrTimerNs: 10 us).
inline constexpr uint8_t kNudgeRnrCode = 1;

enum class HopAnswer : uint8_t {
  kTake,          // psn == ePSN: to the Pipe; then hop_taken() and ACK psn, or RNR NAK ePSN
  kAckAgain,      // behind ePSN (within half the PSN space): ACK ePSN − 1 again
  kNakSequence,   // ahead of ePSN, first of this gap: NAK (PSN sequence error) with ePSN
  kDropSilently,  // ahead of ePSN, the gap already NAKed: nothing to answer
  kNudge,         // ahead of ePSN, the gap NAKed a quiet interval ago or more: nudge
                  // (hop_nudge_kind), then hop_nudged()
};

// How the hop answers a packet at `psn` (24-bit) arriving at `now_ns`; changes nothing.
// `interval_ns` 0 (an edge that does not nudge): never kNudge.
HopAnswer hop_answer(const HopResponder& r, uint32_t psn, uint64_t now_ns, uint64_t interval_ns);
// A packet arrived from the requester (any PSN).
void hop_heard(HopResponder& r, uint64_t now_ns);
// The packet at ePSN was taken by the Pipe: ePSN advances, the gap (if any) is closed.
void hop_taken(HopResponder& r, uint64_t now_ns);
// A NAK for the current gap went out: a sequence NAK, or an RNR NAK (the Pipe was full).
void hop_nak_sent(HopResponder& r, uint64_t now_ns, bool sequence);
// The PSN an ACK of everything taken so far carries (ePSN − 1).
uint32_t hop_acked_psn(const HopResponder& r);

enum class HopNudge : uint8_t {
  kWait,         // not quiet long enough: look again at `wait_ns` from now
  kStop,         // kMaxNudges sent since the last take: nothing more until the next one
  kNakSequence,  // send a sequence NAK with ePSN
  kNakRnr,       // send an RNR NAK with ePSN (timer code kNudgeRnrCode)
  kAckAgain,     // send the last ACK (ePSN − 1) again
};
struct HopNudgeStep {
  HopNudge what = HopNudge::kWait;
  uint64_t wait_ns = 0;  // kWait: how long until the edge has been quiet long enough
};

// The NAK a nudge sends now: a sequence NAK while none went out since the last take, else RNR.
HopNudge hop_nudge_kind(const HopResponder& r);
// The edge's quiet check at `now_ns` (its timer): whether, and how, to nudge the requester.
// `expected`: ePSN is a packet of a collective announced here. Changes nothing; after sending
// a nudge the caller calls hop_nudged(), and looks again after hop_quiet_interval().
HopNudgeStep hop_quiet(const HopResponder& r, uint64_t now_ns, uint64_t interval_ns, bool expected);
// A nudge went out at `now_ns` (`what`: kNakSequence, kNakRnr or kAckAgain).
void hop_nudged(HopResponder& r, uint64_t now_ns, HopNudge what);
// The quiet interval after `r.nudges` nudges: interval_ns doubled per nudge.
uint64_t hop_quiet_interval(const HopResponder& r, uint64_t interval_ns);

}  // namespace epic::engine
