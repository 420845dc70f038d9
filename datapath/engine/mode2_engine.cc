// Mode2Engine: dispatch, per-endpoint PSN translation and the upward/downward
// data path. The ACK side (rank ACKs, frontiers) is in mode2_acks.cc.
#include "datapath/engine/mode2_engine.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "datapath/arith/accumulate.h"
#include "datapath/wire/opcode.h"
#include "datapath/wire/parser.h"
#include "proto/vocab/aeth.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

namespace w = epic::wire;

uint32_t data_packets(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu) {
  return shape_of(d, ranks, pmtu).n_data;
}

uint32_t Mode2Engine::Item::gpsn() const {
  return vocab::psn_add(record->g_ctrl, control ? 0 : 1 + int64_t{j});
}

namespace {

// Parking a waiting rank: RNR NAK timer codes (IBA table 45) from 0.64 ms (12), one code longer
// for every round the same oldest upload stays parked, up to 15.36 ms (21). A wait of T costs
// about 9 + T / 15 ms rounds instead of T / 0.64 ms: each round is a chance for a loss that
// spends one of the rank's transport retries, which only progress refills. The cap stays below
// the shortest local ACK timeout ranks use (libinc's soft transport: 20 ms; verbs: 67 ms), so
// a NIC never times out while it waits as told.
constexpr uint8_t kParkTimerFirst = 12;
constexpr uint8_t kParkTimerLast = 21;
constexpr uint8_t kAck = vocab::aeth::kAckUnlimitedCredits;

bool is_control(const w::PacketView& v) {
  return v.opcode() == w::op::kSendOnlyImm && v.immdt() == kControlImm;
}

}  // namespace

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
    : lookup_(max_edges), max_groups_(max_groups) {
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

void Mode2Engine::process(const RxFrame* frames, size_t n, TxBatch& out) {
  // A burst in chunks: parse every frame of the chunk once and prefetch its route, then act.
  constexpr size_t kChunk = 32;
  w::ParseResult parsed[kChunk];
  for (size_t first = 0; first < n; first += kChunk) {
    const size_t m = std::min(kChunk, n - first);
    for (size_t k = 0; k < m; ++k) {
      parsed[k] = w::parse(frames[first + k].data, frames[first + k].length);
      const w::PacketView& v = parsed[k].view;
      if (parsed[k].ok() && v.ip_version == w::IpVersion::kV4) {
        lookup_.prefetch(v.ipv4_dst(), v.dest_qp());
      }
    }
    for (size_t k = 0; k < m; ++k) dispatch(parsed[k], out);
  }
}

void Mode2Engine::dispatch(const w::ParseResult& r, TxBatch& out) {
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
  GroupState& g = *route->group;
  ++g.stats.rx_frames;
  const w::OpcodeInfo& op = *v.op;
  if (op.kind == w::OpKind::kAck) {
    if (route->child < 0) {
      ++counters_.frontier_from_parent;
      update_global_frontier(g, v.psn(), out);
    } else if (g.config->children[static_cast<size_t>(route->child)].is_rank) {
      rank_ack(g, route->child, v, out);
    } else {
      ++counters_.frontier_from_child;
      const auto c = static_cast<size_t>(route->child);
      if (vocab::psn_gt(v.psn(), g.child_frontier[c])) {
        g.child_frontier[c] = v.psn();
        update_subtree_frontier(g, out);
      } else {
        // A repeated report: the child may have lost our frontier; ours may be lost upward.
        const ChildLink& l = g.config->children[c];
        send_ack(g, l.local, l.remote, l.port, l.udp_src_port, g.global_frontier, kAck, out);
        ++counters_.frontiers_sent;
        if (g.config->parent) {
          const ParentLink& p = *g.config->parent;
          send_ack(g, p.local, p.remote, p.port, p.udp_src_port, g.subtree_frontier, kAck, out);
          ++counters_.frontiers_sent;
        }
      }
    }
  } else if (op.kind == w::OpKind::kSend && op.transport == w::Transport::kRc &&
             !op.has(w::kExtIeth)) {
    if (route->child >= 0) {
      upward(g, route->child, v, out);
    } else {
      downward(g, v, out);
    }
  } else {
    ++counters_.drop_unsupported;
    ++g.stats.dropped;
  }
}

// --- per-endpoint PSN translation ---------------------------------------------------------------

// The record holding position `psn` of one PSN sequence (a child's sends or receives, or the
// group's). A sequence's records are contiguous — each starts where the one before it ended,
// and the newest ends at `end`, the next record's start — so the walk from the newest stops at
// the first record that starts at or before `psn` (measured backward from `end`): O(1) for a
// packet of the newest collectives, at most as many steps as collectives it lies back, and
// O(1) for a PSN not announced yet. Positions more than half the PSN space (2^23) behind `end`
// are nobody's: PSN order is only defined within half the space (vocab::psn_gt).
template <typename StartFn>
static const CollectiveRecord* find_record(const GroupState& g, uint32_t end, uint32_t psn,
                                           StartFn&& start) {
  constexpr uint32_t kHalf = (vocab::kPsnMask + 1) / 2;
  const uint32_t back = (end - psn) & vocab::kPsnMask;  // psn = end - back
  if (back == 0 || back > kHalf) return nullptr;        // at or after end, or too far back
  const size_t h = g.history.size();
  const auto known = static_cast<uint32_t>(g.collectives < h ? g.collectives : h);
  for (uint32_t k = 0; k < known; ++k) {
    const CollectiveRecord& rec = g.history[(g.collectives - 1 - k) % h];
    const uint32_t rec_back = (end - start(rec)) & vocab::kPsnMask;
    if (rec_back >= back) return &rec;  // start(rec) <= psn < the next record's start
    if (rec_back > kHalf) break;
  }
  return nullptr;  // before the oldest record kept
}

Mode2Engine::Item Mode2Engine::locate_send(const GroupState& g, int child, uint32_t psn) const {
  if (!g.config->children[static_cast<size_t>(child)].is_rank) return locate_group(g, psn);
  return locate_rank(g, child, psn, true);
}

Mode2Engine::Item Mode2Engine::locate_recv(const GroupState& g, int child, uint32_t psn) const {
  return locate_rank(g, child, psn, false);
}

// The collective and packet at `psn` of a child's send (or receive) sequence.
Mode2Engine::Item Mode2Engine::locate_rank(const GroupState& g, int child, uint32_t psn,
                                           bool send) const {
  const uint16_t rank = g.config->children[static_cast<size_t>(child)].first_rank;
  const auto c = static_cast<size_t>(child);
  const auto start = [&](const CollectiveRecord& r) {
    return send ? r.send_ctrl[c] : r.recv_ctrl[c];
  };
  const CollectiveRecord* rec =
      find_record(g, send ? g.next_send_ctrl[c] : g.next_recv_ctrl[c], psn, start);
  if (rec == nullptr) return {};
  const uint32_t off = (psn - start(*rec)) & vocab::kPsnMask;
  if (off == 0) return {rec, true, 0};
  return {rec, false,
          send ? rec->shape.send_item(rank, off - 1) : rec->shape.recv_item(rank, off - 1)};
}

Mode2Engine::Item Mode2Engine::locate_group(const GroupState& g, uint32_t gpsn) const {
  const CollectiveRecord* rec =
      find_record(g, g.next_g_ctrl, gpsn, [](const CollectiveRecord& r) { return r.g_ctrl; });
  if (rec == nullptr) return {};
  const uint32_t off = (gpsn - rec->g_ctrl) & vocab::kPsnMask;
  return off == 0 ? Item{rec, true, 0} : Item{rec, false, off - 1};
}

const CollectiveRecord* Mode2Engine::create_record(GroupState& g, const CollectiveDescriptor& d) {
  const GroupConfig& cfg = *g.config;
  CollectiveRecord& rec = g.history[g.collectives % g.history.size()];
  rec.shape = shape_of(d, cfg.num_ranks, cfg.pmtu);
  rec.g_ctrl = g.next_g_ctrl;
  for (size_t c = 0; c < cfg.children.size(); ++c) {
    const ChildLink& link = cfg.children[c];
    rec.send_ctrl[c] = g.next_send_ctrl[c];
    rec.recv_ctrl[c] = g.next_recv_ctrl[c];
    const uint32_t sent = link.is_rank ? rec.shape.send_count(link.first_rank) : rec.shape.n_data;
    const uint32_t recvd = link.is_rank ? rec.shape.recv_count(link.first_rank) : rec.shape.n_data;
    g.next_send_ctrl[c] = vocab::psn_add(g.next_send_ctrl[c], 1 + int64_t{sent});
    g.next_recv_ctrl[c] = vocab::psn_add(g.next_recv_ctrl[c], 1 + int64_t{recvd});
  }
  if (!rec.shape.multi_source() && rec.shape.n_data > 0) {
    g.one_source_until = vocab::psn_add(rec.g_ctrl, rec.shape.n_data);
  }
  g.next_g_ctrl = vocab::psn_add(g.next_g_ctrl, 1 + int64_t{rec.shape.n_data});
  ++g.collectives;
  return &rec;
}

bool Mode2Engine::child_sends(const GroupState& g, int child, const Item& it) const {
  if (it.control) return true;
  const ChildLink& l = g.config->children[static_cast<size_t>(child)];
  return it.record->shape.sends_any(l.first_rank, l.rank_count, it.j);
}

bool Mode2Engine::child_receives(const GroupState& g, int child, const Item& it) const {
  if (it.control) return true;
  const ChildLink& l = g.config->children[static_cast<size_t>(child)];
  return it.record->shape.receives_any(l.first_rank, l.rank_count, it.j);
}

int Mode2Engine::fan_in(const GroupState& g, const Item& it) const {
  int n = 0;
  for (size_t c = 0; c < g.config->children.size(); ++c)
    n += child_sends(g, static_cast<int>(c), it);
  return n;
}

// --- upward
// ---------------------------------------------------------------------------------------

void Mode2Engine::upward(GroupState& g, int child, const w::PacketView& v, TxBatch& out) {
  const GroupConfig& cfg = *g.config;
  const auto c = static_cast<size_t>(child);
  const uint32_t psn = v.psn();
  const bool control = is_control(v);
  Item it = locate_send(g, child, psn);
  if (it.record == nullptr) {
    if (psn != g.next_send_ctrl[c]) {
      ++(vocab::psn_gt(psn, g.next_send_ctrl[c]) ? counters_.drop_data_before_control
                                                 : counters_.drop_unknown_psn);
      ++g.stats.dropped;
      return;
    }
    if (!control) {
      ++counters_.drop_data_before_control;
      ++g.stats.dropped;
      return;
    }
    const auto d = decode_control(v.payload(), v.data_len());
    if (!d ||
        (d->type != CollectiveType::kBarrier && d->count == 0 &&
         d->type != CollectiveType::kAllReduce) ||
        ((d->type == CollectiveType::kReduce || d->type == CollectiveType::kBroadcast) &&
         d->root >= cfg.num_ranks)) {
      ++counters_.drop_bad_control;
      ++g.stats.dropped;
      return;
    }
    it = {create_record(g, *d), true, 0};
  }
  if (control != it.control) {
    ++counters_.drop_inconsistent;
    ++g.stats.dropped;
    return;
  }
  if (control) {
    const auto d = decode_control(v.payload(), v.data_len());
    if (!d || !(*d == it.record->shape.desc)) {
      ++counters_.drop_bad_control;
      ++g.stats.dropped;
      return;
    }
  } else if (v.data_len() != it.record->shape.payload_len(it.j) || v.op->has(w::kExtImmDt) ||
             !child_sends(g, child, it)) {
    ++counters_.drop_inconsistent;
    ++g.stats.dropped;
    return;
  }
  const uint32_t gpsn = it.gpsn();
  // A rank's upload at or below the newest one it has sent is a retransmission.
  const bool resent = !vocab::psn_gt(psn, g.max_send_psn[c]);
  if (cfg.children[c].is_rank && !resent) g.max_send_psn[c] = psn;
  // Every receiver has acknowledged this packet: the sender lost our ACK. Say it again.
  if (!vocab::psn_gt(gpsn, g.global_frontier)) {
    ++counters_.upward_done;
    ++g.stats.retransmissions;
    if (cfg.children[c].is_rank) {
      ack_rank_uploads(g, child, true, out);
    } else {
      const ChildLink& l = cfg.children[c];
      send_ack(g, l.local, l.remote, l.port, l.udp_src_port, g.global_frontier, kAck, out);
      ++counters_.frontiers_sent;
    }
    return;
  }
  if (!control && !it.record->shape.multi_source()) {
    // One source (Broadcast, AllGather): nothing to aggregate, no slot. Up toward the root, or
    // at the root down to every child with a receiver; a retransmission simply travels again.
    ++counters_.upward_accepted;
    ++g.stats.upward_accepted;
    const ChildLink& l = cfg.children[c];
    if (l.is_rank && resent) {
      // A retransmission by the source means a receiver lost a packet. Forward it, and park the
      // source with RNR NAK: it resends after the RNR timer without spending its retry count
      // on the receivers' losses.
      if (park_rank(g, child, psn, out)) {
        // The source may be waiting on a frontier report this switch sent up and lost:
        // repeat it, as the multi-source path does for a duplicate contribution.
        if (cfg.parent) {
          send_ack(g, cfg.parent->local, cfg.parent->remote, cfg.parent->port,
                   cfg.parent->udp_src_port, g.subtree_frontier, kAck, out);
          ++counters_.frontiers_sent;
        }
      }
    }
    if (cfg.parent) {
      send_up(g, gpsn, v.opcode(), 0, v.payload(), v.data_len(), out);
      ++counters_.partials_sent_up;
    } else {
      replicate(g, it, v.opcode(), 0, v.payload(), v.data_len(), -1, out);
    }
    return;
  }
  aggregate(g, child, it, v, out);
}

// Parks a rank whose retransmitted upload waits on others: RNR NAK naming its oldest
// unacknowledged upload, so its NIC waits the RNR timer and resends from there without spending
// its transport retry count (which only progress refills). Answered for the retransmission of
// that oldest upload and of the newest one it has sent, the two ends of its go-back-N burst:
// on a lossy link one of them arrives in nearly every round even when the other is lost, so a
// long wait (a late rank) does not turn losses into local ACK timeouts that each spend a retry.
// Returns whether it answered.
bool Mode2Engine::park_rank(GroupState& g, int child, uint32_t psn, TxBatch& out) {
  const auto c = static_cast<size_t>(child);
  const uint32_t oldest = vocab::psn_add(g.acked_send_psn[c], 1);
  // Only an unacknowledged upload: a stray copy of an acknowledged one parks nobody.
  if ((psn != oldest && psn != g.max_send_psn[c]) || vocab::psn_lt(psn, oldest)) return false;
  // Back-off: a round starts with the oldest upload's retransmission.
  if (g.parked_psn[c] != oldest) {
    g.parked_psn[c] = oldest;
    g.park_rounds[c] = 0;
  } else if (psn == oldest && g.park_rounds[c] < kParkTimerLast - kParkTimerFirst) {
    ++g.park_rounds[c];
  }
  const auto code = static_cast<uint8_t>(kParkTimerFirst + g.park_rounds[c]);
  const ChildLink& l = g.config->children[c];
  send_ack(g, l.local, l.remote, l.port, l.udp_src_port, oldest, vocab::aeth::rnr_nak(code), out);
  ++counters_.rnr_naks_sent;
  return true;
}

void Mode2Engine::aggregate(GroupState& g, int child, const Item& it, const w::PacketView& v,
                            TxBatch& out) {
  const GroupConfig& cfg = *g.config;
  const uint32_t gpsn = it.gpsn();
  SlotRegion& region = *g.slots;
  const uint32_t i = region.index(gpsn);
  Slot& s = region.meta[i];
  // CheckDuplicate. A recycled slot keeps the PSN it last held: a late duplicate of that PSN
  // (or older) must not claim it again, or the zombie would block the slot's next PSN.
  if (s.state == SlotState::kEmpty && (!s.used || vocab::psn_gt(gpsn, s.psn))) {
    s = Slot{};
    s.used = true;
    s.psn = gpsn;
    s.state = SlotState::kAggregating;
    s.control = it.control;
    s.opcode = v.opcode();
    s.payload_len = v.data_len();
    s.immdt = it.control ? kControlImm : 0;
    s.dtype = it.record->shape.desc.dtype;
    s.op = it.record->shape.desc.op;
  } else if (s.state == SlotState::kEmpty || s.psn != gpsn) {
    ++(vocab::psn_gt(gpsn, s.psn) ? counters_.upward_slot_busy : counters_.upward_stale);
    return;
  }
  const uint64_t bit = uint64_t{1} << child;
  if (s.bitmap & bit) {
    ++counters_.upward_duplicate;
    ++g.stats.retransmissions;
    // Someone below retransmits: repeat the frontiers it may be waiting for.
    const ChildLink& l = cfg.children[static_cast<size_t>(child)];
    if (!l.is_rank) {
      send_ack(g, l.local, l.remote, l.port, l.udp_src_port, g.global_frontier, kAck, out);
      ++counters_.frontiers_sent;
    }
    if (cfg.parent) {
      send_ack(g, cfg.parent->local, cfg.parent->remote, cfg.parent->port, cfg.parent->udp_src_port,
               g.subtree_frontier, kAck, out);
      ++counters_.frontiers_sent;
    }
    const bool result_for_child = s.state == SlotState::kComplete && child_receives(g, child, it);
    if (result_for_child) {
      replicate(g, it, s.opcode, s.immdt, region.result_of(i), s.payload_len, child, out);
      ++counters_.results_resent;
    } else if (s.state == SlotState::kComplete) {
      // A contributor that receives nothing (Reduce, ReduceScatter) still waits for the
      // receivers' ACK, whose last copy may be lost: send the result to them again so they
      // acknowledge it again — here, and through the root everywhere else.
      replicate(g, it, s.opcode, s.immdt, region.result_of(i), s.payload_len, -2, out);
      ++counters_.results_resent;
      if (cfg.parent) send_up(g, gpsn, s.opcode, s.immdt, region.result_of(i), s.payload_len, out);
    } else if (s.state == SlotState::kSentUp) {
      send_up(g, gpsn, s.opcode, s.immdt, region.result_of(i), s.payload_len, out);
      ++counters_.partials_resent_up;
    }
    // A rank retransmits because others are slow (contributions missing, or the receivers have
    // not acknowledged yet): answer "receiver not ready", so one slow rank or one lossy path
    // does not make the others fail with retry-exceeded.
    if (!result_for_child && l.is_rank) park_rank(g, child, v.psn(), out);
    return;
  }
  if (v.opcode() != s.opcode || v.data_len() != s.payload_len) {
    ++counters_.drop_inconsistent;
    ++g.stats.dropped;
    return;
  }
  // AggregateData.
  if (s.control) {
    if (s.degree == 0) std::memcpy(region.result_of(i), v.payload(), s.payload_len);
  } else {
    const size_t n = s.payload_len / arith::wire_bytes(s.dtype);
    if (s.degree == 0) {
      arith::load(s.dtype, region.accum_of(i), v.payload(), n);
    } else {
      arith::combine(s.dtype, s.op, region.accum_of(i), v.payload(), n);
    }
  }
  s.bitmap |= bit;
  ++s.degree;
  ++counters_.upward_accepted;
  ++g.stats.upward_accepted;
  if (s.degree < fan_in(g, it)) return;

  ++counters_.aggregations_completed;
  ++g.stats.aggregations_completed;
  if (!s.control) {
    arith::store(s.dtype, region.result_of(i), region.accum_of(i),
                 s.payload_len / arith::wire_bytes(s.dtype));
  }
  if (cfg.parent) {
    s.state = SlotState::kSentUp;
    send_up(g, gpsn, s.opcode, s.immdt, region.result_of(i), s.payload_len, out);
    ++counters_.partials_sent_up;
  } else {
    s.state = SlotState::kComplete;
    replicate(g, it, s.opcode, s.immdt, region.result_of(i), s.payload_len, -1, out);
    recycle_epic(g, gpsn);
  }
}

// RecycleBuffer, EPIC's rule: when PSN p completes here, every rank has sent p, so every rank's
// window has moved past p - MW and slot (p + MW) mod 2MW, which held p - MW, is free — as long
// as every rank sends every PSN in between (AllReduce, Reduce, ReduceScatter, control
// messages). Otherwise the slot waits for the ACK frontier (mode2_acks.cc).
void Mode2Engine::recycle_epic(GroupState& g, uint32_t completed_psn) {
  const uint32_t old = vocab::psn_add(completed_psn, -int64_t{g.config->window});
  if (g.one_source_until) {
    if (vocab::psn_diff(old, *g.one_source_until) > (1 << 22)) {
      g.one_source_until.reset();  // long past: forget it before the PSN comparison wraps
    } else if (!vocab::psn_gt(old, *g.one_source_until)) {
      return;
    }
  }
  SlotRegion& region = *g.slots;
  Slot& s = region.meta[region.index(old)];
  if (s.used && s.state != SlotState::kEmpty && s.psn == old) {
    s.state = SlotState::kEmpty;
    ++counters_.slots_recycled;
  }
}

// --- downward -----------------------------------------------------------------------------------

void Mode2Engine::downward(GroupState& g, const w::PacketView& v, TxBatch& out) {
  const uint32_t gpsn = v.psn();
  const Item it = locate_group(g, gpsn);
  if (it.record == nullptr) {
    ++counters_.drop_unknown_psn;
    ++g.stats.dropped;
    return;
  }
  if (it.control != is_control(v) ||
      (!it.control && v.data_len() != it.record->shape.payload_len(it.j))) {
    ++counters_.drop_inconsistent;
    ++g.stats.dropped;
    return;
  }
  if (!vocab::psn_gt(gpsn, g.global_frontier)) {
    ++counters_.downward_duplicate;  // every receiver below already has it
    return;
  }
  if (!it.control && !it.record->shape.multi_source()) {
    ++counters_.downward_accepted;
    ++g.stats.downward_accepted;
    replicate(g, it, v.opcode(), 0, v.payload(), v.data_len(), -1, out);
    return;
  }
  SlotRegion& region = *g.slots;
  const uint32_t i = region.index(gpsn);
  Slot& s = region.meta[i];
  if (!s.used || s.psn != gpsn || s.state == SlotState::kEmpty ||
      s.state == SlotState::kAggregating) {
    ++counters_.downward_unexpected;
    return;
  }
  if (v.opcode() != s.opcode || v.data_len() != s.payload_len) {
    ++counters_.drop_inconsistent;
    ++g.stats.dropped;
    return;
  }
  if (s.state == SlotState::kComplete) {
    // The parent re-sent a result because a child below retransmitted: forward it again.
    ++counters_.downward_duplicate;
    replicate(g, it, s.opcode, s.immdt, region.result_of(i), s.payload_len, -1, out);
    return;
  }
  ++counters_.downward_accepted;
  ++g.stats.downward_accepted;
  std::memcpy(region.result_of(i), v.payload(), s.payload_len);
  s.state = SlotState::kComplete;
  replicate(g, it, s.opcode, s.immdt, region.result_of(i), s.payload_len, -1, out);
  recycle_epic(g, gpsn);
}

// --- ReplicateData + TranslateHeader ------------------------------------------------------------

void Mode2Engine::replicate(GroupState& g, const Item& it, uint8_t opcode, uint32_t immdt,
                            const uint8_t* payload, uint16_t len, int only_child, TxBatch& out) {
  const GroupConfig& cfg = *g.config;
  const CollectiveRecord& rec = *it.record;
  for (size_t c = 0; c < cfg.children.size(); ++c) {
    if (only_child >= 0 && static_cast<size_t>(only_child) != c) continue;  // -1, -2: all
    if (!child_receives(g, static_cast<int>(c), it)) continue;
    const ChildLink& link = cfg.children[c];
    FrameSpec f;
    f.src = &link.local;
    f.dst = &link.remote;
    f.udp_src_port = link.udp_src_port;
    f.opcode = opcode;
    if (!link.is_rank) {
      f.psn = it.gpsn();
    } else if (it.control) {
      f.psn = rec.recv_ctrl[c];
    } else {
      f.psn = vocab::psn_add(rec.recv_ctrl[c],
                             1 + int64_t{rec.shape.recv_index(link.first_rank, it.j)});
    }
    f.ack_req = true;  // every result is acknowledged: the ACKs drive the senders' windows
    f.immdt = immdt;
    f.payload = payload;
    f.payload_len = len;
    emit(link.port, f, out);
    if (only_child == -1) {
      ++counters_.results_replicated;
      ++g.stats.results_replicated;
    }
  }
}

void Mode2Engine::send_up(GroupState& g, uint32_t gpsn, uint8_t opcode, uint32_t immdt,
                          const uint8_t* payload, uint16_t len, TxBatch& out) {
  const ParentLink& link = *g.config->parent;
  FrameSpec f;
  f.src = &link.local;
  f.dst = &link.remote;
  f.udp_src_port = link.udp_src_port;
  f.opcode = opcode;
  f.psn = gpsn;
  f.immdt = immdt;
  f.payload = payload;
  f.payload_len = len;
  emit(link.port, f, out);
}

void Mode2Engine::send_ack(GroupState& /*g*/, const Endpoint& src, const Endpoint& dst,
                           uint16_t port, uint16_t udp_port, uint32_t psn, uint8_t syndrome,
                           TxBatch& out) {
  FrameSpec f;
  f.src = &src;
  f.dst = &dst;
  f.udp_src_port = udp_port;
  f.opcode = w::op::kAck;
  f.psn = psn;
  f.aeth_syndrome = syndrome;
  emit(port, f, out);
}

void Mode2Engine::emit(uint16_t port, const FrameSpec& f, TxBatch& out) {
  const size_t n = frame_size(f);
  out.commit(port, build_frame(out.reserve(n), n, f));
  ++counters_.tx_frames;
}

}  // namespace epic::engine
