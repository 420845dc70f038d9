// The reference element semantics against facts fixed by IEEE 754 and the
// formats' definitions: known encodings, round-to-nearest-even ties,
// subnormals, overflow, canonical NaNs, signed zeros, int32 wrap-around.
#include "datapath/arith/element.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/unit/datapath/arith/arith_test_util.h"

namespace epic::arith::reference {
namespace {

using test::bits;
using test::from_bits;

struct Case {
  uint16_t half;
  uint32_t single;
};

TEST(Fp16, WidensKnownEncodingsExactly) {
  constexpr Case kCases[] = {
      {0x3C00, 0x3F800000},                        // 1.0
      {0xC000, 0xC0000000},                        // -2.0
      {0x7BFF, 0x477FE000},                        // 65504, the largest finite
      {0x0001, 0x33800000},                        // 2^-24, the smallest subnormal
      {0x03FF, 0x387FC000},                        // 1023 * 2^-24, the largest subnormal
      {0x0400, 0x38800000},                        // 2^-14, the smallest normal
      {0x3555, 0x3EAAA000},                        // 0.333251953125
      {0x0000, 0x00000000}, {0x8000, 0x80000000},  // signed zeros
      {0x7C00, 0x7F800000}, {0xFC00, 0xFF800000},  // infinities
  };
  for (const auto& c : kCases)
    EXPECT_EQ(bits(widen_fp16(c.half)), c.single) << std::hex << "fp16 0x" << c.half;
}

TEST(Fp16, NarrowsKnownValuesToNearestEven) {
  constexpr Case kCases[] = {
      {0x3C00, 0x3F800000},  // 1.0
      {0xC000, 0xC0000000},  // -2.0
      {0x7BFF, 0x477FE000},  // 65504
      {0x7BFF, 0x477FEFFF},  // just below 65520 rounds down to 65504
      {0x7C00, 0x477FF000},  // 65520: tie between 65504 (odd) and 2^16 -> overflow to inf
      {0xFC00, 0xC77FF000},  // -65520 -> -inf
      {0x7C00, 0x4E6E6B28},  // 1e9 -> inf
      {0x0001, 0x33800000},  // 2^-24
      {0x0000, 0x33000000},  // 2^-25: tie between 0 and 2^-24 -> 0 (even)
      {0x8000, 0xB3000000},  // -2^-25 -> -0
      {0x0001, 0x33000001},  // just above 2^-25 -> 2^-24
      {0x0002, 0x33C00000},  // 3 * 2^-25: tie between 1 and 2 quanta -> 2 (even)
      {0x0400, 0x387FE000},  // 1023.5 * 2^-24: tie -> 2^-14 (even, the smallest normal)
      {0x3C00, 0x3F801000},  // 1 + 2^-11: tie between 1 and 1 + 2^-10 -> 1
      {0x3C02, 0x3F803000},  // 1 + 3*2^-11: tie -> 1 + 2^-9 (even)
      {0x3C01, 0x3F801001},  // just above the tie -> up
      {0x0000, 0x00800000},  // FLT_MIN underflows to +0
      {0x8000, 0x80000001},  // a negative fp32 subnormal -> -0
      {0x7C00, 0x7F800000}, {0xFC00, 0xFF800000},  // infinities
  };
  for (const auto& c : kCases)
    EXPECT_EQ(narrow_fp16(from_bits(c.single)), c.half) << std::hex << "fp32 0x" << c.single;
}

TEST(Bf16, WidensKnownEncodingsExactly) {
  constexpr Case kCases[] = {
      {0x3F80, 0x3F800000},  // 1.0
      {0xC000, 0xC0000000},  // -2.0
      {0x7F7F, 0x7F7F0000},  // the largest finite, 3.3895e38
      {0x0001, 0x00010000},  // the smallest subnormal
      {0x0080, 0x00800000},  // FLT_MIN
      {0x8000, 0x80000000}, {0x7F80, 0x7F800000}, {0xFF80, 0xFF800000},
  };
  for (const auto& c : kCases)
    EXPECT_EQ(bits(widen_bf16(c.half)), c.single) << std::hex << "bf16 0x" << c.half;
}

TEST(Bf16, NarrowsKnownValuesToNearestEven) {
  constexpr Case kCases[] = {
      {0x3F80, 0x3F800000},  // 1.0
      {0x3F80, 0x3F808000},  // tie between 0x3F80 and 0x3F81 -> 0x3F80 (even)
      {0x3F82, 0x3F818000},  // tie between 0x3F81 and 0x3F82 -> 0x3F82 (even)
      {0x3F81, 0x3F808001},  // just above a tie -> up
      {0x3F80, 0x3F807FFF},  // just below a tie -> down
      {0x7F7F, 0x7F7F7FFF},  // just below the overflow threshold
      {0x7F80, 0x7F7F8000},  // tie above the largest finite (odd) -> inf
      {0x7F80, 0x7F7FFFFF},  // FLT_MAX -> inf
      {0xFF80, 0xFF7FFFFF},  // -FLT_MAX -> -inf
      {0x0000, 0x00008000},  // subnormal tie -> 0 (even)
      {0x0002, 0x00018000},  // subnormal tie -> 2 (even)
      {0x0080, 0x007FFFFF},  // the largest fp32 subnormal rounds up to FLT_MIN
      {0x8000, 0x80000001}, {0x7F80, 0x7F800000}, {0xFF80, 0xFF800000},
  };
  for (const auto& c : kCases)
    EXPECT_EQ(narrow_bf16(from_bits(c.single)), c.half) << std::hex << "fp32 0x" << c.single;
}

// Truncating a NaN whose payload sits in the low 16 bits would give inf.
TEST(Nan, EveryNaNNarrowsAndWidensToTheCanonicalPattern) {
  for (uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7FC12345u,
                       0xFFFFFFFFu}) {
    EXPECT_EQ(narrow_fp16(from_bits(nan)), 0x7E00) << std::hex << nan;
    EXPECT_EQ(narrow_bf16(from_bits(nan)), 0x7FC0) << std::hex << nan;
    EXPECT_EQ(bits(canonical(from_bits(nan))), 0x7FC00000u) << std::hex << nan;
  }
  for (uint16_t nan : {0x7C01, 0x7E00, 0xFE00, 0x7FFF, 0xFFFF})
    EXPECT_EQ(bits(widen_fp16(nan)), 0x7FC00000u) << std::hex << nan;
  for (uint16_t nan : {0x7F81, 0x7FC0, 0xFFC0, 0x7FFF, 0xFFFF})
    EXPECT_EQ(bits(widen_bf16(nan)), 0x7FC00000u) << std::hex << nan;
  EXPECT_EQ(kCanonicalNanFp16, 0x7E00);
  EXPECT_EQ(kCanonicalNanBf16, 0x7FC0);
  EXPECT_EQ(kCanonicalNanFp32, 0x7FC00000u);
}

TEST(Fp16, EveryNonNaNPatternSurvivesWidenThenNarrow) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const bool nan = (x & 0x7C00) == 0x7C00 && (x & 0x03FF) != 0;
    EXPECT_EQ(narrow_fp16(widen_fp16(x)), nan ? 0x7E00 : x) << std::hex << h;
  }
}

TEST(Bf16, EveryNonNaNPatternSurvivesWidenThenNarrow) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const bool nan = (x & 0x7F80) == 0x7F80 && (x & 0x007F) != 0;
    EXPECT_EQ(narrow_bf16(widen_bf16(x)), nan ? 0x7FC0 : x) << std::hex << h;
    if (!nan) {
      EXPECT_EQ(bits(widen_bf16(x)), uint32_t{x} << 16);
    }
  }
}

TEST(Int32, SumWrapsTwosComplement) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(sum(kMax, 1), kMin);
  EXPECT_EQ(sum(kMin, -1), kMax);
  EXPECT_EQ(sum(kMin, kMin), 0);
  EXPECT_EQ(sum(-5, 3), -2);
  EXPECT_EQ(min(kMin, kMax), kMin);
  EXPECT_EQ(max(kMin, kMax), kMax);
  EXPECT_EQ(min(-1, 0), -1);
}

TEST(Fp32, SumIsIeeeAdditionWithCanonicalNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(sum(1.0f, 2.0f), 3.0f);
  EXPECT_EQ(sum(1e8f, 1.0f), 1e8f);  // 1e8 + 1 rounds back to 1e8
  EXPECT_EQ(bits(sum(-0.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(bits(sum(-0.0f, 0.0f)), 0x00000000u);
  EXPECT_EQ(sum(3e38f, 3e38f), inf);
  // x86's default NaN for inf - inf is 0xFFC00000; ours is canonical.
  EXPECT_EQ(bits(sum(inf, -inf)), 0x7FC00000u);
  EXPECT_EQ(bits(sum(from_bits(0xFF800001), 1.0f)), 0x7FC00000u);
  EXPECT_EQ(bits(sum(1.0f, from_bits(0x7FC12345))), 0x7FC00000u);
}

TEST(Fp32, MinMaxPropagateNaNAndOrderSignedZeros) {
  const float nan = from_bits(0xFFC12345);
  EXPECT_EQ(bits(min(nan, 1.0f)), 0x7FC00000u);
  EXPECT_EQ(bits(min(1.0f, nan)), 0x7FC00000u);
  EXPECT_EQ(bits(max(nan, 1.0f)), 0x7FC00000u);
  EXPECT_EQ(bits(max(1.0f, nan)), 0x7FC00000u);
  EXPECT_EQ(bits(min(-0.0f, 0.0f)), 0x80000000u);
  EXPECT_EQ(bits(min(0.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(bits(max(-0.0f, 0.0f)), 0x00000000u);
  EXPECT_EQ(bits(max(0.0f, -0.0f)), 0x00000000u);
  EXPECT_EQ(min(-std::numeric_limits<float>::infinity(), -3e38f),
            -std::numeric_limits<float>::infinity());
  EXPECT_EQ(max(from_bits(0x00000001), 0.0f), from_bits(0x00000001));
}

// Folding min or max over any permutation gives the same bits.
TEST(Fp32, MinMaxAreOrderIndependentOnBits) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Set {
    std::array<float, 5> values;
    uint32_t min_bits, max_bits;
  };
  const Set sets[] = {
      {{0.0f, -0.0f, 1.0f, -1.0f, 0.5f}, 0xBF800000, 0x3F800000},
      {{-0.0f, 0.0f, -0.0f, 0.0f, 7.0f}, 0x80000000, 0x40E00000},
      {{0.0f, -0.0f, 0.0f, -0.0f, -0.0f}, 0x80000000, 0x00000000},
      {{from_bits(0x7F800001), 0.0f, -0.0f, 2.0f, from_bits(0xFFC12345)}, 0x7FC00000, 0x7FC00000},
      {{from_bits(0x00000001), from_bits(0x80000001), -0.0f, 0.0f, from_bits(0x00000002)},
       0x80000001,
       0x00000002},
      {{inf, -inf, 0.0f, -0.0f, 3.0f}, 0xFF800000, 0x7F800000},
  };
  auto by_bits = [](float a, float b) { return bits(a) < bits(b); };
  for (Set s : sets) {
    std::sort(s.values.begin(), s.values.end(), by_bits);
    do {  // every distinct permutation
      float lo = s.values[0], hi = s.values[0];
      for (size_t i = 1; i < s.values.size(); ++i) {
        lo = min(lo, s.values[i]);
        hi = max(hi, s.values[i]);
      }
      ASSERT_EQ(bits(lo), s.min_bits);
      ASSERT_EQ(bits(hi), s.max_bits);
    } while (std::next_permutation(s.values.begin(), s.values.end(), by_bits));
  }
}

}  // namespace
}  // namespace epic::arith::reference
