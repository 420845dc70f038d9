// Counters of one Mode-II engine instance (one worker). Every frame given to
// process() is counted in `rx_frames` and in exactly one disposition; drops
// are counted per reason. EPIC's counter identities hold for a lossless
// AllReduce with R ranks and N packets (control message included) at a single
// switch: upward_accepted = R*N, aggregations_completed = N,
// results_replicated = R*N, acks_reflected = ACKs the ranks sent.
#pragma once

#include <cstdint>

namespace epic::engine {

struct EngineCounters {
  uint64_t rx_frames = 0;
  // dispositions
  uint64_t upward_accepted = 0;       // contribution added to a slot
  uint64_t upward_duplicate = 0;      // child already contributed (re-send or drop)
  uint64_t upward_stale = 0;          // for a PSN whose slot was already recycled
  uint64_t upward_slot_busy = 0;      // slot held by another live PSN (window violated)
  uint64_t downward_accepted = 0;     // result from the parent, replicated
  uint64_t downward_duplicate = 0;    // result for a slot already complete
  uint64_t downward_unexpected = 0;   // result for a PSN this switch is not waiting for
  uint64_t acks_reflected = 0;        // rank ACK/NAK processed (its uploads' ACK follows from it)
  uint64_t frontier_from_child = 0;   // ACK frontier reported by a lower switch
  uint64_t frontier_from_parent = 0;  // global ACK frontier from the parent
  uint64_t upward_done = 0;           // for a PSN every receiver already ACKed: ACK re-sent
  uint64_t drop_parse = 0;            // not a well-formed RoCEv2 frame (or bad ICRC)
  uint64_t drop_no_route = 0;         // (IP, QP) is not a group endpoint here
  uint64_t drop_data_before_control = 0;
  uint64_t drop_unknown_psn = 0;   // PSN in no known collective of that child
  uint64_t drop_bad_control = 0;   // control message malformed or disagreeing
  uint64_t drop_inconsistent = 0;  // opcode/length disagrees with the slot or the collective
  uint64_t drop_unsupported = 0;   // opcode or collective type this engine does not handle
  // events
  uint64_t aggregations_completed = 0;
  uint64_t results_replicated = 0;  // result frames sent to children (first time)
  uint64_t results_resent = 0;      // result re-sent to one child after its duplicate
  uint64_t partials_sent_up = 0;
  uint64_t partials_resent_up = 0;
  uint64_t slots_recycled = 0;
  uint64_t upload_acks_sent = 0;  // ACKs (and NAKs) sent to ranks for their uploads
  uint64_t frontiers_sent = 0;
  uint64_t rnr_naks_sent = 0;  // to a rank retransmitting while others are slow
  uint64_t tx_frames = 0;

  uint64_t rx_accounted() const {
    return upward_accepted + upward_duplicate + upward_stale + upward_slot_busy + upward_done +
           downward_accepted + downward_duplicate + downward_unexpected + acks_reflected +
           frontier_from_child + frontier_from_parent + drop_parse + drop_no_route +
           drop_data_before_control + drop_unknown_psn + drop_bad_control + drop_inconsistent +
           drop_unsupported;
  }
};

}  // namespace epic::engine
