// Straggler telemetry's shared values (docs/telemetry.md): what one switch says about each
// child edge of a group — how often that child's contribution was the one that completed a
// slot (it arrived last) and how far behind the slot's first contribution its contributions
// arrive (lag). The engine measures them (datapath/engine/straggler.h), incd exports them, the
// IncAgent reports them and inc-manager combines the switches of a tree into the job-wide
// figure (manager/core/job_telemetry.h).
// Pure C++. Threading: plain values.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace epic::vocab {

struct ChildTiming {
  uint16_t child = 0;  // the child's index in the group's context at this switch
  bool is_rank = false;
  uint16_t first_rank = 0;  // ranks below the child: [first_rank, first_rank + rank_count)
  uint16_t rank_count = 1;
  uint64_t last = 0;         // slots whose aggregation this child's contribution completed
  uint64_t lag_samples = 0;  // contributions the lag quantiles cover (the recent ones)
  // Time from a slot's first contribution to this child's, p50 and p99: the upper bound of the
  // log2 bucket the quantile falls in (0 when nothing was timed).
  uint64_t lag_p50_ns = 0;
  uint64_t lag_p99_ns = 0;
  friend bool operator==(const ChildTiming&, const ChildTiming&) = default;
};

// How a child is named in logs, metrics and incctl: "rank 3" for a rank child, "child 1 (ranks
// 4-7)" for a lower switch.
std::string child_name(bool is_rank, uint32_t child, uint32_t first_rank, uint32_t rank_count);
inline std::string child_name(const ChildTiming& t) {
  return child_name(t.is_rank, t.child, t.first_rank, t.rank_count);
}

// The slowest child of one switch: the one that completed the most slots, and the share of the
// timed slots it completed ("pinned": near 1 a stuck straggler or a bad path, near 1/fan-in
// noise). Ties go to the lower index. `share` is 0 and `child` is -1 when nothing was timed.
struct SlowestChild {
  int child = -1;
  double share = 0;
  uint64_t slots = 0;  // timed slots (the sum of every child's `last`)
};
SlowestChild slowest_child(std::span<const ChildTiming> children);

}  // namespace epic::vocab
