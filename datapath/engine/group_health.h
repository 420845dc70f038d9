// GroupHealth: what a group's slots say about where it is stuck — read by the
// worker that owns the group when it publishes telemetry (not per packet).
// A slot still aggregating names the children that have not contributed; a
// slot sent up and not back means the switch waits on its parent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/engine/group.h"
#include "proto/vocab/straggler.h"

namespace epic::engine {

struct GroupHealth {
  uint32_t busy_slots = 0;          // aggregating, or sent up and waiting for the result
  uint32_t oldest_psn = 0;          // group PSN of the oldest busy slot (when busy_slots > 0)
  uint64_t missing_children = 0;    // bitmap: children that have not contributed to that slot
  bool waiting_for_parent = false;  // that slot's partial went up; the result has not come back
};

GroupHealth group_health(const GroupState& g);

// The straggler figures of each child (straggler.h), with who the child is; fills out[0..n)
// for the first n = min(children, out.size()) children and returns n.
size_t child_timings(const GroupState& g, std::span<vocab::ChildTiming> out);

}  // namespace epic::engine
