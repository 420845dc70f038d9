#include "daemon/datapath_telemetry.h"

#include <algorithm>
#include <memory>

namespace epic::incd {

std::vector<agent::GroupReport> DatapathTelemetry::groups() const {
  std::vector<agent::GroupReport> out;
  auto t = std::make_unique<dpdk::WorkerTelemetry>();  // large: keep it off the stack
  for (unsigned w = 0; w < dp_.workers(); ++w) {
    if (!dp_.telemetry(w, *t)) continue;
    for (uint32_t i = 0; i < t->ngroups; ++i) {
      const dpdk::GroupTelemetry& g = t->groups[i];
      agent::GroupReport r;
      r.group_id = g.group_id;
      r.stats = g.stats;
      r.children.assign(
          g.child_timing.begin(),
          g.child_timing.begin() + std::min<size_t>(g.children, g.child_timing.size()));
      r.last_progress_age_ms =
          t->now_ns > g.last_progress_ns ? (t->now_ns - g.last_progress_ns) / 1'000'000 : 0;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace epic::incd
