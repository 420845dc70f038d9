#include "datapath/engine/mode2.h"

#include "datapath/engine/ack_reflect.h"
#include "datapath/engine/aggregate_data.h"
#include "datapath/engine/check_duplicate.h"
#include "datapath/engine/congestion.h"
#include "datapath/engine/locate_upload.h"
#include "datapath/engine/recycle_buffer.h"
#include "datapath/engine/replicate_data.h"
#include "datapath/engine/retransmission.h"
#include "datapath/engine/straggler.h"
#include "datapath/engine/translate_psn.h"
#include "proto/vocab/collective_map.h"
#include "proto/vocab/psn.h"

namespace epic::engine::mode2 {

namespace {

// A contribution to a multi-source packet (or any control message): CheckDuplicate,
// AggregateData, and on completion ReplicateData and RecycleBuffer.
void contribute(GroupState& g, const PacketMeta& m, const PacketRef& ref, Actions& a) {
  EngineCounters& n = a.counters;
  const uint32_t gpsn = ref.gpsn();
  SlotRegion& region = *g.slots;
  const uint32_t i = region.index(gpsn);
  Slot& s = region.meta[i];
  // An exact partial stands for the plain length of its elements (checked by locate_upload).
  const auto len = static_cast<uint16_t>(upload_len(g, m, ref));
  const SlotClaim claim{ref.control,
                        m.opcode,
                        len,
                        ref.control ? kControlImm : 0,
                        ref.record->shape.desc.dtype,
                        ref.record->shape.desc.op};
  switch (check_duplicate(s, gpsn, m.child, claim)) {
    case SlotVerdict::kStale:
      ++n.upward_stale;
      return;
    case SlotVerdict::kBusy:
      ++n.upward_slot_busy;
      return;
    case SlotVerdict::kDuplicate:
      ++n.upward_duplicate;
      ++g.stats.retransmissions;
      answer_duplicate_contribution(g, m.child, ref, i, m.psn, a);
      return;
    case SlotVerdict::kFresh:
      break;
  }
  const Source from = g.config->children[m.child_index()].is_rank ? Source::kRank : Source::kSwitch;
  const Completion then = g.config->parent ? Completion::kPartialUp : Completion::kResult;
  const uint16_t fan = fan_in(g, ref);
  const Contribution r =
      aggregate_data(region, i, m.child, from, m.opcode, m.payload, m.payload_len, fan, then);
  if (r == Contribution::kInconsistent) {
    drop(g, n.drop_inconsistent);
    return;
  }
  ++n.upward_accepted;
  ++g.stats.upward_accepted;
  note_ecn(s, m.ecn);
  if (time_contribution(g.straggler, gpsn, m.child, r == Contribution::kCompleted, fan, a.now_ns) ==
      Timed::kTied) {
    ++g.stats.slots_tied;
  }
  if (r == Contribution::kAdded) return;
  ++n.aggregations_completed;
  ++g.stats.aggregations_completed;
  const Payload result{s.opcode, s.immdt, region.result_of(i), s.payload_len, s.ecn};
  if (g.config->parent) {
    s.state = SlotState::kSentUp;
    const UpPayload up = up_payload(region, i);
    send_up(g, gpsn, {s.opcode, s.immdt, up.data, up.len, s.ecn}, a);
    ++n.partials_sent_up;
  } else {
    s.state = SlotState::kComplete;
    if (!s.control) g.stats.result_bytes += s.payload_len;
    replicate_data(g, ref, result, Fanout::kFirst, a);
    if (recycle_completed(g, gpsn)) ++n.slots_recycled;
  }
}

void upward(GroupState& g, const PacketMeta& m, Actions& a) {
  EngineCounters& n = a.counters;
  const GroupConfig& cfg = *g.config;
  const size_t c = m.child_index();
  const PacketRef ref = locate_upload(g, m, a);
  if (!ref.known()) return;
  const uint32_t gpsn = ref.gpsn();
  // A rank's upload at or below the newest one it has sent is a retransmission.
  const bool resent = !vocab::psn_gt(m.psn, g.max_send_psn[c]);
  if (cfg.children[c].is_rank && !resent) g.max_send_psn[c] = m.psn;
  if (!vocab::psn_gt(gpsn, g.global_frontier)) {
    ++n.upward_done;
    ++g.stats.retransmissions;
    answer_acknowledged_upload(g, m.child, a);
    return;
  }
  if (!m.control && !ref.record->shape.multi_source()) {
    // One source (Broadcast, AllGather): nothing to aggregate, no slot. Up toward the root, or
    // at the root down to every child with a receiver; a retransmission simply travels again.
    ++n.upward_accepted;
    ++g.stats.upward_accepted;
    if (cfg.children[c].is_rank && resent) answer_one_source_retransmission(g, m.child, m.psn, a);
    const Payload p{m.opcode, 0, m.payload, m.payload_len, m.ecn};
    if (cfg.parent) {
      send_up(g, gpsn, p, a);
      ++n.partials_sent_up;
    } else {
      if (!(cfg.children[c].is_rank && resent)) g.stats.result_bytes += m.payload_len;
      replicate_data(g, ref, p, Fanout::kFirst, a);
    }
    return;
  }
  contribute(g, m, ref, a);
}

void downward(GroupState& g, const PacketMeta& m, Actions& a) {
  EngineCounters& n = a.counters;
  const PacketRef ref = locate_group(g, m.psn);
  if (!ref.known()) {
    drop(g, n.drop_unknown_psn);
    return;
  }
  if (ref.control != m.control ||
      (!ref.control && m.payload_len != ref.record->shape.payload_len(ref.j))) {
    drop(g, n.drop_inconsistent);
    return;
  }
  if (!vocab::psn_gt(m.psn, g.global_frontier)) {
    ++n.downward_duplicate;  // every receiver below already has it
    return;
  }
  if (!ref.control && !ref.record->shape.multi_source()) {
    ++n.downward_accepted;
    ++g.stats.downward_accepted;
    g.stats.result_bytes += m.payload_len;
    replicate_data(g, ref, {m.opcode, 0, m.payload, m.payload_len, m.ecn}, Fanout::kFirst, a);
    return;
  }
  SlotRegion& region = *g.slots;
  const uint32_t i = region.index(m.psn);
  Slot& s = region.meta[i];
  if (!s.used || s.psn != m.psn || s.state == SlotState::kEmpty ||
      s.state == SlotState::kAggregating) {
    ++n.downward_unexpected;
    return;
  }
  if (m.opcode != s.opcode || m.payload_len != s.payload_len) {
    drop(g, n.drop_inconsistent);
    return;
  }
  // The parent's result carries the ECN of every contribution of the group (ours included).
  if (s.state != SlotState::kComplete) s.ecn = m.ecn;
  const Payload result{s.opcode, s.immdt, region.result_of(i), s.payload_len, s.ecn};
  if (s.state == SlotState::kComplete) {
    // The parent re-sent a result because a child below retransmitted: forward it again.
    ++n.downward_duplicate;
    replicate_data(g, ref, result, Fanout::kFirst, a);
    return;
  }
  ++n.downward_accepted;
  ++g.stats.downward_accepted;
  if (!s.control) g.stats.result_bytes += s.payload_len;
  store_parent_result(region, i, m.opcode, m.payload, m.payload_len);
  replicate_data(g, ref, result, Fanout::kFirst, a);
  if (recycle_completed(g, m.psn)) ++n.slots_recycled;
}

// A frontier says every rank below (a child's) or every rank (the parent's) has the results up
// to its PSN. Those results passed through this switch, so their collective was announced here:
// a frontier beyond the newest announced PSN can only be forged (issue 16). It is refused before
// it moves anything (recycling, ACKs of uploads). PSNs 2^23 or more ahead read as behind and are
// taken as a repeated frontier, which changes nothing.
bool frontier_announced(const GroupState& g, uint32_t psn) {
  return !vocab::psn_gt(psn, vocab::psn_add(g.next_g_ctrl, -1));
}

}  // namespace

void handle(const PacketMeta& m, Actions& a) {
  GroupState& g = *m.group;
  switch (m.kind) {
    case PacketKind::kUpload:
      upward(g, m, a);
      return;
    case PacketKind::kResult:
      downward(g, m, a);
      return;
    case PacketKind::kRankAck:
      receive_rank_ack(g, m, a);
      return;
    case PacketKind::kChildFrontier:
      if (!frontier_announced(g, m.psn)) {
        drop(g, a.counters.drop_frontier_ahead);
        return;
      }
      receive_child_frontier(g, m, a);
      return;
    case PacketKind::kParentFrontier:
      if (!frontier_announced(g, m.psn)) {
        drop(g, a.counters.drop_frontier_ahead);
        return;
      }
      ++a.counters.frontier_from_parent;
      receive_group_frontier(g, m.psn, a);
      return;
    case PacketKind::kCnp:
      forward_cnp(g, m, a);
      return;
    case PacketKind::kUnsupported:
      drop(g, a.counters.drop_unsupported);
      return;
  }
}

}  // namespace epic::engine::mode2
