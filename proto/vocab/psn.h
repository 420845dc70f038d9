// 24-bit packet sequence number arithmetic (IBA 9.7.1): PSNs wrap at 2^24 and
// compare within a half-space window, so `psn_lt(0xFFFFFF, 0)` is true.
// Thread-safe: pure functions.
#pragma once

#include <cstdint>

namespace epic::vocab {

inline constexpr uint32_t kPsnMask = 0xFFFFFF;
inline constexpr uint32_t kQpnMask = 0xFFFFFF;  // QPNs are 24-bit too (BTH DestQP)
inline constexpr uint32_t kPsnHalf = 0x800000;

constexpr uint32_t psn_add(uint32_t psn, int64_t n) {
  return static_cast<uint32_t>((static_cast<int64_t>(psn) + n) & kPsnMask);
}

// Signed distance a - b in [-2^23, 2^23).
constexpr int32_t psn_diff(uint32_t a, uint32_t b) {
  const uint32_t d = (a - b) & kPsnMask;
  return d >= kPsnHalf ? static_cast<int32_t>(d) - static_cast<int32_t>(kPsnMask + 1)
                       : static_cast<int32_t>(d);
}

constexpr bool psn_lt(uint32_t a, uint32_t b) { return psn_diff(a, b) < 0; }
constexpr bool psn_le(uint32_t a, uint32_t b) { return psn_diff(a, b) <= 0; }
constexpr bool psn_gt(uint32_t a, uint32_t b) { return psn_diff(a, b) > 0; }
constexpr bool psn_ge(uint32_t a, uint32_t b) { return psn_diff(a, b) >= 0; }

// True when psn lies in [start, start + len) modulo 2^24 (len <= 2^23).
constexpr bool psn_in_window(uint32_t psn, uint32_t start, uint32_t len) {
  return ((psn - start) & kPsnMask) < len;
}

}  // namespace epic::vocab
