// JobTelemetry: the job-wide straggler figure of one group, combined from the local figures of
// every switch of its IncTree (docs/telemetry.md). A job runs at the pace of its slowest part,
// so the figure is the *minimum* goodput over the switches (never a mean) and the member that
// sets the pace, found by walking down from the root: at each switch, the child that completed
// most of the slots (arrived last), when it did so clearly more often than chance would have it;
// a switch child is followed down, and the pace is set by that switch's own link up where no
// child of the switch below stands out, or where the one that does explains less than half of
// the lag the switch had at its parent (p50 lags: a child 20 us late behind a link that holds
// everything 1 ms is not what the job waits for). A switch child that is last by no more than
// its link's declared round trip is the tree's shape, not a straggler: its partial has one hop
// more to come than the ranks beside it (verdict "extra hop"). The result names a rank ("rank 3"),
// a link ("link leaf1 -> spine0 (ranks 4-7)"), or nobody (last arrivals spread like noise). Pure:
// no clock, no I/O. Threading: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manager/core/inc_tree.h"
#include "manager/core/window_sizing.h"
#include "proto/vocab/straggler.h"

namespace epic::manager {

// One switch's local figures for the group, from its agent's heartbeats.
struct SwitchGroupFigures {
  uint64_t result_bytes = 0;
  uint64_t collectives_completed = 0;
  std::optional<double> rate_bytes_per_s;  // goodput over the last heartbeat interval
  std::vector<vocab::ChildTiming> children;
};

// One step of the walk down from the root.
struct PaceHop {
  SwitchId switch_id{};
  std::string child;        // the child that completed the most slots there ("" if none timed)
  double share = 0;         // of the switch's timed slots
  uint64_t slots = 0;       // timed slots at the switch
  double threshold = 0;     // the share above which that child sets the pace (fan-in dependent)
  bool pinned = false;      // share >= threshold and enough slots
  uint64_t lag_p50_ns = 0;  // that child's p50 lag at the switch
};

struct JobFigures {
  std::optional<double> rate_bytes_per_s;  // the minimum over the switches with a rate
  SwitchId rate_switch{};                  // the switch that has it
  uint64_t collectives_completed = 0;      // the root's count (every collective passes it)
  std::string slowest;  // the member that sets the pace, or "" when nobody stands out
  double pinned = 0;    // the share of the last hop of the walk
  std::string verdict;  // "straggler", "noise", "extra hop", or "too few slots timed"
  std::vector<PaceHop> path;
  std::vector<SwitchId> missing;  // tree switches without figures (no heartbeat yet)
};

// Slots a switch must have timed before its slowest child is judged.
inline constexpr uint64_t kMinTimedSlots = 16;
// The share above which one child of a switch of fan-in k sets the pace: midway between what
// chance gives (1/k) and a child that is always last (1).
double pinned_threshold(size_t fan_in);

// `speeds`: the declared links' round trips, for the "extra hop" verdict (none: not judged).
JobFigures combine_job(const IncTree& tree, const std::map<SwitchId, SwitchGroupFigures>& local,
                       const LinkSpeeds* speeds = nullptr);

}  // namespace epic::manager
