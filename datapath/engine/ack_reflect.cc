#include "datapath/engine/ack_reflect.h"

#include <algorithm>

#include "datapath/engine/recycle_buffer.h"
#include "datapath/engine/translate_psn.h"
#include "proto/vocab/aeth.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

namespace {
namespace aeth = vocab::aeth;
constexpr uint8_t kAck = aeth::kAckUnlimitedCredits;
bool is_nak_seq(uint8_t s) { return s == aeth::kNakPsnSequenceError; }
bool is_rnr(uint8_t s) { return aeth::kind(s) == aeth::Kind::kRnrNak; }

// Everything below rank or switch child `c` has acknowledged up to this group PSN.
uint32_t child_dest_frontier(const GroupState& g, size_t c) {
  if (!g.config->children[c].is_rank) return g.child_frontier[c];
  // Everything before the next result the rank has not acknowledged.
  const uint32_t next = vocab::psn_add(g.acked_recv_psn[c], 1);
  const PacketRef ref = locate_recv(g, static_cast<int>(c), next);
  if (ref.known()) return vocab::psn_add(ref.gpsn(), -1);
  if (next == g.next_recv_ctrl[c]) return vocab::psn_add(g.next_g_ctrl, -1);  // all known ones
  return g.subtree_frontier;  // its collective left the history: claim nothing new
}
}  // namespace

void repeat_frontier_down(GroupState& g, size_t child, Actions& a) {
  a.send_ack(g.config->children[child], g.global_frontier, kAck, *g.config);
  ++a.counters.frontiers_sent;
}

void repeat_frontier_up(GroupState& g, Actions& a) {
  if (!g.config->parent) return;
  a.send_ack(*g.config->parent, g.subtree_frontier, kAck, *g.config);
  ++a.counters.frontiers_sent;
}

void receive_rank_ack(GroupState& g, const PacketMeta& m, Actions& a) {
  ++a.counters.acks_reflected;
  ++g.stats.acks_from_ranks;
  const size_t c = m.child_index();
  const ChildLink& link = g.config->children[c];
  const uint8_t syndrome = m.syndrome;
  const bool nak = is_nak_seq(syndrome) || is_rnr(syndrome);
  if (aeth::kind(syndrome) != aeth::Kind::kAck && !nak)
    return;  // fatal NAKs from a rank: nothing to reflect
  // Results up to `acked` (its receive PSNs) arrived; a NAK names the first one missing.
  const uint32_t acked = nak ? vocab::psn_add(m.psn, -1) : m.psn;
  bool advanced = false;
  if (vocab::psn_gt(acked, g.acked_recv_psn[c]) && locate_recv(g, m.child, acked).known()) {
    g.acked_recv_psn[c] = acked;
    advanced = true;
  }
  ack_rank_uploads(g, m.child, !advanced && !nak, a);
  if (nak) {
    // The rank misses result m.psn. If it also sent that packet, make it retransmit its
    // upload: the duplicate makes us re-send the result to it alone. Never NAK beyond the
    // uploads we can acknowledge (a NAK acknowledges everything before its PSN).
    const PacketRef ref = locate_recv(g, m.child, m.psn);
    if (ref.known() && (ref.control || ref.record->shape.sends(ref.j, link.first_rank))) {
      uint32_t psn = send_psn(g, c, ref);
      const uint32_t limit = vocab::psn_add(g.acked_send_psn[c], 1);
      if (vocab::psn_gt(psn, limit)) psn = limit;
      a.send_ack(link, psn, syndrome, *g.config);
      ++a.counters.upload_acks_sent;
    }
  }
  update_subtree_frontier(g, a);
  // A repeated ACK: someone below waits; our last report upward may have been lost.
  if (!advanced) repeat_frontier_up(g, a);
}

void receive_child_frontier(GroupState& g, const PacketMeta& m, Actions& a) {
  ++a.counters.frontier_from_child;
  const size_t c = m.child_index();
  if (vocab::psn_gt(m.psn, g.child_frontier[c])) {
    g.child_frontier[c] = m.psn;
    update_subtree_frontier(g, a);
  } else {
    // A repeated report: the child may have lost our frontier; ours may be lost upward.
    repeat_frontier_down(g, c, a);
    repeat_frontier_up(g, a);
  }
}

void update_subtree_frontier(GroupState& g, Actions& a) {
  const size_t n = g.config->children.size();
  uint32_t f = child_dest_frontier(g, 0);
  for (size_t c = 1; c < n; ++c) {
    const uint32_t x = child_dest_frontier(g, c);
    if (vocab::psn_lt(x, f)) f = x;
  }
  if (!vocab::psn_gt(f, g.subtree_frontier)) return;
  g.subtree_frontier = f;
  if (g.config->parent) {
    a.send_ack(*g.config->parent, f, kAck, *g.config);
    ++a.counters.frontiers_sent;
  } else {
    receive_group_frontier(g, f, a);
  }
}

namespace {

// A collective is complete once the group frontier passed its last packet: every receiver has
// acknowledged every result. Records are taken in order; one that left the history ring before
// it was counted is complete when the oldest kept one is (frontiers only advance).
void count_completed_collectives(GroupState& g) {
  const uint64_t kept_from =
      g.collectives > g.history.size() ? g.collectives - g.history.size() : 0;
  while (g.completed_records < g.collectives) {
    const uint64_t k = std::max(g.completed_records, kept_from);
    const CollectiveRecord& r = g.history[k % g.history.size()];
    if (vocab::psn_gt(vocab::psn_add(r.g_ctrl, r.shape.n_data), g.global_frontier)) return;
    g.stats.collectives_completed += k + 1 - g.completed_records;
    g.completed_records = k + 1;
  }
}

}  // namespace

void receive_group_frontier(GroupState& g, uint32_t frontier, Actions& a) {
  const GroupConfig& cfg = *g.config;
  if (!vocab::psn_gt(frontier, g.global_frontier)) {
    // A repeated frontier from the parent: nothing new, but children may have lost ours.
    if (cfg.parent) {
      for (size_t c = 0; c < cfg.children.size(); ++c) {
        if (cfg.children[c].is_rank) ack_rank_uploads(g, static_cast<int>(c), true, a);
      }
    }
    return;
  }
  const uint32_t old = g.global_frontier;
  g.global_frontier = frontier;
  count_completed_collectives(g);
  a.counters.slots_recycled += recycle_acknowledged(g, old, frontier);
  for (size_t c = 0; c < cfg.children.size(); ++c) {
    const ChildLink& l = cfg.children[c];
    if (l.is_rank) {
      ack_rank_uploads(g, static_cast<int>(c), false, a);
    } else {
      a.send_ack(l, frontier, kAck, *g.config);
      ++a.counters.frontiers_sent;
    }
  }
}

void ack_rank_uploads(GroupState& g, int child, bool force, Actions& a) {
  const auto c = static_cast<size_t>(child);
  const ChildLink& link = g.config->children[c];
  const uint16_t rank = link.first_rank;
  const PacketRef own = locate_recv(g, child, g.acked_recv_psn[c]);
  bool advanced = false;
  // Bounded by the group's slots (2·MW): a rank has at most MW uploads outstanding, so a longer
  // run can only come from forged state (a huge announced collective and a frontier far ahead);
  // the rest waits for the next call instead of holding the worker.
  const uint32_t budget = 2 * g.config->window;
  uint32_t next = vocab::psn_add(g.acked_send_psn[c], 1);
  for (uint32_t k = 0; k < budget; ++k, next = vocab::psn_add(next, 1)) {
    const PacketRef ref = locate_send(g, child, next);
    if (!ref.known()) break;
    const uint32_t gp = ref.gpsn();
    const bool received_by_all = !vocab::psn_gt(gp, g.global_frontier);
    const bool own_result = own.known() &&
                            (ref.control || ref.record->shape.receives(ref.j, rank)) &&
                            !vocab::psn_gt(gp, own.gpsn());
    if (!received_by_all && !own_result) break;
    g.acked_send_psn[c] = next;
    advanced = true;
  }
  if (!advanced && !force) return;
  a.send_ack(link, g.acked_send_psn[c], kAck, *g.config);
  ++a.counters.upload_acks_sent;
}

}  // namespace epic::engine
