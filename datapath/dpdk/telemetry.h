// Worker telemetry: what each polled worker publishes for the control side
// (metrics, stall detection) — its ports, pipeline, engine, fault stages and
// groups. A worker copies its live counters into a TelemetrySlot every
// publish period under a sequence lock; readers retry on a torn read. The
// packet path never waits on a reader and never takes a lock.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "datapath/engine/counters.h"
#include "datapath/engine/edge_binding.h"
#include "datapath/engine/group.h"
#include "datapath/engine/group_health.h"
#include "datapath/switching/egress.h"
#include "datapath/switching/fault_stage.h"
#include "datapath/switching/l2_table.h"
#include "datapath/switching/switch_pipeline.h"
#include "proto/vocab/straggler.h"

namespace epic::dpdk {

inline constexpr size_t kMaxPorts = 32;
static_assert(kMaxPorts <= engine::kMaxIngressPorts, "the engine counts binding drops per port");
inline constexpr size_t kMaxGroupsPerWorker = 128;

struct PortTelemetry {
  uint64_t rx_frames = 0, rx_bytes = 0;
  uint64_t tx_frames = 0, tx_bytes = 0;
  uint64_t tx_dropped = 0;  // the port refused them after retries
  switching::FaultCounters rx_faults, tx_faults;
  uint64_t edge_binding_drops = 0;  // frames to a group endpoint not from its member (engine)
  uint32_t nclasses = 0;            // traffic classes of its egress; 0: none (one FIFO)
  std::array<switching::EgressClassCounters, switching::kMaxClasses> classes{};
};

struct GroupTelemetry {
  uint32_t group_id = 0;
  uint16_t children = 0;
  engine::GroupStats stats;
  engine::GroupHealth health;
  uint64_t last_progress_ns = 0;  // worker clock (ns since the datapath started)
  std::array<vocab::ChildTiming, engine::kMaxChildren> child_timing{};  // [0, children)
};

struct WorkerTelemetry {
  uint64_t now_ns = 0;  // when published
  uint64_t loops = 0, busy_loops = 0;
  uint64_t snapshot_version = 0;
  uint64_t handoff_in = 0, handoff_dropped = 0;  // ring from other workers; ring full
  uint64_t engine_frames_out = 0;
  uint64_t mbuf_alloc_failed = 0;
  uint64_t multi_segment_dropped = 0;
  uint64_t contexts_refused = 0;  // snapshot groups the engine would not attach (a bug: counted)
  switching::PipelineCounters pipeline;
  engine::EngineCounters engine;
  switching::L2Counters l2;
  uint64_t l2_entries = 0;
  std::array<PortTelemetry, kMaxPorts> ports{};
  uint32_t ngroups = 0;
  std::array<GroupTelemetry, kMaxGroupsPerWorker> groups{};
};

// Copied with memcpy, in part (TelemetrySlot::publish).
static_assert(std::is_standard_layout_v<WorkerTelemetry> &&
              std::is_trivially_copyable_v<WorkerTelemetry>);

class TelemetrySlot {
 public:
  // Copies only the groups in use (each carries its children's straggler figures: the whole
  // table is ~330 KB, and the worker publishes from its packet loop).
  void publish(const WorkerTelemetry& t) {
    const size_t used = offsetof(WorkerTelemetry, groups) +
                        std::min<size_t>(t.ngroups, kMaxGroupsPerWorker) * sizeof(GroupTelemetry);
    const uint64_t s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(static_cast<void*>(&data_), &t, used);
    seq_.store(s + 2, std::memory_order_release);
  }
  // False if nothing was published yet. Groups from ngroups on are stale: ignore them.
  bool read(WorkerTelemetry& out) const {
    for (;;) {
      const uint64_t s1 = seq_.load(std::memory_order_acquire);
      if (s1 == 0) return false;
      if (s1 & 1) continue;
      std::memcpy(static_cast<void*>(&out), &data_, sizeof out);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (seq_.load(std::memory_order_relaxed) == s1) return true;
    }
  }

 private:
  std::atomic<uint64_t> seq_{0};
  WorkerTelemetry data_;
};

}  // namespace epic::dpdk
