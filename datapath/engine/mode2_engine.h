// Mode2Engine: EPIC Mode-II (connection translated) for one switch — the
// IncEngine modules composed into the pipeline that takes a burst of frames
// and emits frames (docs/design.md §2, seeds/epic-spec.zh.txt, docs/mode2.md):
//
//   LookupTable -> per-endpoint PSN translation (collective_map.h) ->
//   CheckDuplicate -> AggregateData -> ReplicateData + TranslateHeader
//   (root: results down; others: partial up, results down when they return)
//   -> RecycleBuffer;  ReceiveAck/SendAck: ranks' ACKs become the ACKs of
//   their uploads, and ACK frontiers travel up and down the tree.
//
// All six primitives: AllReduce, Reduce, Broadcast, Barrier, ReduceScatter,
// AllGather, announced by a control message (collective.h). DPDK-free and
// deterministic: the same code runs under incd and in the in-process harness
// (tests/harness). Threading: one worker owns an engine and its groups.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "datapath/engine/counters.h"
#include "datapath/engine/group.h"
#include "datapath/engine/group_instance.h"
#include "datapath/engine/lookup_table.h"
#include "datapath/engine/tx_batch.h"
#include "datapath/wire/packet_view.h"
#include "datapath/wire/parser.h"

namespace epic::engine {

struct RxFrame {
  const uint8_t* data = nullptr;
  uint16_t length = 0;
  uint16_t port = 0;
};

enum class AttachResult : uint8_t { kOk, kGroupInstalled, kEndpointInUse, kFull };
std::string_view to_string(AttachResult r);

class Mode2Engine {
 public:
  static constexpr size_t kDefaultMaxGroups = 1024;
  // Room for `max_groups` groups and `max_edges` edges, allocated here once.
  explicit Mode2Engine(size_t max_groups = kDefaultMaxGroups,
                       size_t max_edges = LookupTable::kDefaultMaxEdges);

  // Packet-core safe: attaches a prepared instance (group_instance.h), owned by the caller
  // and kept alive (with its slot region) until detach(). Never allocates or throws; refuses
  // (nothing changes) a group id already attached, an endpoint already in use, or a full engine.
  AttachResult attach(GroupInstance& group);
  // Detaches a group (its routes; its instance goes back to the caller). False if absent.
  bool detach(uint32_t group_id);

  // For tests and tools, off the packet path: check, prepare and attach an instance the engine
  // owns. `slots` (2 * window slots of config.pmtu) stays the caller's and must outlive the
  // group. Throws std::invalid_argument with the reason when it cannot be installed.
  void install_group(const GroupConfig& config, SlotRegion* slots);
  // Detaches a group (and frees its instance if install_group made it). False if absent.
  bool remove_group(uint32_t group_id);

  void process(const RxFrame* frames, size_t n, TxBatch& out);

  // Attached groups, for telemetry by the owning worker.
  const std::vector<GroupState*>& groups() const { return groups_; }

  const EngineCounters& counters() const { return counters_; }

 private:
  struct Item {  // one packet of a collective: its control message or data packet j
    const CollectiveRecord* record = nullptr;
    bool control = false;
    uint32_t j = 0;
    uint32_t gpsn() const;
  };
  void dispatch(const wire::ParseResult& r, TxBatch& out);
  void upward(GroupState& g, int child, const wire::PacketView& v, TxBatch& out);
  void downward(GroupState& g, const wire::PacketView& v, TxBatch& out);
  void rank_ack(GroupState& g, int child, const wire::PacketView& v, TxBatch& out);

  Item locate_send(const GroupState& g, int child, uint32_t psn) const;
  Item locate_recv(const GroupState& g, int child, uint32_t psn) const;
  Item locate_rank(const GroupState& g, int child, uint32_t psn, bool send) const;
  Item locate_group(const GroupState& g, uint32_t gpsn) const;
  const CollectiveRecord* create_record(GroupState& g, const CollectiveDescriptor& d);
  bool child_sends(const GroupState& g, int child, const Item& it) const;
  bool child_receives(const GroupState& g, int child, const Item& it) const;
  int fan_in(const GroupState& g, const Item& it) const;

  void aggregate(GroupState& g, int child, const Item& it, const wire::PacketView& v, TxBatch& out);
  bool park_rank(GroupState& g, int child, uint32_t psn, TxBatch& out);
  // To every child with a receiver of `it` (only_child -1: first time; -2: again), or to one.
  void replicate(GroupState& g, const Item& it, uint8_t opcode, uint32_t immdt,
                 const uint8_t* payload, uint16_t len, int only_child, TxBatch& out);
  void send_up(GroupState& g, uint32_t gpsn, uint8_t opcode, uint32_t immdt, const uint8_t* payload,
               uint16_t len, TxBatch& out);
  void emit(uint16_t port, const FrameSpec& f, TxBatch& out);  // TranslateHeader into the batch
  void send_ack(GroupState& g, const Endpoint& src, const Endpoint& dst, uint16_t port,
                uint16_t udp_port, uint32_t psn, uint8_t syndrome, TxBatch& out);

  void recycle_epic(GroupState& g, uint32_t completed_psn);
  // ACK frontiers
  uint32_t child_dest_frontier(const GroupState& g, int child) const;
  void update_subtree_frontier(GroupState& g, TxBatch& out);
  void update_global_frontier(GroupState& g, uint32_t frontier, TxBatch& out);
  void ack_rank_uploads(GroupState& g, int child, bool force, TxBatch& out);

  LookupTable lookup_;
  size_t max_groups_;
  std::vector<GroupState*> groups_;                    // capacity max_groups_
  std::vector<std::unique_ptr<GroupInstance>> owned_;  // made by install_group
  EngineCounters counters_;
};

// Data packets of a collective for a group of `ranks` ranks at a path MTU.
uint32_t data_packets(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu);

}  // namespace epic::engine
