// Per-packet metadata: what the IncEngine modules know of one arriving frame,
// read once from the parsed headers (wire::PacketView) and the LookupTable's
// route: the group and edge it came on, what kind of packet it is on that
// edge, and the BTH/AETH/payload fields the modules act on. Modules take this,
// never the raw frame.
// Hot path: a plain value, filled without allocation; the payload points into
// the caller's frame.
#pragma once

#include <cstdint>

#include "datapath/engine/group.h"
#include "datapath/engine/lookup_table.h"
#include "datapath/wire/opcode.h"
#include "datapath/wire/packet_view.h"

namespace epic::engine {

enum class PacketKind : uint8_t {
  kUpload,          // RC SEND from a child: a contribution (or a one-source packet) going up
  kResult,          // RC SEND from the parent: a result going down
  kRankAck,         // ACK or NAK from a rank child: reflected (ReceiveAck)
  kChildFrontier,   // ACK from a switch child: its subtree's ACK frontier
  kParentFrontier,  // ACK from the parent: the group's ACK frontier
  kCnp,             // RoCEv2 CNP: the sender of it saw CE on something this switch sent it
  kUnsupported,     // any other opcode (RDMA WRITE/READ, UC/UD, SEND with invalidate)
};

struct PacketMeta {
  GroupState* group = nullptr;
  int16_t child = -1;  // the child edge it came on; -1: the parent edge
  PacketKind kind = PacketKind::kUnsupported;
  uint8_t opcode = 0;
  bool control = false;    // SEND_ONLY_WITH_IMM carrying kControlImm: a collective's announcement
  bool has_immdt = false;  // the opcode carries an immediate
  uint8_t syndrome = 0;    // AETH syndrome (ACKs)
  uint32_t psn = 0;
  const uint8_t* payload = nullptr;
  uint16_t payload_len = 0;
  uint8_t ecn = 0;  // the IP header's ECN bits

  size_t child_index() const { return static_cast<size_t>(child); }
};

// The metadata of a well-formed RoCEv2 frame `v` that the LookupTable routed to `route`.
inline PacketMeta classify(const wire::PacketView& v, const Route& route) {
  PacketMeta m;
  m.group = route.group;
  m.child = route.child;
  m.opcode = v.opcode();
  m.psn = v.psn();
  m.ecn = v.ecn();
  const wire::OpcodeInfo& op = *v.op;
  if (op.kind == wire::OpKind::kAck) {
    m.syndrome = v.aeth().syndrome;
    if (route.child < 0) {
      m.kind = PacketKind::kParentFrontier;
    } else if (route.group->config->children[m.child_index()].is_rank) {
      m.kind = PacketKind::kRankAck;
    } else {
      m.kind = PacketKind::kChildFrontier;
    }
  } else if (op.kind == wire::OpKind::kSend && op.transport == wire::Transport::kRc &&
             !op.has(wire::kExtIeth)) {
    m.kind = route.child >= 0 ? PacketKind::kUpload : PacketKind::kResult;
    m.has_immdt = op.has(wire::kExtImmDt);
    m.control = m.opcode == wire::op::kSendOnlyImm && v.immdt() == kControlImm;
    m.payload = v.payload();
    m.payload_len = v.data_len();
  } else if (op.kind == wire::OpKind::kCnp) {
    m.kind = PacketKind::kCnp;
  } else {
    m.kind = PacketKind::kUnsupported;
  }
  return m;
}

}  // namespace epic::engine
