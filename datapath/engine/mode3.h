// Mode-III (connection augmented, docs/mode3.md) as a composition of the
// IncEngine modules: every tree hop is an RC connection of its own. The switch
// answers what comes in on an edge as an RC responder (hop_responder.h), puts it
// into a Pipe (pipe.h) and ACKs it at once (coalesced per burst); a Pipe sends
// its complete entries on in PSN order, as an RC requester (hop_requester.h)
// that retransmits on NAK and on timeout (timer_wheel.h) and frees an entry only
// when every out-endpoint has acknowledged it.
//
//   packet (packet_meta.h)      modules, in order
//   -------------------------   -----------------------------------------------------------
//   kUpload (child → up)        hop responder (in order, else ACK again / NAK once per gap)
//                               → TranslateHeader (the child's send sequence; a control
//                                 message announces a collective: locate_upload.h)
//                               → Pipe `up`: CheckDuplicate → AggregateData (a one-source
//                                 packet is copied) → ACK owed; beyond the range: RNR NAK
//                               → complete: pump (below)
//   kResult (parent → down)     hop responder → TranslateHeader (this switch's receive
//                               sequence from the parent) → Pipe `down` (copied) → pump
//   kRankAck, kChildFrontier    an out-endpoint's ACK/NAK of the children's Pipe (the root's
//                               `up`, elsewhere `down`): its sequence → group PSNs → hop
//                               requester (ACK: lastAcked, psnStart, recycle; NAK: resend)
//                               → pump
//   kParentFrontier             the parent's ACK/NAK of `up`, the same way
//   timer expiry (poll)         hop requester: resend lastAcked+1 .. maxPsnSent, back-off;
//                               past the retry limit the group fails (drop_group_failed)
//   quiet check (poll)          hop responder toward a rank: a quiet edge that owes packets,
//                               or a gap open too long, gets a nudge (sequence NAK, then RNR
//                               NAK); a quiet edge owing nothing its last ACK again
//                               (hop_responder.h, at most kMaxNudges after a take)
//   pump                        while the next PSN is in range and complete: ReplicateData
//                               to each out-endpoint that receives it, in its own sequence
//                               (translate_psn.h); a PSN no in-endpoint here sends, or no
//                               out-endpoint receives, is a hole the Pipe steps over
//
// Hot path: no allocation, no locks, no syscalls; every loop bounded (a pump handles at most
// kPumpBudget PSNs and a retransmission kResendBudget, the rest continue at the next poll or
// expiry); every drop counted by reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "datapath/engine/actions.h"
#include "datapath/engine/mode3_state.h"
#include "datapath/engine/packet_meta.h"
#include "datapath/engine/timer_wheel.h"

namespace epic::engine::mode3 {

inline constexpr uint32_t kPumpBudget = 256;
inline constexpr uint32_t kResendBudget = 256;
// The RNR timer code a hop NAKs with when its Pipe is full (vocab::aeth::kRnrTimerNs: 30 us).
inline constexpr uint8_t kPipeFullRnrCode = 3;

// A list of at most `capacity` items, reserved once: push never allocates.
template <typename T>
class PendingList {
 public:
  explicit PendingList(size_t capacity) { items_.reserve(capacity); }
  bool push(T item) {
    if (items_.size() == items_.capacity()) return false;
    items_.push_back(item);
    return true;
  }
  std::vector<T>& items() { return items_; }
  const std::vector<T>& items() const { return items_; }

 private:
  std::vector<T> items_;
};

// What Mode-III needs of the worker loop besides the frames: the clock, the timer wheel and the
// work left for the end of the burst (ACKs owed) or the next poll (pumps).
struct Loop {
  TimerWheel& wheel;
  uint64_t now_ns;
  PendingList<Mode3Edge*>& acks;
  PendingList<GroupState*>& pumps;
};

// Acts on one packet of an attached Mode-III group (m.group).
void handle(const PacketMeta& m, Actions& a, Loop& loop);
// Sends the ACKs owed (one per edge, the newest PSN) and empties the list.
void flush_acks(Actions& a, Loop& loop);
// One of an edge's timers expired (the wheel's callback): `n` is e.out.timer (retransmission)
// or e.quiet (the responder's nudge check), as n.tag says.
void on_timer(Mode3Edge& e, TimerNode& n, Actions& a, Loop& loop);
// Continues the group's Pipes after a pump ran out of budget.
void pump_again(GroupState& g, Actions& a, Loop& loop);

}  // namespace epic::engine::mode3
