#include "datapath/wire/crc32_combine.h"

namespace epic::wire {
namespace {

constexpr uint32_t kPoly = 0xEDB88320u;  // x^32 modulo the polynomial, reflected
constexpr uint32_t kOne = 0x80000000u;   // x^0

constexpr uint32_t times_x(uint32_t b) { return (b >> 1) ^ (kPoly & (0u - (b & 1u))); }

constexpr uint32_t mul(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (unsigned i = 0; i < 32; ++i, b = times_x(b)) p ^= b & (0u - ((a >> (31 - i)) & 1u));
  return p;
}

// x^(8n) for n = lo + kLoSpan·hi: a product of one entry of each table (n < 16384; beyond,
// squarings).
constexpr size_t kLoSpan = 64;
constexpr size_t kHiSpan = 256;

template <size_t N>
constexpr std::array<uint32_t, N> powers(uint32_t step) {  // step^0, step^1, ...
  std::array<uint32_t, N> t{};
  t[0] = kOne;
  for (size_t i = 1; i < N; ++i) t[i] = mul(t[i - 1], step);
  return t;
}

constexpr uint32_t kX8 = kOne >> 8;  // x^8: one zero byte
constexpr auto kLo = powers<kLoSpan>(kX8);
constexpr auto kHi = powers<kHiSpan>(mul(kLo[kLoSpan - 1], kX8));  // x^(8·64)

}  // namespace

uint32_t crc32_mul(uint32_t a, uint32_t b) { return mul(a, b); }

uint32_t crc32_x8n(size_t n) {
  const uint32_t lo = kLo[n % kLoSpan];
  n /= kLoSpan;
  if (n < kHiSpan) return mul(lo, kHi[n]);
  uint32_t p = lo;  // beyond the tables (no frame is that long): square and multiply
  for (uint32_t step = kHi[1]; n > 0; n >>= 1, step = mul(step, step)) {
    if (n & 1) p = mul(p, step);
  }
  return p;
}

Crc32Shift::Crc32Shift(size_t n) {
  uint32_t b = crc32_x8n(n);
  for (uint32_t& v : basis_) {
    v = b;
    b = times_x(b);
  }
}

}  // namespace epic::wire
