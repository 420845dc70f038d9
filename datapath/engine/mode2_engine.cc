#include "datapath/engine/mode2_engine.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "datapath/engine/aggregate_data.h"
#include "datapath/engine/mode2.h"
#include "datapath/engine/packet_meta.h"
#include "datapath/wire/parser.h"
#include "proto/vocab/limits.h"

namespace epic::engine {

namespace w = epic::wire;

namespace {

// A switch child's exact partial (proto/vocab/partial.h) can be larger than any path MTU, up to
// a port's MTU; every payload's length is checked against its collective after parsing.
constexpr w::ParseOptions kParseOptions{true, true, vocab::kMaxPortMtu};

// Frames prefetched ahead of the one being parsed.
constexpr size_t kPrefetchAhead = 1;
void prefetch_frame(const RxFrame& f) {
  constexpr size_t kLine = 64;
  for (size_t off = 0; off < f.length; off += kLine) __builtin_prefetch(f.data + off, 0, 3);
}

}  // namespace

uint32_t data_packets(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu) {
  return shape_of(d, ranks, pmtu).n_data;
}

std::string_view to_string(AttachResult r) {
  switch (r) {
    case AttachResult::kOk:
      return "ok";
    case AttachResult::kGroupInstalled:
      return "the group id is already installed";
    case AttachResult::kEndpointInUse:
      return "a local (IP, QPN) of the group is already an endpoint here";
    case AttachResult::kFull:
      return "the engine's group or edge table is full";
  }
  return "invalid";
}

Mode2Engine::Mode2Engine(size_t max_groups, size_t max_edges)
    : lookup_(max_edges),
      wheel_(kWheelSlots, kWheelTickNs, 0),
      acks_(max_edges),
      pumps_(2 * max_groups),  // each group at most once before and once after a poll's pumps
      max_groups_(max_groups) {
  groups_.reserve(max_groups_);
}

AttachResult Mode2Engine::attach(GroupInstance& group) {
  const GroupConfig& config = group.config;
  for (const GroupState* g : groups_) {
    if (g->config->group_id == config.group_id) return AttachResult::kGroupInstalled;
  }
  if (groups_.size() >= max_groups_) return AttachResult::kFull;
  const size_t edges = config.children.size() + (config.parent ? 1 : 0);
  if (lookup_.size() + edges > lookup_.max_edges()) return AttachResult::kFull;
  for (const ChildLink& c : config.children) {
    if (lookup_.find(c.local.ipv4, c.local.qpn) != nullptr) return AttachResult::kEndpointInUse;
  }
  if (config.parent && lookup_.find(config.parent->local.ipv4, config.parent->local.qpn)) {
    return AttachResult::kEndpointInUse;
  }
  // The group's own endpoints could repeat one another: insert, and roll back on a clash.
  GroupState* st = &group.state;
  size_t done = 0;  // children inserted
  for (; done < config.children.size(); ++done) {
    const ChildLink& c = config.children[done];
    if (!lookup_.insert(c.local.ipv4, c.local.qpn, {st, static_cast<int16_t>(done)})) break;
  }
  bool ok = done == config.children.size();
  if (ok && config.parent) {
    ok = lookup_.insert(config.parent->local.ipv4, config.parent->local.qpn, {st, -1});
  }
  if (!ok) {
    for (size_t c = 0; c < done; ++c) {
      lookup_.erase(config.children[c].local.ipv4, config.children[c].local.qpn);
    }
    return AttachResult::kEndpointInUse;
  }
  groups_.push_back(st);
  return AttachResult::kOk;
}

bool Mode2Engine::detach(uint32_t group_id) {
  for (size_t i = 0; i < groups_.size(); ++i) {
    const GroupConfig& cfg = *groups_[i]->config;
    if (cfg.group_id != group_id) continue;
    if (Mode3State* m = groups_[i]->mode3) {
      // Nothing of the group may stay linked into the wheel or the pending lists.
      for (Mode3Edge& e : m->edges) {
        wheel_.cancel(e.out.timer);
        wheel_.cancel(e.quiet);
      }
      std::erase(pumps_.items(), groups_[i]);
      m->pump_due = false;
      std::erase_if(acks_.items(), [&](const Mode3Edge* e) { return e->group == groups_[i]; });
      for (Mode3Edge& e : m->edges) e.ack_due = false;
    }
    for (const ChildLink& c : cfg.children) lookup_.erase(c.local.ipv4, c.local.qpn);
    if (cfg.parent) lookup_.erase(cfg.parent->local.ipv4, cfg.parent->local.qpn);
    groups_.erase(groups_.begin() + static_cast<long>(i));
    return true;
  }
  return false;
}

void Mode2Engine::install_group(const GroupConfig& config, SlotRegion* slots) {
  std::string error;
  std::unique_ptr<GroupInstance> g = prepare_group(config, slots, error);
  if (!g) throw std::invalid_argument(error);
  const AttachResult r = attach(*g);
  if (r != AttachResult::kOk) {
    throw std::invalid_argument("group " + std::to_string(config.group_id) + ": " +
                                std::string(to_string(r)));
  }
  owned_.push_back(std::move(g));
}

bool Mode2Engine::remove_group(uint32_t group_id) {
  if (!detach(group_id)) return false;
  std::erase_if(owned_, [&](const auto& g) { return g->config.group_id == group_id; });
  return true;
}

void Mode2Engine::process(const RxFrame* frames, size_t n, FrameSink& out, uint64_t now_ns) {
  Actions actions(out, counters_);
  actions.now_ns = now_ns;
  mode3::Loop loop{wheel_, now_ns, acks_, pumps_};
  // A burst in chunks: parse every frame of the chunk once and prefetch its route, then act.
  constexpr size_t kChunk = 32;
  w::ParseResult parsed[kChunk];
  for (size_t k = 0; k < kPrefetchAhead && k < n; ++k) prefetch_frame(frames[k]);
  for (size_t first = 0; first < n; first += kChunk) {
    const size_t m = std::min(kChunk, n - first);
    for (size_t k = 0; k < m; ++k) {
      // The next frame's bytes are on their way while this one's ICRC is checked (received
      // frames are cold: written by a NIC or another core).
      if (first + k + kPrefetchAhead < n) prefetch_frame(frames[first + k + kPrefetchAhead]);
      parsed[k] = w::parse(frames[first + k].data, frames[first + k].length, kParseOptions);
      const w::PacketView& v = parsed[k].view;
      if (parsed[k].ok() && v.ip_version == w::IpVersion::kV4) {
        lookup_.prefetch(v.ipv4_dst(), v.dest_qp());
      }
    }
    for (size_t k = 0; k < m; ++k) dispatch(parsed[k], frames[first + k].port, actions, loop);
  }
  if (!acks_.items().empty()) mode3::flush_acks(actions, loop);
}

void Mode2Engine::poll(uint64_t now_ns, FrameSink& out) {
  Actions actions(out, counters_);
  mode3::Loop loop{wheel_, now_ns, acks_, pumps_};
  if (wheel_.armed() > 0) {
    wheel_.expire(now_ns, kMaxExpiriesPerPoll,
                  [&](TimerNode& n) { mode3::on_timer(edge_of_timer(n), n, actions, loop); });
  }
  // The groups whose Pipes ran out of budget; a pump may queue its group again (after these).
  std::vector<GroupState*>& pending = pumps_.items();
  const size_t due = pending.size();
  for (size_t i = 0; i < due; ++i) mode3::pump_again(*pending[i], actions, loop);
  pending.erase(pending.begin(), pending.begin() + static_cast<long>(due));
  if (!acks_.items().empty()) mode3::flush_acks(actions, loop);
}

std::optional<uint64_t> Mode2Engine::next_poll_ns() const {
  std::optional<uint64_t> next;
  if (!pumps_.items().empty()) next = 0;
  if (const auto t = wheel_.next_due_ns()) next = next ? std::min(*next, *t) : *t;
  return next;
}

bool Mode2Engine::bound(const Route& route, const w::PacketView& v, uint16_t port) {
  uint64_t* reason = nullptr;
  switch (check_binding(*route.group->config, route.child, v, port, udp_source_ports_)) {
    case Binding::kMatch:
      return true;
    case Binding::kWrongPort:
      reason = &counters_.drop_edge_port;
      break;
    case Binding::kWrongMac:
      reason = &counters_.drop_edge_mac;
      break;
    case Binding::kWrongIpv4:
      reason = &counters_.drop_edge_ipv4;
      break;
    case Binding::kWrongUdpPort:
      reason = &counters_.drop_edge_udp_port;
      break;
    case Binding::kWrongPkey:
      reason = &counters_.drop_edge_pkey;
      break;
  }
  ++*reason;
  ++binding_drops_[port < kMaxIngressPorts ? port : kMaxIngressPorts - 1];
  return false;
}

void Mode2Engine::dispatch(const w::ParseResult& r, uint16_t port, Actions& actions,
                           mode3::Loop& loop) {
  ++counters_.rx_frames;
  if (!r.ok()) {
    ++counters_.drop_parse;
    return;
  }
  const w::PacketView& v = r.view;
  const Route* route =
      v.ip_version == w::IpVersion::kV4 ? lookup_.find(v.ipv4_dst(), v.dest_qp()) : nullptr;
  if (route == nullptr) {
    ++counters_.drop_no_route;
    return;
  }
  if (!bound(*route, v, port)) return;  // before any state changes
  ++route->group->stats.rx_frames;
  const PacketMeta m = classify(v, *route);
  if (m.ecn == kEcnCe && (m.kind == PacketKind::kUpload || m.kind == PacketKind::kResult)) {
    ++counters_.ecn_ce_in;  // congestion (docs/congestion.md), whatever the mode does next
  }
  if (route->group->mode3 != nullptr) {
    mode3::handle(m, actions, loop);
  } else {
    mode2::handle(m, actions);
  }
}

}  // namespace epic::engine
