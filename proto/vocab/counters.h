// Counter lists declared once: each X-macro below generates the C++ struct that
// counts, the Prometheus series incd exports (daemon/metrics.cc), the fields the
// IncAgent reports to inc-manager (agent.proto GroupCounters has a field of each
// name: tests/unit/agent/counters_test.cc checks it) and incctl's telemetry
// columns. A new counter is one line here (plus its proto field).
//
// EPIC_GROUP_COUNTERS(X): X(name, help) — per group, per switch (engine GroupStats).
#pragma once

#define EPIC_GROUP_COUNTERS(X)                                                                     \
  X(rx_frames, "Frames routed to this group (any disposition)")                                    \
  X(upward_accepted, "Contributions and one-source packets taken from children")                   \
  X(retransmissions, "Contributions a child had already sent (duplicate or done)")                 \
  X(aggregations_completed, "Packets whose aggregation completed at this switch")                  \
  X(downward_accepted, "Results taken from the parent")                                            \
  X(results_replicated, "Result frames sent to children (first time)")                             \
  X(acks_from_ranks, "ACKs and NAKs from the group's ranks")                                       \
  X(dropped, "Frames routed here but refused (before control, unknown PSN, inconsistent...)")      \
  X(result_bytes, "Payload bytes of the data results this switch completed or passed down")        \
  X(collectives_completed, "Collectives every receiver below acknowledged (Mode-II)")              \
  X(slots_tied, "Slots completed in the same burst as their previous contribution: no child last") \
  X(hop_failures, "Mode-III: a hop passed its retry limit; the group's collectives end in errors")

#include <cstdint>

namespace epic::vocab {

// Per-group telemetry of one switch (the engine's GroupStats; what the IncAgent reports):
// the fields are EPIC_GROUP_COUNTERS. Read by the worker that owns the group.
struct GroupStats {
#define EPIC_FIELD(name, help) uint64_t name = 0;
  EPIC_GROUP_COUNTERS(EPIC_FIELD)
#undef EPIC_FIELD
  // Moves whenever the group makes progress; a stall detector compares it over time.
  uint64_t progress() const {
    return upward_accepted + aggregations_completed + downward_accepted + acks_from_ranks;
  }
};

}  // namespace epic::vocab
