// Mode-II (connection translated, docs/mode2.md) as a composition of the
// IncEngine modules: the one place that says which module acts on which packet,
// in which order. Every module is a unit of its own (its header says what it
// does; tests/unit/datapath/engine/ has its packet tables); this file only
// wires them.
//
//   packet (packet_meta.h)   modules, in order
//   ----------------------   --------------------------------------------------------------
//   kUpload (child → up)     TranslateHeader: PSN → collective packet (translate_psn.h; a
//                              control message announces a collective: create_record)
//                            → every receiver ACKed it: Retransmission (ACK again)
//                            → one source (Broadcast, AllGather): Retransmission (park a
//                              re-sending source), ReplicateData (up, or down at the root)
//                            → CheckDuplicate → duplicate: Retransmission (re-send, park)
//                            → AggregateData → complete: ReplicateData (partial up; at the
//                              root results down) → RecycleBuffer (EPIC's rule)
//   kResult (parent → down)  TranslateHeader: group PSN → collective packet
//                            → one source: ReplicateData
//                            → AggregateData (store the parent's result) → ReplicateData
//                              → RecycleBuffer
//   kRankAck                 ReceiveAck/SendAck (ack_reflect.h): reflect, frontiers,
//                              RecycleBuffer (the frontier's rule)
//   kChildFrontier           ReceiveAck/SendAck
//   kParentFrontier          ReceiveAck/SendAck
//   kUnsupported             dropped, counted (unsupported)
//
// LookupTable and the parse that make the PacketMeta run before (mode2_engine.h).
// Hot path: no allocation, no locks, no syscalls; every drop counted by reason.
#pragma once

#include "datapath/engine/actions.h"
#include "datapath/engine/packet_meta.h"

namespace epic::engine::mode2 {

// Acts on one packet of an attached group (m.group).
void handle(const PacketMeta& m, Actions& a);

}  // namespace epic::engine::mode2
