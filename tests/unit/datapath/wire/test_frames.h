// Shared helpers for wire unit tests: hex conversion and a valid base frame.
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

}  // namespace epic::wire::testing
