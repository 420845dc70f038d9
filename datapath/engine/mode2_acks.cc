// Mode2Engine, ACK side (ReceiveAck / SendAck). Who is ACKed when, as the
// EPIC authors' switch does it: an upload is acknowledged once every receiver
// of its packet has acknowledged the result — for AllReduce that is the rank
// itself (its ACK of the result is reflected as the ACK of its upload, at the
// first hop); for Reduce/ReduceScatter the root; for Broadcast/AllGather every
// receiver. To know the latter across a tree, each switch reports its subtree's
// ACK frontier (every packet up to it acknowledged by all receivers below) to
// its parent, and the root sends the group's frontier down; slots whose PSN the
// frontier passed are recycled. Frontier frames are RoCE ACKs on the switch
// links; a lost one is repeated when a duplicate shows that someone waits.
#include "datapath/engine/mode2_engine.h"
#include "proto/vocab/aeth.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

namespace w = epic::wire;

namespace {
namespace aeth = vocab::aeth;
constexpr uint8_t kAckSyndrome = aeth::kAckUnlimitedCredits;
bool is_nak_seq(uint8_t s) { return s == aeth::kNakPsnSequenceError; }
bool is_rnr(uint8_t s) { return aeth::kind(s) == aeth::Kind::kRnrNak; }
}  // namespace

void Mode2Engine::rank_ack(GroupState& g, int child, const w::PacketView& v, TxBatch& out) {
  ++counters_.acks_reflected;
  ++g.stats.acks_from_ranks;
  const auto c = static_cast<size_t>(child);
  const ChildLink& link = g.config->children[c];
  const uint8_t syndrome = v.aeth().syndrome;
  const bool nak = is_nak_seq(syndrome) || is_rnr(syndrome);
  if (aeth::kind(syndrome) != aeth::Kind::kAck && !nak)
    return;  // fatal NAKs from a rank: nothing to reflect
  // Results up to `acked` (its receive PSNs) arrived; a NAK names the first one missing.
  const uint32_t acked = nak ? vocab::psn_add(v.psn(), -1) : v.psn();
  bool advanced = false;
  if (vocab::psn_gt(acked, g.acked_recv_psn[c]) && locate_recv(g, child, acked).record != nullptr) {
    g.acked_recv_psn[c] = acked;
    advanced = true;
  }
  ack_rank_uploads(g, child, !advanced && !nak, out);
  if (nak) {
    // The rank misses result v.psn(). If it also sent that packet, make it retransmit its
    // upload: the duplicate makes us re-send the result to it alone. Never NAK beyond the
    // uploads we can acknowledge (a NAK acknowledges everything before its PSN).
    const Item it = locate_recv(g, child, v.psn());
    if (it.record != nullptr && (it.control || it.record->shape.sends(it.j, link.first_rank))) {
      uint32_t psn =
          it.control
              ? it.record->send_ctrl[c]
              : vocab::psn_add(it.record->send_ctrl[c],
                               1 + int64_t{it.record->shape.send_index(link.first_rank, it.j)});
      const uint32_t limit = vocab::psn_add(g.acked_send_psn[c], 1);
      if (vocab::psn_gt(psn, limit)) psn = limit;
      send_ack(g, link.local, link.remote, link.port, link.udp_src_port, psn, syndrome, out);
      ++counters_.upload_acks_sent;
    }
  }
  update_subtree_frontier(g, out);
  if (!advanced && g.config->parent) {
    // A repeated ACK: someone below waits; our last report upward may have been lost.
    const ParentLink& p = *g.config->parent;
    send_ack(g, p.local, p.remote, p.port, p.udp_src_port, g.subtree_frontier, kAckSyndrome, out);
    ++counters_.frontiers_sent;
  }
}

uint32_t Mode2Engine::child_dest_frontier(const GroupState& g, int child) const {
  const auto c = static_cast<size_t>(child);
  if (!g.config->children[c].is_rank) return g.child_frontier[c];
  // Everything before the next result the rank has not acknowledged.
  const uint32_t next = vocab::psn_add(g.acked_recv_psn[c], 1);
  const Item it = locate_recv(g, child, next);
  if (it.record != nullptr) return vocab::psn_add(it.gpsn(), -1);
  if (next == g.next_recv_ctrl[c]) return vocab::psn_add(g.next_g_ctrl, -1);  // all known ones
  return g.subtree_frontier;  // its collective left the history: claim nothing new
}

void Mode2Engine::update_subtree_frontier(GroupState& g, TxBatch& out) {
  const size_t n = g.config->children.size();
  uint32_t f = child_dest_frontier(g, 0);
  for (size_t c = 1; c < n; ++c) {
    const uint32_t x = child_dest_frontier(g, static_cast<int>(c));
    if (vocab::psn_lt(x, f)) f = x;
  }
  if (!vocab::psn_gt(f, g.subtree_frontier)) return;
  g.subtree_frontier = f;
  if (g.config->parent) {
    const ParentLink& p = *g.config->parent;
    send_ack(g, p.local, p.remote, p.port, p.udp_src_port, f, kAckSyndrome, out);
    ++counters_.frontiers_sent;
  } else {
    update_global_frontier(g, f, out);
  }
}

void Mode2Engine::update_global_frontier(GroupState& g, uint32_t frontier, TxBatch& out) {
  const GroupConfig& cfg = *g.config;
  if (!vocab::psn_gt(frontier, g.global_frontier)) {
    // A repeated frontier from the parent: nothing new, but children may have lost ours.
    if (cfg.parent) {
      for (size_t c = 0; c < cfg.children.size(); ++c) {
        if (cfg.children[c].is_rank) ack_rank_uploads(g, static_cast<int>(c), true, out);
      }
    }
    return;
  }
  const uint32_t old = g.global_frontier;
  g.global_frontier = frontier;
  // RecycleBuffer: every receiver of these PSNs has acknowledged them.
  SlotRegion& region = *g.slots;
  const auto span = static_cast<uint32_t>(vocab::psn_diff(frontier, old));
  const uint32_t steps = span < region.nslots ? span : region.nslots;
  for (uint32_t k = 1; k <= steps; ++k) {
    Slot& s = region.meta[region.index(old + k)];
    if (s.used && s.state != SlotState::kEmpty && !vocab::psn_gt(s.psn, frontier)) {
      s.state = SlotState::kEmpty;
      ++counters_.slots_recycled;
    }
  }
  for (size_t c = 0; c < cfg.children.size(); ++c) {
    const ChildLink& l = cfg.children[c];
    if (l.is_rank) {
      ack_rank_uploads(g, static_cast<int>(c), false, out);
    } else {
      send_ack(g, l.local, l.remote, l.port, l.udp_src_port, frontier, kAckSyndrome, out);
      ++counters_.frontiers_sent;
    }
  }
}

void Mode2Engine::ack_rank_uploads(GroupState& g, int child, bool force, TxBatch& out) {
  const auto c = static_cast<size_t>(child);
  const ChildLink& link = g.config->children[c];
  const uint16_t rank = link.first_rank;
  const Item own = locate_recv(g, child, g.acked_recv_psn[c]);
  bool advanced = false;
  for (uint32_t next = vocab::psn_add(g.acked_send_psn[c], 1);; next = vocab::psn_add(next, 1)) {
    const Item it = locate_send(g, child, next);
    if (it.record == nullptr) break;
    const uint32_t gp = it.gpsn();
    const bool received_by_all = !vocab::psn_gt(gp, g.global_frontier);
    const bool own_result = own.record != nullptr &&
                            (it.control || it.record->shape.receives(it.j, rank)) &&
                            !vocab::psn_gt(gp, own.gpsn());
    if (!received_by_all && !own_result) break;
    g.acked_send_psn[c] = next;
    advanced = true;
  }
  if (!advanced && !force) return;
  send_ack(g, link.local, link.remote, link.port, link.udp_src_port, g.acked_send_psn[c],
           kAckSyndrome, out);
  ++counters_.upload_acks_sent;
}

}  // namespace epic::engine
