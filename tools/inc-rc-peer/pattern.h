// The deterministic payload pattern of the interop tests: byte i of message
// `seed`. The same formula is in deploy/lab/rxe_traffic.c and rxe_xfer.c (the
// guest side), so both ends of a transfer can check every byte; GUARD bytes
// after a message prove that nothing was written past its end.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace epic::tools::rc_peer {

inline constexpr size_t kGuardLen = 64;
inline constexpr uint8_t kGuardByte = 0xEE;

inline uint8_t pattern_byte(uint32_t seed, size_t i) {
  return static_cast<uint8_t>(((i * 131u) ^ (i >> 8)) + seed * 37u + 0x5Au);
}

inline void pattern_fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern_byte(seed, i);
}

// Index of the first byte that differs from the pattern, or n.
inline size_t pattern_mismatch(const uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != pattern_byte(seed, i)) return i;
  }
  return n;
}

}  // namespace epic::tools::rc_peer
