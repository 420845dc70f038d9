#include "daemon/group_status.h"

#include <cstdio>

#include "proto/vocab/straggler.h"

namespace epic::incd {

GroupStatus group_status(const dpdk::GroupTelemetry& t, unsigned worker, uint64_t worker_now_ns,
                         uint64_t stall_after_ns, const engine::GroupConfig* config) {
  GroupStatus s;
  s.group_id = t.group_id;
  s.worker = worker;
  s.t = &t;
  const uint64_t idle = worker_now_ns > t.last_progress_ns ? worker_now_ns - t.last_progress_ns : 0;
  s.seconds_since_progress = static_cast<double>(idle) / 1e9;
  s.stalled = t.health.busy_slots > 0 && idle >= stall_after_ns;
  for (int c = 0; c < t.children && c < 64; ++c) {
    if (!((t.health.missing_children >> c) & 1)) continue;
    s.missing_children.push_back(c);
    if (config != nullptr && static_cast<size_t>(c) < config->children.size()) {
      const engine::ChildLink& l = config->children[static_cast<size_t>(c)];
      s.missing.push_back(
          vocab::child_name(l.is_rank, static_cast<uint32_t>(c), l.first_rank, l.rank_count));
    } else {
      s.missing.push_back("child " + std::to_string(c));
    }
  }
  return s;
}

std::string describe(const GroupStatus& s) {
  char head[160];
  std::snprintf(head, sizeof head, "group %u %s %.1f s: %u busy slot(s), oldest psn 0x%06x ",
                s.group_id, s.stalled ? "stalled" : "idle", s.seconds_since_progress,
                s.t->health.busy_slots, s.t->health.oldest_psn);
  std::string out = head;
  if (s.t->health.waiting_for_parent) return out + "waits for the parent's result";
  out += "waits for";
  for (size_t i = 0; i < s.missing.size(); ++i) out += (i ? ", " : " ") + s.missing[i];
  return out;
}

}  // namespace epic::incd
