// AETH syndrome encoding (IBA 9.7.5.1.1): bits 7:5 say ACK / RNR NAK / NAK,
// bits 4:0 carry the credit count, the RNR timer code or the NAK code. The one
// definition for every process: the switch's ACK reflection (datapath/engine)
// and the rank's RC endpoint (host/transport/soft) alike.
#pragma once

#include <cstdint>

namespace epic::vocab::aeth {

inline constexpr uint8_t kAckUnlimitedCredits = 0x1F;  // ACK, "credits invalid"
inline constexpr uint8_t kRnrNak = 0x20;               // | 5-bit RNR timer code
inline constexpr uint8_t kRnrTimerMask = 0x1F;
inline constexpr uint8_t kNakPsnSequenceError = 0x60;
inline constexpr uint8_t kNakInvalidRequest = 0x61;
inline constexpr uint8_t kNakRemoteAccessError = 0x62;
inline constexpr uint8_t kNakRemoteOperationalError = 0x63;

// Minimum RNR NAK timer of each 5-bit code, in nanoseconds (IBA table 45).
inline constexpr uint64_t kRnrTimerNs[32] = {
    655'360'000, 10'000,      20'000,      30'000,     40'000,     60'000,     80'000,
    120'000,     160'000,     240'000,     320'000,    480'000,    640'000,    960'000,
    1'280'000,   1'920'000,   2'560'000,   3'840'000,  5'120'000,  7'680'000,  10'240'000,
    15'360'000,  20'480'000,  30'720'000,  40'960'000, 61'440'000, 81'920'000, 122'880'000,
    163'840'000, 245'760'000, 327'680'000, 491'520'000};

enum class Kind : uint8_t { kAck, kRnrNak, kReserved, kNak };
constexpr Kind kind(uint8_t syndrome) {
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

constexpr uint8_t rnr_nak(uint8_t timer_code) {
  return static_cast<uint8_t>(kRnrNak | (timer_code & kRnrTimerMask));
}

}  // namespace epic::vocab::aeth
