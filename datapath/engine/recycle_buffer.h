// RecycleBuffer: frees a group's slots for the PSNs that will reuse them.
// Two rules (docs/mode2.md):
// - EPIC's: when PSN p completes here every rank has sent p, so every rank's
//   window has moved past p − MW, and slot (p + MW) mod 2·MW, which held
//   p − MW, is free — valid only while every rank sends every PSN in between
//   (AllReduce, Reduce, ReduceScatter, control messages).
// - The ACK frontier's: a slot whose PSN every receiver has acknowledged is
//   free (the rule for one-source collectives, Broadcast and AllGather).
// A recycled slot keeps its PSN (CheckDuplicate uses it to refuse zombies).
// Hot path: no allocation; at most 2·MW slots touched per frontier advance.
#pragma once

#include <cstdint>

#include "datapath/engine/group.h"

namespace epic::engine {

// EPIC's rule after `completed_psn` completed here; true when it freed a slot.
bool recycle_completed(GroupState& g, uint32_t completed_psn);

// The frontier's rule after the group's ACK frontier moved from `old_frontier` to `frontier`;
// the number of slots freed.
uint32_t recycle_acknowledged(GroupState& g, uint32_t old_frontier, uint32_t frontier);

}  // namespace epic::engine
