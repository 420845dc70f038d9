// Shared helpers for wire unit tests (and the engine's): hex conversion, a valid base frame, and
// an IPv4 header check by plain RFC 1071 arithmetic (not our checksum code).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/wire/builder.h"
#include "proto/vocab/addr.h"

namespace epic::wire::testing {

inline std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// A valid RC SEND ONLY frame (10.0.0.1 -> 10.0.0.2) to mutate in tests.
inline PacketBuilder base_send(size_t payload = 64) {
  return PacketBuilder()
      .eth(*vocab::parse_mac("02:00:00:00:00:02"), *vocab::parse_mac("02:00:00:00:00:01"))
      .ipv4(*vocab::parse_ipv4("10.0.0.1"), *vocab::parse_ipv4("10.0.0.2"))
      .udp_src_port(0xC001)
      .bth(op::kSendOnly, 0x11, 7)
      .ack_req()
      .payload_pattern(payload);
}

// RFC 1071: the ones' complement sum of a correct 20-byte IPv4 header is 0xFFFF.
inline bool ipv4_header_sums_to_ones(const uint8_t* ip) {
  uint32_t sum = 0;
  for (int k = 0; k < 20; k += 2) sum += (uint32_t{ip[k]} << 8) | ip[k + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum == 0xFFFF;
}

}  // namespace epic::wire::testing
