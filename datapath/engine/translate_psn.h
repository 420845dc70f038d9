// TranslateHeader, the PSN half: Mode-II connection translation. Every rank
// child numbers its uploads and results in its own RC PSN sequences; switch
// children and the parent use the group PSN space. The collectives announced
// so far (GroupState::history) say where each sits: this module turns a PSN of
// one sequence into the packet of a collective (a PacketRef: the collective's
// record, control message or data packet j, its group PSN) and a packet into
// the PSN of any child's sequence (translate_header.h writes it into the frame).
//
// Record access: a sequence's records are contiguous, so the lookup searches back
// from the newest record, galloping then halving: one probe for a packet of the
// newest collective or a PSN not announced yet, two for the collective before,
// at most 25 whatever the history (history_records(MW) records, group_instance.h).
// docs/mode2.md states the bound.
// Hot path: no allocation; reads the group's state, create_record() writes it.
#pragma once

#include <cstdint>

#include "datapath/engine/group.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

// One packet of an announced collective: its control message, or data packet j.
struct PacketRef {
  const CollectiveRecord* record = nullptr;  // nullptr: in no collective the group remembers
  bool control = false;
  uint32_t j = 0;

  bool known() const { return record != nullptr; }
  // Its group PSN (the PSN switch children, the parent and the slots use).
  uint32_t gpsn() const { return vocab::psn_add(record->g_ctrl, control ? 0 : 1 + int64_t{j}); }
};

// Whether edge `e` (a child, or kParentEdge) numbers its packets in sequences of its own —
// the packets the ranks behind it send, and those they receive — rather than in the group PSN
// space: a rank child always; in Mode-III every edge, so that each hop is an RC connection
// without gaps (Mode-II's switch children and parent use the group PSN space).
inline bool own_sequences(const GroupState& g, size_t e) {
  const bool mode3 = g.config->mode == vocab::GroupMode::kMode3;
  return e == kParentEdge ? mode3 : g.config->children[e].is_rank || mode3;
}
// The ranks behind edge `e`: [first, first + count). Behind the parent edge, in the direction
// this switch sends, are this switch's own ranks (its subtree).
struct RankRange {
  uint16_t first = 0;
  uint16_t count = 0;
};
inline RankRange edge_ranks(const GroupState& g, size_t e) {
  if (e == kParentEdge) return {g.subtree_first, g.subtree_ranks};
  const ChildLink& l = g.config->children[e];
  return {l.first_rank, l.rank_count};
}

// The packet at `psn` of a child's send sequence (a Mode-II switch child's is the group PSN
// space).
PacketRef locate_send(const GroupState& g, int child, uint32_t psn);
// The packet at `psn` of a child's receive sequence (a rank child, or any child in Mode-III).
PacketRef locate_recv(const GroupState& g, int child, uint32_t psn);
// Mode-III: the packet at `psn` of the sequence this switch sends to its parent (its subtree's
// uploads), and of the one it receives from it (results for its subtree).
PacketRef locate_parent_send(const GroupState& g, uint32_t psn);
PacketRef locate_parent_recv(const GroupState& g, uint32_t psn);
// The packet at group PSN `gpsn`.
PacketRef locate_group(const GroupState& g, uint32_t gpsn);

// Announces a collective: a new record at the end of every sequence (overwriting the oldest
// record kept); advances the next control PSNs.
const CollectiveRecord* create_record(GroupState& g, const CollectiveDescriptor& d);

// The PSN `ref` has in edge `e`'s receive sequence (a Mode-II switch child's: the group PSN).
uint32_t recv_psn(const GroupState& g, size_t e, const PacketRef& ref);
// The PSN `ref` has in edge `e`'s send sequence (its ranks must send it; a Mode-II switch
// child's: the group PSN).
uint32_t send_psn(const GroupState& g, size_t e, const PacketRef& ref);

// Whether any rank below child `child` sends (receives) `ref`.
inline bool child_sends(const GroupState& g, size_t child, const PacketRef& ref) {
  if (ref.control) return true;
  const ChildLink& l = g.config->children[child];
  return ref.record->shape.sends_any(l.first_rank, l.rank_count, ref.j);
}
inline bool child_receives(const GroupState& g, size_t child, const PacketRef& ref) {
  if (ref.control) return true;
  const ChildLink& l = g.config->children[child];
  return ref.record->shape.receives_any(l.first_rank, l.rank_count, ref.j);
}
// The children whose contribution completes `ref`'s aggregation here.
inline uint16_t fan_in(const GroupState& g, const PacketRef& ref) {
  uint16_t n = 0;
  for (size_t c = 0; c < g.config->children.size(); ++c) n += child_sends(g, c, ref) ? 1 : 0;
  return n;
}

}  // namespace epic::engine
