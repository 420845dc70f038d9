// Snapshot: the immutable datapath configuration the control side publishes
// to the workers — the pipeline's addresses and routes, and the groups each
// worker must have installed, with the slot memory granted to each (EPIC's
// indirection: a group's state lives in its SlotRegion, owned here, used by
// exactly one worker). Published with RCU (DPDK's rte_rcu_qsbr): a worker
// picks up a new snapshot at the top of its loop and reports a quiescent state
// at the bottom; the publisher frees the previous snapshot only after every
// worker has passed a quiescent state. No locks on the packet path.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "datapath/engine/group.h"
#include "datapath/engine/group_instance.h"
#include "datapath/engine/slot.h"
#include "datapath/switching/switch_pipeline.h"

struct rte_rcu_qsbr;

namespace epic::dpdk {

struct GroupEntry {
  engine::GroupConfig config;
  uint16_t owner = 0;                         // worker
  std::shared_ptr<engine::SlotRegion> slots;  // 2*MW slots of config.pmtu
  // The group's engine context, prepared (validated, allocated) by the control side; the owning
  // worker only attaches it. Kept across snapshots while the group's configuration stays.
  std::shared_ptr<engine::GroupInstance> instance;
};

struct Snapshot {
  uint64_t version = 0;
  switching::PipelineConfig pipeline;
  std::vector<GroupEntry> groups;
};

class SnapshotPublisher {
 public:
  explicit SnapshotPublisher(unsigned workers);
  ~SnapshotPublisher();
  SnapshotPublisher(const SnapshotPublisher&) = delete;
  SnapshotPublisher& operator=(const SnapshotPublisher&) = delete;

  // Control side: makes `s` current (its version is set here) and, once every online worker
  // has passed a quiescent state, frees the previous one. Blocks for that grace period.
  void publish(std::unique_ptr<Snapshot> s);
  const Snapshot* current() const { return current_.load(std::memory_order_acquire); }

  // Worker side.
  void online(unsigned worker);
  void offline(unsigned worker);
  void quiescent(unsigned worker);

 private:
  rte_rcu_qsbr* qsbr_ = nullptr;
  std::atomic<const Snapshot*> current_{nullptr};
  uint64_t next_version_ = 1;
};

}  // namespace epic::dpdk
