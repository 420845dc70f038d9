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

std::vector<agent::PortReport> DatapathTelemetry::ports() const {
  std::vector<agent::PortReport> out;
  for (const dpdk::PortInfo& p : dp_.ports()) out.push_back({p.name});
  auto t = std::make_unique<dpdk::WorkerTelemetry>();  // large: keep it off the stack
  for (unsigned w = 0; w < dp_.workers(); ++w) {
    if (!dp_.telemetry(w, *t)) continue;
    for (size_t p = 0; p < out.size() && p < dpdk::kMaxPorts; ++p) {
      out[p].tx_bytes += t->ports[p].tx_bytes;
      out[p].tx_frames += t->ports[p].tx_frames;
      out[p].tx_dropped += t->ports[p].tx_dropped;
      const dpdk::PortTelemetry& pt = t->ports[p];
      for (size_t c = 0; c < pt.nclasses && c < pt.classes.size(); ++c) {
        out[p].queue_bytes += pt.classes[c].queue_bytes;
      }
    }
  }
  return out;
}

}  // namespace epic::incd
