#include "datapath/engine/group_health.h"

#include <algorithm>

#include "proto/vocab/psn.h"

namespace epic::engine {

GroupHealth group_health(const GroupState& g) {
  GroupHealth h;
  const SlotRegion& region = *g.slots;
  const size_t nchildren = g.config->children.size();
  const uint64_t all = nchildren >= 64 ? ~uint64_t{0} : (uint64_t{1} << nchildren) - 1;
  int32_t oldest_age = 0;
  for (const Slot& s : region.meta) {
    if (!s.used || (s.state != SlotState::kAggregating && s.state != SlotState::kSentUp)) continue;
    ++h.busy_slots;
    // Age relative to the global ACK frontier: the smallest distance is the oldest slot.
    const int32_t age = vocab::psn_diff(s.psn, g.global_frontier);
    if (h.busy_slots == 1 || age < oldest_age) {
      oldest_age = age;
      h.oldest_psn = s.psn;
      h.waiting_for_parent = s.state == SlotState::kSentUp;
      h.missing_children = s.state == SlotState::kAggregating ? (all & ~s.bitmap) : 0;
    }
  }
  return h;
}

size_t child_timings(const GroupState& g, std::span<vocab::ChildTiming> out) {
  const auto& children = g.config->children;
  const size_t n = std::min(children.size(), out.size());
  for (size_t c = 0; c < n; ++c) {
    vocab::ChildTiming t = child_timing(g.straggler, c);
    t.is_rank = children[c].is_rank;
    t.first_rank = children[c].first_rank;
    t.rank_count = children[c].rank_count;
    out[c] = t;
  }
  return n;
}

}  // namespace epic::engine
