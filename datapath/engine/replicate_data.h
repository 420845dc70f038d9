// ReplicateData: sends a packet of a collective on — down to every child with
// a receiver of it (or to one child), each copy addressed by TranslateHeader
// to that child's endpoint with the PSN of that child's receive sequence; or
// up to the parent (a partial aggregate, or a one-source packet travelling
// toward the root) at the PSN the caller gives. Mode-II and Mode-III both send
// with it (mode3.cc: a Pipe's results and its retransmissions).
// Hot path: no allocation; one frame build per copy, one ICRC pass per call
// (the other copies' ICRCs adjusted for their headers, wire/icrc_delta.h).
#pragma once

#include <cstdint>

#include "datapath/engine/actions.h"
#include "datapath/engine/group.h"
#include "datapath/engine/translate_psn.h"

namespace epic::engine {

// What is sent: the opcode and immediate every contribution carried, and the bytes.
struct Payload {
  uint8_t opcode = 0;
  uint32_t immdt = 0;
  const uint8_t* data = nullptr;
  uint16_t len = 0;
  uint8_t ecn = 0;  // the IP ECN bits the frames carry (the slot's, or the packet's passed on)
};

// Which children a result goes to. A first replication counts results_replicated.
enum class Fanout : uint8_t {
  kFirst,  // every child with a receiver: the result's first time down
  kAgain,  // every child with a receiver, again (a contributor waits on the receivers' ACKs)
  kOne,    // only child `only_child`, if it has a receiver (it lost its copy)
};

void replicate_data(GroupState& g, const PacketRef& ref, const Payload& p, Fanout fanout,
                    int only_child, Actions& a);
inline void replicate_data(GroupState& g, const PacketRef& ref, const Payload& p, Fanout fanout,
                           Actions& a) {
  replicate_data(g, ref, p, fanout, -1, a);
}

// To the parent, at `psn` of the sequence this switch sends it: the group PSN in Mode-II, this
// switch's own send sequence in Mode-III (send_psn(g, kParentEdge, ref)). The group must have
// a parent.
void send_up(const GroupState& g, uint32_t psn, const Payload& p, Actions& a);

}  // namespace epic::engine
