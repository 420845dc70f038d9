// Congestion: what a Mode-II switch does with a CNP (docs/congestion.md). A rank's NIC that
// receives a result marked CE answers the switch's endpoint with a CNP. In Mode-II the
// switch is transparent, and the result it sent stands for every contribution to it. So the
// CNP goes on to every other edge of the group: the rank children, the switch children and the
// parent. Each edge forwards it on in turn, except where it came from, so the CNP reaches
// every sender of the group once per tree. Each copy is addressed to the edge's remote QP, so
// that sender's DCQCN (its reaction point) slows down. At most one CNP goes to an edge per
// kCnpIntervalNs, as a NIC's notification point paces them; the rest are counted. Mode-III
// hops are the switch's own RC connections, and their sender has no rate control, so a CNP is
// consumed there (mode3.cc) and counted.
// Hot path: no allocation; at most one frame per edge.
#pragma once

#include <cstdint>

#include "datapath/engine/actions.h"
#include "datapath/engine/group.h"
#include "datapath/engine/packet_meta.h"

namespace epic::engine {

inline constexpr uint64_t kCnpIntervalNs = 50'000;  // DCQCN's default CNP pacing (50 us)

// A CNP from edge m.child (a child, or the parent when m.child < 0) at Actions::now_ns.
void forward_cnp(GroupState& g, const PacketMeta& m, Actions& a);

}  // namespace epic::engine
