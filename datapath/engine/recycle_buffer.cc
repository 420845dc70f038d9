#include "datapath/engine/recycle_buffer.h"

#include "proto/vocab/psn.h"

namespace epic::engine {

bool recycle_completed(GroupState& g, uint32_t completed_psn) {
  const uint32_t old = vocab::psn_add(completed_psn, -int64_t{g.config->window});
  if (g.one_source_until) {
    if (vocab::psn_diff(old, *g.one_source_until) > (1 << 22)) {
      g.one_source_until.reset();  // long past: forget it before the PSN comparison wraps
    } else if (!vocab::psn_gt(old, *g.one_source_until)) {
      return false;  // a one-source packet lies between: the frontier frees these slots
    }
  }
  SlotRegion& region = *g.slots;
  Slot& s = region.meta[region.index(old)];
  if (s.used && s.state != SlotState::kEmpty && s.psn == old) {
    s.state = SlotState::kEmpty;
    return true;
  }
  return false;
}

uint32_t recycle_acknowledged(GroupState& g, uint32_t old_frontier, uint32_t frontier) {
  SlotRegion& region = *g.slots;
  const auto span = static_cast<uint32_t>(vocab::psn_diff(frontier, old_frontier));
  const uint32_t steps = span < region.nslots ? span : region.nslots;
  uint32_t freed = 0;
  for (uint32_t k = 1; k <= steps; ++k) {
    Slot& s = region.meta[region.index(old_frontier + k)];
    if (s.used && s.state != SlotState::kEmpty && !vocab::psn_gt(s.psn, frontier)) {
      s.state = SlotState::kEmpty;
      ++freed;
    }
  }
  return freed;
}

}  // namespace epic::engine
