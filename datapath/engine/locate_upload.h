// The checks every mode makes of an upload (a child's SEND going up) before it
// acts on it: TranslateHeader's lookup of the packet in the child's send
// sequence (translate_psn.h) — or, at the child's next control PSN, the
// announcement of a new collective (create_record) —, then that the frame
// carries what that packet must: the same control descriptor, or a data packet's
// length (an exact partial's element count), no immediate, from a child whose ranks send it. Shared
// by Mode-II (mode2.cc) and Mode-III (mode3.cc); a refused upload is dropped and counted by reason.
// Hot path: no allocation.
#pragma once

#include "datapath/engine/actions.h"
#include "datapath/engine/packet_meta.h"
#include "datapath/engine/translate_psn.h"

namespace epic::engine {

// The packet upload `m` (PacketKind::kUpload) carries; unknown when it was dropped (counted in
// drop_data_before_control, drop_unknown_psn, drop_bad_control or drop_inconsistent).
PacketRef locate_upload(GroupState& g, const PacketMeta& m, Actions& a);

// Whether upload `m` of packet `ref` carries a switch child's exact partial (AUTO,
// proto/vocab/partial.h): a data packet of an exact sum (KULISCH_FIXED) from a switch child.
bool carries_partial(const GroupState& g, const PacketMeta& m, const PacketRef& ref);

// The payload length upload `m` stands for: its own, or for an exact partial the plain length
// of the elements its header says it holds (UINT32_MAX when the header is not a partial of the
// collective's dtype).
uint32_t upload_len(const GroupState& g, const PacketMeta& m, const PacketRef& ref);

// Counts a dropped frame of group `g` under `reason`.
inline void drop(GroupState& g, uint64_t& reason) {
  ++reason;
  ++g.stats.dropped;
}

}  // namespace epic::engine
