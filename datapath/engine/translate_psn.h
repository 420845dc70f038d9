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

// The packet at `psn` of a child's send sequence (a switch child's is the group PSN space).
PacketRef locate_send(const GroupState& g, int child, uint32_t psn);
// The packet at `psn` of a rank child's receive sequence.
PacketRef locate_recv(const GroupState& g, int child, uint32_t psn);
// The packet at group PSN `gpsn`.
PacketRef locate_group(const GroupState& g, uint32_t gpsn);

// Announces a collective: a new record at the end of every sequence (overwriting the oldest
// record kept); advances the next control PSNs.
const CollectiveRecord* create_record(GroupState& g, const CollectiveDescriptor& d);

// The PSN `ref` has in child `child`'s receive sequence (a switch child's: the group PSN).
uint32_t recv_psn(const GroupState& g, size_t child, const PacketRef& ref);
// The PSN `ref` has in rank child `child`'s send sequence (it must send it).
uint32_t send_psn(const GroupState& g, size_t child, const PacketRef& ref);

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
