#include "datapath/engine/retransmission.h"

#include "datapath/engine/ack_reflect.h"
#include "datapath/engine/aggregate_data.h"
#include "datapath/engine/replicate_data.h"
#include "proto/vocab/aeth.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

namespace {

// What this switch sent its parent for slot `i`: its stored partial, or its exact partial.
Payload partial_of(SlotRegion& region, uint32_t i) {
  const Slot& s = region.meta[i];
  const UpPayload up = up_payload(region, i);
  return {s.opcode, s.immdt, up.data, up.len, s.ecn};
}

}  // namespace

void answer_acknowledged_upload(GroupState& g, int child, Actions& a) {
  const auto c = static_cast<size_t>(child);
  if (g.config->children[c].is_rank) {
    ack_rank_uploads(g, child, true, a);
  } else {
    repeat_frontier_down(g, c, a);
  }
}

void answer_duplicate_contribution(GroupState& g, int child, const PacketRef& ref, uint32_t i,
                                   uint32_t psn, Actions& a) {
  const GroupConfig& cfg = *g.config;
  const auto c = static_cast<size_t>(child);
  SlotRegion& region = *g.slots;
  const Slot& s = region.meta[i];
  // Someone below retransmits: repeat the frontiers it may be waiting for.
  const ChildLink& l = cfg.children[c];
  if (!l.is_rank) repeat_frontier_down(g, c, a);
  repeat_frontier_up(g, a);
  const Payload result{s.opcode, s.immdt, region.result_of(i), s.payload_len, s.ecn};
  const bool result_for_child = s.state == SlotState::kComplete && child_receives(g, c, ref);
  if (result_for_child) {
    replicate_data(g, ref, result, Fanout::kOne, child, a);
    ++a.counters.results_resent;
  } else if (s.state == SlotState::kComplete) {
    // A contributor that receives nothing (Reduce, ReduceScatter) still waits for the
    // receivers' ACK, whose last copy may be lost: send the result to them again so they
    // acknowledge it again — here, and through the root everywhere else.
    replicate_data(g, ref, result, Fanout::kAgain, a);
    ++a.counters.results_resent;
    if (cfg.parent) send_up(g, ref.gpsn(), partial_of(region, i), a);
  } else if (s.state == SlotState::kSentUp && cfg.parent) {  // only a non-root sends up
    send_up(g, ref.gpsn(), partial_of(region, i), a);
    ++a.counters.partials_resent_up;
  }
  // A rank retransmits because others are slow (contributions missing, or the receivers have
  // not acknowledged yet): answer "receiver not ready", so one slow rank or one lossy path
  // does not make the others fail with retry-exceeded.
  if (!result_for_child && l.is_rank) park_rank(g, child, psn, a);
}

void answer_one_source_retransmission(GroupState& g, int child, uint32_t psn, Actions& a) {
  // Forwarded by the caller; the source is parked: it resends after the RNR timer without
  // spending its retry count on the receivers' losses. It may also be waiting on a frontier
  // report this switch sent up and lost: repeat it, as for a duplicate contribution.
  if (park_rank(g, child, psn, a)) repeat_frontier_up(g, a);
}

bool park_rank(GroupState& g, int child, uint32_t psn, Actions& a) {
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
  a.send_ack(g.config->children[c], oldest, vocab::aeth::rnr_nak(code), *g.config);
  ++a.counters.rnr_naks_sent;
  return true;
}

}  // namespace epic::engine
