// Mode2Engine: one worker's IncEngine for EPIC Mode-II — the groups attached
// to it, the LookupTable that routes their edges, and the burst loop: parse
// each frame once, prefetch its route across the burst, read it into typed
// per-packet metadata (packet_meta.h) and hand it to the Mode-II composition
// of the IncEngine modules (mode2.h says which module runs when). All six
// primitives: AllReduce, Reduce, Broadcast, Barrier, ReduceScatter, AllGather,
// announced by a control message (proto/vocab/collective.h). DPDK-free and
// deterministic: the same code runs under incd and in the in-process harness
// (tests/harness). Threading: one worker owns an engine and its groups.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "datapath/engine/actions.h"
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
  void dispatch(const wire::ParseResult& r, Actions& actions);

  LookupTable lookup_;
  size_t max_groups_;
  std::vector<GroupState*> groups_;                    // capacity max_groups_
  std::vector<std::unique_ptr<GroupInstance>> owned_;  // made by install_group
  EngineCounters counters_;
};

// Data packets of a collective for a group of `ranks` ranks at a path MTU.
uint32_t data_packets(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu);

}  // namespace epic::engine
