// Retransmission, Mode-II's part: the ranks' NICs retransmit end to end (there
// is no switch-side timer until Mode-III), and the switch answers each kind
// of retransmission so that it recovers the loss it signals without costing
// the other ranks anything:
// - an upload every receiver has acknowledged: the sender lost our ACK — say
//   it again;
// - a duplicate contribution: re-send the result (to that child, or to the
//   receivers whose ACK the sender waits for) or the partial aggregate up, and
//   repeat the frontiers someone may be waiting on;
// - a retransmission while others lag: park the rank with RNR NAK, so waiting
//   does not spend its transport retry count.
// Hot path: no allocation.
#pragma once

#include <cstdint>

#include "datapath/engine/actions.h"
#include "datapath/engine/group.h"
#include "datapath/engine/translate_psn.h"

namespace epic::engine {

// Child `child` re-sent an upload whose every receiver has acknowledged it.
void answer_acknowledged_upload(GroupState& g, int child, Actions& a);

// Child `child` re-sent its contribution `psn` (its own sequence) to `ref`, whose slot is `i`
// (CheckDuplicate said kDuplicate).
void answer_duplicate_contribution(GroupState& g, int child, const PacketRef& ref, uint32_t i,
                                   uint32_t psn, Actions& a);

// Rank child `child` re-sent a one-source packet (it is a Broadcast or AllGather source): a
// receiver lost it. Parks the source and repeats the subtree frontier it may wait on.
void answer_one_source_retransmission(GroupState& g, int child, uint32_t psn, Actions& a);

// Parks rank child `child`, which re-sent upload `psn` while others lag: RNR NAK naming its
// oldest unacknowledged upload, answered only for the retransmission of that oldest upload and
// of the newest one it has sent (the two ends of its go-back-N burst). The RNR timer backs off
// one code per round the same upload stays parked, from kParkTimerFirst to kParkTimerLast.
// Returns whether it answered.
bool park_rank(GroupState& g, int child, uint32_t psn, Actions& a);

// RNR NAK timer codes (IBA table 45) of park_rank: 0.64 ms, up to 15.36 ms. A wait of T costs
// about 9 + T / 15 ms rounds instead of T / 0.64 ms: each round is a chance for a loss that
// spends one of the rank's transport retries, which only progress refills. The cap stays below
// the shortest local ACK timeout ranks use (libinc's soft transport: 20 ms; verbs: 67 ms), so
// a NIC never times out while it waits as told.
inline constexpr uint8_t kParkTimerFirst = 12;
inline constexpr uint8_t kParkTimerLast = 21;

}  // namespace epic::engine
