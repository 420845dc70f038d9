// ReceiveAck / SendAck: Mode-II's ACK reflection, as the EPIC authors' switch
// does it. An upload is acknowledged once every receiver of its packet has
// acknowledged the result — for AllReduce that is the rank itself (its ACK of
// the result is reflected as the ACK of its upload, at the first hop); for
// Reduce/ReduceScatter the root; for Broadcast/AllGather every receiver. To
// know the latter across a tree, each switch reports its subtree's ACK frontier
// (every packet up to it acknowledged by all receivers below) to its parent,
// and the root sends the group's frontier down; RecycleBuffer frees the slots
// the frontier passed. Frontier frames are RoCE ACKs on the switch links; a
// lost one is repeated when a duplicate shows that someone waits.
// Hot path: no allocation; the upload walk ends at the first upload not yet acknowledged by its
// receivers (at the latest at the end of the announced collectives).
#pragma once

#include <cstdint>

#include "datapath/engine/actions.h"
#include "datapath/engine/group.h"
#include "datapath/engine/packet_meta.h"

namespace epic::engine {

// An ACK or NAK from a rank child (PacketKind::kRankAck): its results up to the PSN arrived;
// reflected as ACKs of its uploads, and a PSN-sequence or RNR NAK of a result it also uploaded
// as a NAK of that upload (so its retransmission brings the result again).
void receive_rank_ack(GroupState& g, const PacketMeta& m, Actions& a);
// A switch child's subtree frontier (PacketKind::kChildFrontier).
void receive_child_frontier(GroupState& g, const PacketMeta& m, Actions& a);
// The parent's group frontier (PacketKind::kParentFrontier); also the root's own frontier.
void receive_group_frontier(GroupState& g, uint32_t frontier, Actions& a);

// Acknowledges rank child `child`'s uploads as far as their receivers have acknowledged them;
// sends the ACK when that advanced, or always with `force` (the rank may have lost it).
void ack_rank_uploads(GroupState& g, int child, bool force, Actions& a);
// Recomputes the subtree frontier; when it advanced, reports it up (at the root: it is the
// group frontier).
void update_subtree_frontier(GroupState& g, Actions& a);

// Says the group frontier again to a switch child, the subtree frontier again to the parent
// (a no-op without one): someone below or above may have lost the last report.
void repeat_frontier_down(GroupState& g, size_t child, Actions& a);
void repeat_frontier_up(GroupState& g, Actions& a);

}  // namespace epic::engine
