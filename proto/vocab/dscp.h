// DiffServ code points (RFC 2474): the upper six bits of the IPv4 TOS byte (the RoCEv2 GRH
// traffic class), the lower two are ECN (RFC 3168). A group's traffic class is a DSCP
// (GroupContext::dscp): every frame a switch sends for the group carries it, libinc puts it on
// the ranks' QPs, and incd's egress maps it to one of its queues (docs/traffic-classes.md).
// Threading: constants and pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace epic::vocab {

inline constexpr uint32_t kMaxDscp = 63;
inline constexpr uint8_t kEcnBits = 0x03;

// The TOS byte of a frame: `dscp` above, `ecn` below.
constexpr uint8_t tos_byte(uint8_t dscp, uint8_t ecn) {
  return static_cast<uint8_t>((dscp << 2) | (ecn & kEcnBits));
}
constexpr uint8_t dscp_of(uint8_t tos) { return static_cast<uint8_t>(tos >> 2); }

// "" when `v` is a DSCP; else why not (the caller adds the field).
inline std::string dscp_error(uint32_t v) {
  if (v <= kMaxDscp) return "";
  return std::to_string(v) + " is not a DSCP (0..63; 0 is best effort, 46 expedited forwarding)";
}

}  // namespace epic::vocab
