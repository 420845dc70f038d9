// Mode2Engine: one worker's IncEngine — the groups attached to it, the
// LookupTable that routes their edges, and the burst loop: parse each frame
// once, prefetch its route across the burst, read it into typed per-packet
// metadata (packet_meta.h) — after checking that it comes from the member
// installed on its edge (edge_binding.h) — and hand it to its group's mode: the Mode-II
// composition of the IncEngine modules (mode2.h says which module runs when) or
// the Mode-III one (mode3.h), which also needs the worker's clock and timer
// wheel: process() takes the time, poll() runs the timers. All six
// primitives: AllReduce, Reduce, Broadcast, Barrier, ReduceScatter, AllGather,
// announced by a control message (proto/vocab/collective.h). DPDK-free and
// deterministic: the same code runs under incd and in the in-process harness
// (tests/harness). Threading: one worker owns an engine and its groups.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "datapath/engine/actions.h"
#include "datapath/engine/counters.h"
#include "datapath/engine/edge_binding.h"
#include "datapath/engine/frame_sink.h"
#include "datapath/engine/group.h"
#include "datapath/engine/group_instance.h"
#include "datapath/engine/lookup_table.h"
#include "datapath/engine/mode3.h"
#include "datapath/engine/timer_wheel.h"
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

  // Acts on a burst of frames received at `now_ns` (any monotonic clock, the one poll() gets;
  // Mode-II uses it only for straggler telemetry, straggler.h).
  void process(const RxFrame* frames, size_t n, FrameSink& out, uint64_t now_ns = 0);
  // Mode-III's work without a frame: the timers due by `now_ns` (at most kMaxExpiriesPerPoll)
  // and the Pipes left to continue. Call it every loop iteration in which poll_wanted().
  void poll(uint64_t now_ns, FrameSink& out);
  // Whether poll() may have work: a timer armed or a Pipe waiting. Inline and two loads, so a
  // loop with no Mode-III group pays nothing more.
  bool poll_wanted() const { return wheel_.armed() > 0 || !pumps_.items().empty(); }
  // When poll() next has something to do: the earliest timer, or now when a Pipe waits to be
  // continued; nullopt when nothing is pending. Scans the wheel: for harnesses and tools, not
  // the packet path.
  std::optional<uint64_t> next_poll_ns() const;
  static constexpr size_t kMaxExpiriesPerPoll = 256;
  static constexpr uint32_t kWheelSlots = 4096;
  static constexpr uint64_t kWheelTickNs = 10'000;

  // Attached groups, for telemetry by the owning worker.
  const std::vector<GroupState*>& groups() const { return groups_; }

  const EngineCounters& counters() const { return counters_; }

  // EdgeBinding (edge_binding.h): the UDP source ports a member's frames may carry (default:
  // any). Set before the first process(), or at a quiescent point of the owning worker.
  void set_udp_source_ports(UdpPortRange r) { udp_source_ports_ = r; }
  const UdpPortRange& udp_source_ports() const { return udp_source_ports_; }
  // Frames dropped because they did not match their edge's binding (drop_edge_* summed), by
  // ingress port id (ids >= kMaxIngressPorts on the last).
  const std::array<uint64_t, kMaxIngressPorts>& binding_drops() const { return binding_drops_; }

 private:
  void dispatch(const wire::ParseResult& r, uint16_t port, Actions& actions, mode3::Loop& loop);
  // The frame's binding to the edge it was routed to; counts a mismatch. True on a match.
  bool bound(const Route& route, const wire::PacketView& v, uint16_t port);

  LookupTable lookup_;
  TimerWheel wheel_;
  mode3::PendingList<Mode3Edge*> acks_;    // capacity: max_edges
  mode3::PendingList<GroupState*> pumps_;  // capacity: 2 * max_groups
  size_t max_groups_;
  std::vector<GroupState*> groups_;                    // capacity max_groups_
  std::vector<std::unique_ptr<GroupInstance>> owned_;  // made by install_group
  EngineCounters counters_;
  UdpPortRange udp_source_ports_;
  std::array<uint64_t, kMaxIngressPorts> binding_drops_{};
};

// Data packets of a collective for a group of `ranks` ranks at a path MTU.
uint32_t data_packets(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu);

}  // namespace epic::engine
