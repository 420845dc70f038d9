// Worker: one polled lcore of incd's datapath. Per loop iteration:
//
//   pick up a new Snapshot (install / remove its groups in this worker's engine)
//   for every port: RX burst on this worker's queue -> RX fault stage ->
//     SwitchPipeline decision per frame: L2 forward / flood (mbuf refcount),
//     ARP reply, engine (batched), hand-off to the owning worker (ring), drop
//   drain the hand-off ring into the engine batch
//   Mode2Engine::process(batch) -> new frames built in fresh mbufs (EngineSink)
//   [egress: traffic classes, line rate, CE past the marking depth] -> TX fault stage ->
//   TX burst on this worker's queue of every port
//   RCU quiescent state; every publish period, telemetry
//
// Everything it touches is its own (engine, L2 table, counters, fault stages)
// except the rings, which are lock-free MP/SC. No allocation, locks, syscalls
// or logging on this path; when idle_sleep_us > 0 an idle worker sleeps that
// long between empty polls (a syscall only when there is no traffic).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "datapath/dpdk/snapshot.h"
#include "datapath/dpdk/telemetry.h"
#include "datapath/engine/mode2_engine.h"
#include "datapath/switching/egress.h"
#include "datapath/switching/fault_stage.h"

struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

namespace epic::dpdk {

struct MbufOps {
  rte_mempool* pool = nullptr;
  bool clone(rte_mbuf* in, rte_mbuf** out) const;
  void free(rte_mbuf* m) const;
  bool mark_ce(rte_mbuf* m) const;  // wire::mark_ce on the frame (a single segment)
};
using MbufFaultStage = switching::FaultStage<rte_mbuf*, MbufOps>;

struct EgressOps {
  uint32_t length(rte_mbuf* m) const;
  uint8_t tos(rte_mbuf* m) const;   // wire::traffic_class
  bool mark_ce(rte_mbuf* m) const;  // not on a frame shared with other ports (flooded)
  void free(rte_mbuf* m) const;
};
using MbufEgress = switching::Egress<rte_mbuf*, EgressOps>;

struct WorkerSetup {
  unsigned index = 0;
  std::vector<uint16_t> ports;  // DPDK port ids, by config port index
  rte_mempool* pool = nullptr;
  std::vector<rte_ring*> handoff;  // one per worker; ours is handoff[index]
  SnapshotPublisher* snapshots = nullptr;
  TelemetrySlot* telemetry = nullptr;
  const std::atomic<bool>* stop = nullptr;
  uint32_t burst = 32;
  uint32_t l2_table_size = 4096;
  uint64_t l2_aging_ns = 300'000'000'000;
  vocab::UdpPortRange udp_source_ports;  // the engine's edge binding
  uint32_t idle_sleep_us = 0;
  uint64_t publish_period_ns = 50'000'000;
  // Fault specs per port (index = config port); disabled specs cost a branch.
  std::vector<switching::FaultSpec> rx_faults, tx_faults;
  // Traffic classes and line rate per port (egress.h); disabled: frames go straight to TX.
  std::vector<switching::EgressSpec> egress;
};

class Worker {
 public:
  explicit Worker(WorkerSetup setup);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // The lcore's loop; returns when *stop becomes true (held frames freed, telemetry final).
  int run();

 private:
  class EngineSink;
  void apply(const Snapshot& s);
  void rx_port(size_t p, uint64_t now);
  void dispatch(rte_mbuf* m, uint16_t port, uint64_t now);
  void run_engine(uint64_t now);
  void queue_tx(size_t port, rte_mbuf* m);
  void flush_tx(size_t port, uint64_t now);
  void publish(uint64_t now);
  uint64_t now_ns() const;

  WorkerSetup s_;
  double ns_per_tsc_ = 1.0;
  uint64_t tsc0_ = 0;
  uint64_t applied_version_ = 0;
  std::unique_ptr<engine::Mode2Engine> engine_;
  // The slot regions and instances of attached groups, held so that memory freed with an old
  // snapshot cannot come back at the same address while its group is still attached here.
  // Capacity: every group an engine can hold (reserved once; apply() never grows it).
  struct Held {
    std::shared_ptr<engine::SlotRegion> slots;
    std::shared_ptr<engine::GroupInstance> instance;
  };
  std::vector<Held> held_;
  std::unique_ptr<switching::SwitchPipeline> pipeline_;
  std::unique_ptr<EngineSink> engine_out_;
  engine::TxBatch replies_;
  std::vector<rte_mbuf*> rx_, rx_faulted_, tx_faulted_;  // separate: a flush may run mid-RX
  std::vector<engine::RxFrame> engine_in_;
  std::vector<rte_mbuf*> engine_mbufs_;
  std::vector<std::vector<rte_mbuf*>> tx_;  // per port, pending
  std::vector<std::unique_ptr<MbufFaultStage>> rx_fault_, tx_fault_;
  std::vector<std::unique_ptr<MbufEgress>> egress_;  // per port
  // What one flush takes from a port's egress: frames beyond it leave on the next loop.
  static constexpr size_t kEgressFramesPerFlush = 512;
  std::vector<rte_mbuf*> egress_out_;
  struct Progress {
    uint32_t group_id;
    uint64_t value, since_ns;
  };
  std::vector<Progress> progress_;  // per installed group: last progress() seen, and when
  WorkerTelemetry t_{};
  uint64_t next_publish_ = 0;
  const switching::PipelineConfig empty_config_{};
};

}  // namespace epic::dpdk
