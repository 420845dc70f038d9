// AETH syndrome encoding (IBA 9.7.5.1.1): bits 7:5 say ACK / RNR NAK / NAK,
// bits 4:0 carry the credit count, the RNR timer code or the NAK code.
#pragma once

#include <cstdint>

namespace epic::soft::aeth {

inline constexpr uint8_t kAckUnlimitedCredits = 0x1F;  // ACK, "credits invalid"
inline constexpr uint8_t kRnrNak = 0x20;               // | 5-bit RNR timer code
inline constexpr uint8_t kNakPsnSequenceError = 0x60;
inline constexpr uint8_t kNakInvalidRequest = 0x61;
inline constexpr uint8_t kNakRemoteAccessError = 0x62;
inline constexpr uint8_t kNakRemoteOperationalError = 0x63;

enum class Kind : uint8_t { kAck, kRnrNak, kReserved, kNak };
inline Kind kind(uint8_t syndrome) {
  switch (syndrome >> 5) {
    case 0:
      return Kind::kAck;
    case 1:
      return Kind::kRnrNak;
    case 3:
      return Kind::kNak;
    default:
      return Kind::kReserved;
  }
}

}  // namespace epic::soft::aeth
