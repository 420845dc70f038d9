// GroupStatus: a group's health as the control side sees it, from the owning
// worker's telemetry — busy slots, the children (and ranks) the oldest slot
// still waits for, seconds without progress, and whether that makes the group
// "stalled" (work in its slots and no progress for stall_after). Used by the
// /metrics endpoint and by the log line incd writes when a group stalls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datapath/dpdk/telemetry.h"
#include "datapath/engine/group.h"

namespace epic::incd {

struct GroupStatus {
  uint32_t group_id = 0;
  unsigned worker = 0;
  const dpdk::GroupTelemetry* t = nullptr;
  double seconds_since_progress = 0;
  bool stalled = false;
  std::vector<int> missing_children;  // child indices the oldest busy slot waits for
  std::vector<std::string> missing;   // the same, as "rank 3" or "child 1 (ranks 4-7)"
};

// `config` gives the children's rank ranges (for naming); nullptr names child indices only.
GroupStatus group_status(const dpdk::GroupTelemetry& t, unsigned worker, uint64_t worker_now_ns,
                         uint64_t stall_after_ns, const engine::GroupConfig* config);

// One line for the log: "group 7 stalled 2.3 s: slot psn 0x000123 waits for rank 2, rank 5".
std::string describe(const GroupStatus& s);

}  // namespace epic::incd
