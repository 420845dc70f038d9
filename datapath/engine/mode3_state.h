// A Mode-III group's state at one switch (docs/mode3.md): its Pipes and one
// Mode3Edge per tree edge — the RC connection to a child or to the parent, of
// which this switch is the responder for what comes in (hop_responder.h) and
// the requester for what it sends on (hop_requester.h).
//   at the root   one Pipe (`up`): in-endpoints and out-endpoints = the children
//   elsewhere     `up`: in = the children, out = the parent;
//                 `down`: in = the parent, out = the children
// The Pipes share the group's granted SlotRegion: the root's Pipe has all of it
// (2·MW entries), elsewhere each Pipe has half (MW entries).
// Threading: owned by the group's worker. The edges' timer nodes are linked into
// the worker's TimerWheel while armed: the state must not move (it lives in the
// GroupInstance, group_instance.h) and its timers are cancelled before a detach.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "datapath/engine/group.h"
#include "datapath/engine/hop_requester.h"
#include "datapath/engine/hop_responder.h"
#include "datapath/engine/pipe.h"

namespace epic::engine {

// The tags of an edge's two timer nodes (TimerNode::tag).
enum EdgeTimer : uint8_t {
  kRetransmitTimer = 0,  // out.timer: the hop requester's retransmission (or RNR) timer
  kQuietTimer = 1,       // quiet: the hop responder's nudge check (rank edges only)
};

struct Mode3Edge {
  HopRequester out;  // first member: its timer node is the edge's address (edge_of_timer)
  HopResponder in;
  TimerNode quiet;  // armed while `in` may nudge its requester (hop_responder.h)
  GroupState* group = nullptr;
  uint8_t edge = 0;      // a child index, or kParentEdge
  bool ack_due = false;  // an ACK of `in` is owed: sent once at the end of the burst
  Mode3Edge() { quiet.tag = kQuietTimer; }
};

struct Mode3State {
  PipeState up;
  PipeState down;
  std::array<Mode3Edge, kMaxEdges> edges{};
  RetryPolicy policy;
  bool pump_due = false;  // a Pipe had more ready than one pump handles: continued by poll()
  bool failed = false;    // a hop passed its retry limit: the group's collectives are over
};

static_assert(std::is_standard_layout_v<Mode3Edge> && std::is_standard_layout_v<HopRequester>,
              "edge_of_timer needs the timer node at offset 0 of the edge");
static_assert(offsetof(Mode3Edge, out) == 0 && offsetof(HopRequester, timer) == 0,
              "edge_of_timer needs the timer node at offset 0 of the edge");

// The edge whose timer `n` is (the wheel hands back nodes; n.tag says which of the two).
inline Mode3Edge& edge_of_timer(TimerNode& n) {
  if (n.tag == kQuietTimer) {
    // NOLINTNEXTLINE: the node is the `quiet` member of a standard-layout Mode3Edge
    return *reinterpret_cast<Mode3Edge*>(reinterpret_cast<char*>(&n) - offsetof(Mode3Edge, quiet));
  }
  return *reinterpret_cast<Mode3Edge*>(&n);  // NOLINT: pointer-interconvertible (offset 0)
}

}  // namespace epic::engine
