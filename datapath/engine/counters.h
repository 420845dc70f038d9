// Counters of one Mode-II engine instance (one worker). Every frame given to
// process() is counted in `rx_frames` and in exactly one disposition; drops
// are counted per reason. EPIC's counter identities hold for a lossless
// AllReduce with R ranks and N packets (control message included) at a single
// switch: upward_accepted = R*N, aggregations_completed = N,
// results_replicated = R*N, acks_reflected = ACKs the ranks sent.
//
// Declared once, in EPIC_ENGINE_COUNTERS: X(field, kind, label, help). The list
// generates the struct, rx_accounted() and incd's Prometheus series
// (incd_engine_frames_total{disposition=label}, incd_engine_drops_total{reason=label},
// incd_engine_events_total{event=label}; daemon/metrics.cc).
#pragma once

#include <cstdint>

namespace epic::engine {

enum class CounterKind : uint8_t { kTotal, kDisposition, kDrop, kEvent };

// clang-format off
#define EPIC_ENGINE_COUNTERS(X)                                                                     \
  X(rx_frames, kTotal, "rx_frames", "frames given to process()")                                  \
  /* dispositions: every frame in exactly one of these or one drop */                             \
  X(upward_accepted, kDisposition, "upward_accepted", "contribution added to a slot")             \
  X(upward_duplicate, kDisposition, "upward_duplicate", "child already contributed")              \
  X(upward_stale, kDisposition, "upward_stale", "for a PSN whose slot was already recycled")      \
  X(upward_slot_busy, kDisposition, "upward_slot_busy", "slot held by another live PSN")          \
  X(upward_done, kDisposition, "upward_done", "every receiver already ACKed: ACK re-sent")        \
  X(downward_accepted, kDisposition, "downward_accepted", "result from the parent, replicated")   \
  X(downward_duplicate, kDisposition, "downward_duplicate", "result for a complete slot")         \
  X(downward_unexpected, kDisposition, "downward_unexpected", "result nobody here waits for")     \
  X(acks_reflected, kDisposition, "acks_reflected", "rank ACK/NAK processed")                     \
  X(frontier_from_child, kDisposition, "frontier_from_child", "ACK frontier from a lower switch") \
  X(frontier_from_parent, kDisposition, "frontier_from_parent", "global ACK frontier from above") \
  X(hop_taken, kDisposition, "hop_taken", "Mode-III: taken at the hop's ePSN into a Pipe")        \
  X(hop_ack_again, kDisposition, "hop_ack_again", "Mode-III: behind the hop's ePSN, ACKed again")  \
  X(hop_out_of_order, kDisposition, "hop_out_of_order", "Mode-III: ahead of ePSN (a loss): NAKed")\
  X(hop_pipe_full, kDisposition, "hop_pipe_full", "Mode-III: beyond the Pipe's range: RNR NAK")   \
  X(hop_acks, kDisposition, "hop_acks", "Mode-III: ACK/NAK from an out-endpoint")                 \
  X(cnps, kDisposition, "cnps", "CNP from a member: forwarded (Mode-II) or consumed (Mode-III)")  \
  /* drops, by reason */                                                                           \
  X(drop_parse, kDrop, "parse", "not a well-formed RoCEv2 frame (or bad ICRC)")                   \
  X(drop_no_route, kDrop, "no_route", "(IP, QP) is not a group endpoint here")                    \
  X(drop_edge_port, kDrop, "edge_port", "edge binding: came in on another port than the edge's")  \
  X(drop_edge_mac, kDrop, "edge_mac", "edge binding: source MAC is not the edge member's")        \
  X(drop_edge_ipv4, kDrop, "edge_ipv4", "edge binding: source IPv4 is not the edge member's")     \
  X(drop_edge_udp_port, kDrop, "edge_udp_port", "edge binding: UDP source port outside the range")\
  X(drop_edge_pkey, kDrop, "edge_pkey", "edge binding: P_Key does not match the group's")         \
  X(drop_data_before_control, kDrop, "data_before_control", "data before its control message")    \
  X(drop_unknown_psn, kDrop, "unknown_psn", "PSN in no known collective of that child")           \
  X(drop_bad_control, kDrop, "bad_control", "control message malformed or disagreeing")           \
  X(drop_inconsistent, kDrop, "inconsistent", "opcode/length disagrees with slot or collective")  \
  X(drop_arith_unfit, kDrop, "arith_unfit", "collective's accumulator exceeds the group's slots") \
  X(drop_unsupported, kDrop, "unsupported", "opcode or collective type not handled")              \
  X(drop_frontier_ahead, kDrop, "frontier_ahead", "Mode-II: frontier beyond every announced PSN") \
  X(drop_ack_refused, kDrop, "ack_refused", "Mode-III: ACK/NAK of a PSN never sent or unknown")  \
  X(drop_group_failed, kDrop, "group_failed", "Mode-III: the group's hop passed its retry limit")  \
  /* events */                                                                                     \
  X(aggregations_completed, kEvent, "aggregations_completed", "slots whose aggregation completed")\
  X(results_replicated, kEvent, "results_replicated", "result frames sent to children")           \
  X(results_resent, kEvent, "results_resent", "result re-sent to one child after its duplicate")  \
  X(partials_sent_up, kEvent, "partials_sent_up", "partial aggregates sent to the parent")        \
  X(partials_resent_up, kEvent, "partials_resent_up", "partial aggregates sent again")            \
  X(slots_recycled, kEvent, "slots_recycled", "slots freed by RecycleBuffer")                     \
  X(upload_acks_sent, kEvent, "upload_acks_sent", "ACKs (and NAKs) sent to ranks for uploads")    \
  X(frontiers_sent, kEvent, "frontiers_sent", "ACK frontiers sent up or down the tree")           \
  X(rnr_naks_sent, kEvent, "rnr_naks_sent", "RNR NAKs to a rank retransmitting while others lag") \
  X(hop_acks_sent, kEvent, "hop_acks_sent", "Mode-III: ACKs sent by hops (coalesced per burst)")  \
  X(hop_naks_sent, kEvent, "hop_naks_sent", "Mode-III: PSN-sequence-error NAKs sent by hops")      \
  X(hop_rnr_naks_sent, kEvent, "hop_rnr_naks_sent", "Mode-III: RNR NAKs sent: the Pipe was full")  \
  X(hop_sent, kEvent, "hop_sent", "Mode-III: results and partials sent on by Pipes")              \
  X(hop_resent, kEvent, "hop_resent", "Mode-III: results and partials retransmitted by hops")     \
  X(hop_timeouts, kEvent, "hop_timeouts", "Mode-III: retransmission timer expiries")              \
  X(hop_failures, kEvent, "hop_failures", "Mode-III: hops past their retry limit (group ended)")   \
  X(hop_nudges, kEvent, "hop_nudges", "Mode-III: NAKs/ACKs sent again to a quiet or stuck rank")   \
  X(pipe_entries_recycled, kEvent, "pipe_entries_recycled", "Mode-III: Pipe entries freed")       \
  X(ecn_ce_in, kEvent, "ecn_ce_in", "uploads and results routed to a group that arrived CE")         \
  X(ecn_ce_out, kEvent, "ecn_ce_out", "frames sent marked CE: a contribution to them was CE")      \
  X(cnps_forwarded, kEvent, "cnps_forwarded", "Mode-II: CNPs sent on to the group's other edges")  \
  X(cnps_rate_limited, kEvent, "cnps_rate_limited", "Mode-II: CNPs not sent: that edge had one") \
  X(tx_frames, kEvent, "tx_frames", "frames emitted")
// clang-format on

struct EngineCounters {
#define EPIC_FIELD(field, kind, label, help) uint64_t field = 0;
  EPIC_ENGINE_COUNTERS(EPIC_FIELD)
#undef EPIC_FIELD

  // Frames counted in a disposition or a drop: equals rx_frames after every process().
  uint64_t rx_accounted() const {
    uint64_t n = 0;
#define EPIC_SUM(field, kind, label, help)                                                       \
  if (CounterKind::kind == CounterKind::kDisposition || CounterKind::kind == CounterKind::kDrop) \
    n += field;
    EPIC_ENGINE_COUNTERS(EPIC_SUM)
#undef EPIC_SUM
    return n;
  }

  // Sums another instance's counters (workers, switches) into this one.
  EngineCounters& operator+=(const EngineCounters& o) {
#define EPIC_ADD(field, kind, label, help) field += o.field;
    EPIC_ENGINE_COUNTERS(EPIC_ADD)
#undef EPIC_ADD
    return *this;
  }
};

}  // namespace epic::engine
