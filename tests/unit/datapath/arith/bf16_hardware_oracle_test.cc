// bf16 rounding against an implementation we did not write: the AVX512_BF16
// instruction VCVTNEPS2BF16 (round to nearest even). It flushes subnormal
// inputs and outputs to zero and quiets NaNs its own way, so only inputs whose
// magnitude is at least FLT_MIN, or infinite, are compared. Skipped on CPUs
// without AVX512_BF16.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "datapath/arith/element.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace epic::arith {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bf16"))) void hardware_narrow(const uint32_t* in,
                                                                   uint16_t* out) {
  __m512 v;
  std::memcpy(&v, in, 64);
  const __m256bh r = _mm512_cvtneps_pbh(v);
  std::memcpy(out, &r, 32);
}

TEST(Bf16HardwareOracle, NarrowingMatchesVcvtneps2bf16OnNormalInputs) {
  if (!__builtin_cpu_supports("avx512bf16")) GTEST_SKIP() << "this CPU lacks AVX512_BF16";
  // Every bf16 midpoint neighbourhood: all high halves, low halves on, next to
  // and at the midpoint.
  const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  std::vector<uint32_t> in;
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    const uint32_t exp = (hi >> 7) & 0xFF;
    if (exp == 0) continue;                         // subnormal: the instruction flushes it
    if (exp == 0xFF && (hi & 0x7F) != 0) continue;  // NaN
    for (uint32_t lo : lows) {
      const uint32_t b = (hi << 16) | lo;
      if (exp == 0xFF && b != (hi << 16)) continue;  // a NaN pattern below inf's high half
      in.push_back(b);
    }
  }
  while (in.size() % 16 != 0) in.push_back(0x3F800000);
  std::vector<uint16_t> hw(in.size());
  for (size_t i = 0; i < in.size(); i += 16) hardware_narrow(&in[i], &hw[i]);
  for (size_t i = 0; i < in.size(); ++i) {
    float f;
    std::memcpy(&f, &in[i], 4);
    ASSERT_EQ(reference::narrow_bf16(f), hw[i]) << "fp32 0x" << std::hex << in[i];
  }
}
#endif

}  // namespace
}  // namespace epic::arith
