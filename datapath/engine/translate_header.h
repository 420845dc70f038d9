// TranslateHeader: writes the frame a switch emits toward one endpoint —
// Ethernet/IPv4/UDP/BTH addressed to that endpoint's MAC, IP and QP, with the
// PSN of *its* sequence space, the AckReq/Immediate/AETH fields the opcode
// carries, the payload, pad, IPv4 checksum and ICRC. Every frame a Mode-II
// switch sends (results down, partial aggregates up, reflected ACKs) is built
// here, so everything a receiving NIC checks is rewritten in one place.
// Hot path: no allocation; cost ≈ one ICRC pass over the frame, or a pass over
// the headers for a copy whose ICRC is adjusted from a base (icrc_from).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "datapath/wire/icrc_delta.h"
#include "datapath/wire/roce_packet.h"
#include "proto/context/group_context.h"
#include "proto/vocab/pkey.h"

namespace epic::engine {

// One end of an IncTree edge: a rank NIC's QP, or a switch's virtual QP
// (proto/context/group_context.h).
using vocab::Endpoint;

struct FrameSpec {
  const Endpoint* src = nullptr;  // this switch's side of the edge
  const Endpoint* dst = nullptr;  // the receiver; dst->qpn goes into the BTH
  uint16_t udp_src_port = 0xC000;
  uint16_t pkey = vocab::kDefaultPkey;  // the group's (GroupConfig::wire_pkey)
  uint8_t tos = 0;
  uint8_t opcode = 0;
  uint32_t psn = 0;
  bool ack_req = false;
  uint32_t immdt = 0;         // when the opcode carries ImmDt
  bool becn = false;          // BTH BECN (a CNP sets it)
  uint8_t aeth_syndrome = 0;  // when the opcode carries an AETH
  uint32_t aeth_msn = 0;
  const uint8_t* payload = nullptr;
  uint16_t payload_len = 0;
  // When set: this frame differs from that base frame only in header fields (the same opcode,
  // immediate, AETH and payload; another child's address and PSN), and its ICRC is the base's
  // adjusted for the header difference (icrc_delta.h) instead of a pass over the payload.
  const wire::IcrcDelta* icrc_from = nullptr;
};

// Size of the frame build_frame() writes for `spec`.
size_t frame_size(const FrameSpec& spec);
// Writes the frame into out[0..cap); returns its length, or 0 if it does not fit. It never
// reads `out` back. When `icrc_base` is given and empty, it receives this frame's ICRC base
// for copies of it (FrameSpec::icrc_from).
size_t build_frame(uint8_t* out, size_t cap, const FrameSpec& spec,
                   std::optional<wire::IcrcDelta>* icrc_base = nullptr);

}  // namespace epic::engine
