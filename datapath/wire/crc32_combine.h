// CRC-32 combination (zlib's crc32_combine idea): CRC-32 is linear over GF(2),
// so the register after n more zero bytes is the register times x^(8n) modulo
// the polynomial. With that product, the CRC of a concatenation follows from
// the CRCs of its pieces, and the CRC of a copy that differs from a base in a
// few bytes follows from the base's CRC and the CRC of the difference (see
// icrc_delta.h) without touching the bytes after the difference.
//
// Values are in the reflected representation crc32_update() uses (bit 31 is
// x^0). Cost: Crc32Shift(n) one table look-up pair, one product and 32 shifts;
// apply() 32 masked XORs, no loads but its own 128 bytes. Thread-safe: pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace epic::wire {

// a·b modulo the CRC-32 polynomial.
uint32_t crc32_mul(uint32_t a, uint32_t b);
// x^(8n) modulo the CRC-32 polynomial: the operator that moves a register over n zero bytes.
uint32_t crc32_x8n(size_t n);

// Multiplication by x^(8n), prepared once for many registers.
class Crc32Shift {
 public:
  explicit Crc32Shift(size_t n);
  // The register `reg` (linear part, started from 0) after n more zero bytes.
  uint32_t apply(uint32_t reg) const {
    uint32_t p = 0;
    for (unsigned i = 0; i < 32; ++i) p ^= basis_[i] & (0u - ((reg >> (31 - i)) & 1u));
    return p;
  }

 private:
  std::array<uint32_t, 32> basis_{};  // x^(8n) · x^i, i = 0..31
};

// The CRC of A‖B from crc1 = crc32_update(0, A), crc2 = crc32_update(0, B) and |B| = len2
// (equals zlib's crc32_combine).
inline uint32_t crc32_combine(uint32_t crc1, uint32_t crc2, size_t len2) {
  return crc32_mul(crc32_x8n(len2), crc1) ^ crc2;
}

}  // namespace epic::wire
