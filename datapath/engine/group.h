// A group's context at one switch: its place in the IncTree (children, parent,
// which ranks lie below each child), its PSN window, and the mutable state the
// Mode-II pipeline keeps for it — the collectives announced so far (for
// per-endpoint PSN translation), the ACK frontiers, and a pointer to its slot
// memory (the indirection of EPIC's resource model: the slot region can be
// re-granted without touching the routing state).
// Threading: a group's state is owned by one worker.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "datapath/engine/slot.h"
#include "datapath/engine/straggler.h"
#include "datapath/engine/translate_header.h"
#include "proto/context/group_context.h"
#include "proto/vocab/collective_map.h"
#include "proto/vocab/counters.h"
#include "proto/vocab/limits.h"

namespace epic::engine {

// The protocol vocabulary the engine speaks (proto/vocab/).
using vocab::CollectiveDescriptor;
using vocab::CollectiveShape;
using vocab::CollectiveType;
using vocab::decode_control;
using vocab::kControlImm;
using vocab::kControlPayloadBytes;
using vocab::shape_of;

inline constexpr size_t kMaxChildren = vocab::kMaxChildren;  // bitmap width of a slot
// A group's edges at a switch: its children 0..kMaxChildren-1 and, in Mode-III, the parent edge
// with its own PSN sequences (kParentEdge).
inline constexpr size_t kParentEdge = kMaxChildren;
inline constexpr size_t kMaxEdges = kMaxChildren + 1;

// The group context (proto/context/group_context.h): the control plane's value, run as is.
using vocab::ChildLink;
using vocab::ParentLink;
using GroupConfig = vocab::GroupContext;

// One announced collective, and where it sits in every edge's PSN spaces. Rank children use
// their own send/receive sequences; in Mode-II switch children and the parent use the group
// PSN space, in Mode-III every edge has its own sequences (what its subtree sends/receives,
// translate_psn.h).
struct CollectiveRecord {
  CollectiveShape shape;
  uint32_t g_ctrl = 0;  // group PSN of its control message; data j at g_ctrl + 1 + j
  std::array<uint32_t, kMaxEdges> send_ctrl{};  // edge's send PSN of its control message
  std::array<uint32_t, kMaxEdges> recv_ctrl{};  // edge's receive PSN of the control result
};

struct Mode3State;  // mode3_state.h

// Per-group telemetry (the engine-wide EngineCounters say why frames were dropped; these say
// how each group is doing): proto/vocab/counters.h.
using vocab::GroupStats;

struct GroupState {
  const GroupConfig* config = nullptr;
  GroupStats stats;
  SlotRegion* slots = nullptr;  // granted slot memory (2*MW slots)
  // Recent collectives, newest at (collectives-1) % history.size().
  std::vector<CollectiveRecord> history;
  // Records ever created; 64-bit so that the ring index (collectives % history.size(), not a
  // power of two) never jumps at a wrap.
  uint64_t collectives = 0;
  // The oldest record PSN translation still matches (a record number, < collectives once one
  // exists): records older than it have left the ring, or every PSN of theirs lies more than
  // 2^23 behind the group sequence's end (create_record). The records from it to the newest
  // span less than 2^24 PSNs of every sequence, so their starts are ordered by PSN.
  uint64_t first_kept = 0;
  std::array<uint32_t, kMaxEdges> next_send_ctrl{};  // each edge's next control message PSN
  std::array<uint32_t, kMaxEdges> next_recv_ctrl{};
  uint32_t next_g_ctrl = 0;
  // Last group PSN of a one-source data packet (Broadcast, AllGather) announced so far: EPIC's
  // recycle rule is only valid over PSNs that every rank sends.
  std::optional<uint32_t> one_source_until;
  // ACK frontiers (group PSNs; "every packet up to here is acknowledged by all its receivers").
  std::array<uint32_t, kMaxChildren> child_frontier{};  // reported by switch children
  std::array<uint32_t, kMaxChildren> acked_recv_psn{};  // rank children: last result PSN they ACKed
  std::array<uint32_t, kMaxChildren> acked_send_psn{};  // rank children: last upload PSN we ACKed
  std::array<uint32_t, kMaxChildren> max_send_psn{};    // rank children: highest upload PSN seen
  // Rank children parked with RNR NAK (park_rank, retransmission.h): the oldest upload parked, and
  // for how many rounds (the back-off of the RNR timer).
  std::array<uint32_t, kMaxChildren> parked_psn{};
  std::array<uint8_t, kMaxChildren> park_rounds{};
  uint32_t subtree_frontier = 0;  // min over children; sent up when it advances
  uint32_t global_frontier = 0;   // from the parent (or = subtree_frontier at the root)
  // The ranks below this switch: [subtree_first, subtree_first + subtree_ranks).
  uint16_t subtree_first = 0;
  uint16_t subtree_ranks = 0;
  Mode3State* mode3 = nullptr;  // Mode-III: the Pipes and the hops (nullptr in Mode-II)
  // Straggler telemetry: slot arrival times, who completed each slot, per-child lag.
  StragglerState straggler;
  // Congestion: when each edge was last sent a CNP (burst time; congestion.h rate-limits).
  std::array<uint64_t, kMaxEdges> cnp_sent_ns{};
  std::array<bool, kMaxEdges> cnp_sent{};
  // Records counted in stats.collectives_completed (the global frontier passed their last PSN).
  uint64_t completed_records = 0;
};

}  // namespace epic::engine
