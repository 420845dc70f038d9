// The reference element semantics against facts fixed by IEEE 754 and the
// formats' definitions (fp8: OCP FP8 v1.0): known encodings,
// round-to-nearest-even ties, subnormals, overflow, canonical NaNs, signed
// zeros, int32 and int8 wrap-around.
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

struct Case8 {
  uint8_t fp8;
  uint32_t single;
};

TEST(Fp8E4M3, WidensKnownEncodingsExactly) {
  constexpr Case8 kCases[] = {
      {0x38, 0x3F800000},                      // 1.0
      {0xC0, 0xC0000000},                      // -2.0
      {0x7E, 0x43E00000}, {0xFE, 0xC3E00000},  // +-448, the largest finite
      {0x01, 0x3B000000},                      // 2^-9, the smallest subnormal
      {0x07, 0x3C600000},                      // 7 * 2^-9, the largest subnormal
      {0x08, 0x3C800000},                      // 2^-6, the smallest normal
      {0x77, 0x43700000},                      // 240
      {0x78, 0x43800000},                      // 256: exponent field 1111 is a normal binade
      {0x00, 0x00000000}, {0x80, 0x80000000},  // signed zeros
  };
  for (const auto& c : kCases)
    EXPECT_EQ(bits(widen_e4m3(c.fp8)), c.single) << std::hex << "e4m3 0x" << int{c.fp8};
}

TEST(Fp8E4M3, NarrowsKnownValuesToNearestEven) {
  constexpr Case8 kCases[] = {
      {0x38, 0x3F800000},  // 1.0
      {0xC0, 0xC0000000},  // -2.0
      {0x7E, 0x43E00000},  // 448
      {0x7E, 0x43E7FFFF},  // just below 464 -> 448
      {0x7E, 0x43E80000},  // 464: tie between 448 (even) and the missing 480 -> 448
      {0xFE, 0xC3E80000},  // -464 -> -448
      {0x7F, 0x43E80001},  // just above 464 -> overflow: NaN (no infinity)
      {0x7F, 0xC3E80001},  // -464 - ulp -> NaN, positive (canonical)
      {0x7F, 0x43F00000},  // 480
      {0x7F, 0x7F7FFFFF},  // FLT_MAX
      {0x7F, 0x7F800000},  // +inf -> NaN
      {0x7F, 0xFF800000},  // -inf -> NaN
      {0x01, 0x3B000000},  // 2^-9
      {0x00, 0x3A800000},  // 2^-10: tie between 0 and 2^-9 -> 0 (even)
      {0x80, 0xBA800000},  // -2^-10 -> -0
      {0x01, 0x3A800001},  // just above 2^-10 -> 2^-9
      {0x02, 0x3B400000},  // 3 * 2^-10: tie between 1 and 2 quanta -> 2 (even)
      {0x02, 0x3BA00000},  // 5 * 2^-10: tie between 2 and 3 quanta -> 2 (even)
      {0x08, 0x3C700000},  // 7.5 * 2^-9: tie -> 2^-6 (even, the smallest normal)
      {0x08, 0x3C7FFFFF},  // just below 2^-6 -> 2^-6
      {0x38, 0x3F880000},  // 1 + 2^-4: tie between 1 and 1.125 -> 1
      {0x3A, 0x3F980000},  // 1 + 3 * 2^-4: tie -> 1.25 (even)
      {0x39, 0x3F880001},  // just above the tie -> up
      {0x38, 0x3F87FFFF},  // just below the tie -> down
      // 1 + 2^-4 + 2^-13: through fp16 it would become the tie 1 + 2^-4 and
      // then 1.0 (double rounding); rounded once it is above the tie: 1.125.
      {0x39, 0x3F880400},
      {0x00, 0x00800000},  // FLT_MIN underflows to +0
      {0x80, 0x80000001},  // a negative fp32 subnormal -> -0
  };
  for (const auto& c : kCases)
    EXPECT_EQ(narrow_e4m3(from_bits(c.single)), c.fp8) << std::hex << "fp32 0x" << c.single;
}

TEST(Fp8E5M2, WidensKnownEncodingsExactly) {
  constexpr Case8 kCases[] = {
      {0x3C, 0x3F800000},                      // 1.0
      {0xC0, 0xC0000000},                      // -2.0
      {0x7B, 0x47600000}, {0xFB, 0xC7600000},  // +-57344, the largest finite
      {0x01, 0x37800000},                      // 2^-16, the smallest subnormal
      {0x03, 0x38400000},                      // 3 * 2^-16, the largest subnormal
      {0x04, 0x38800000},                      // 2^-14, the smallest normal
      {0x00, 0x00000000}, {0x80, 0x80000000},  // signed zeros
      {0x7C, 0x7F800000}, {0xFC, 0xFF800000},  // infinities
  };
  for (const auto& c : kCases)
    EXPECT_EQ(bits(widen_e5m2(c.fp8)), c.single) << std::hex << "e5m2 0x" << int{c.fp8};
}

TEST(Fp8E5M2, NarrowsKnownValuesToNearestEven) {
  constexpr Case8 kCases[] = {
      {0x3C, 0x3F800000},  // 1.0
      {0xC0, 0xC0000000},  // -2.0
      {0x7B, 0x47600000},  // 57344
      {0x7B, 0x476FFFFF},  // just below 61440 -> 57344
      {0x7C, 0x47700000},  // 61440: tie between 57344 (odd) and 2^16 -> overflow to inf
      {0xFC, 0xC7700000},  // -61440 -> -inf
      {0x7C, 0x4E6E6B28},  // 1e9 -> inf
      {0x7C, 0x7F7FFFFF},  // FLT_MAX -> inf
      {0x01, 0x37800000},  // 2^-16
      {0x00, 0x37000000},  // 2^-17: tie between 0 and 2^-16 -> 0 (even)
      {0x80, 0xB7000000},  // -2^-17 -> -0
      {0x01, 0x37000001},  // just above 2^-17 -> 2^-16
      {0x02, 0x37C00000},  // 3 * 2^-17: tie between 1 and 2 quanta -> 2 (even)
      {0x04, 0x38600000},  // 3.5 * 2^-16: tie -> 2^-14 (even, the smallest normal)
      {0x3C, 0x3F900000},  // 1 + 2^-3: tie between 1 and 1.25 -> 1
      {0x3E, 0x3FB00000},  // 1 + 3 * 2^-3: tie -> 1.5 (even)
      {0x3D, 0x3F900001},  // just above the tie -> up
      // 1 + 2^-3 + 2^-12: fp16 would round it to the tie 1 + 2^-3, then to
      // 1.0 (double rounding); rounded once it is above the tie: 1.25.
      {0x3D, 0x3F900800},
      {0x00, 0x00800000},  // FLT_MIN underflows to +0
      {0x80, 0x80000001},  // a negative fp32 subnormal -> -0
      {0x7C, 0x7F800000},
      {0xFC, 0xFF800000},  // infinities
  };
  for (const auto& c : kCases)
    EXPECT_EQ(narrow_e5m2(from_bits(c.single)), c.fp8) << std::hex << "fp32 0x" << c.single;
}

bool is_e4m3_nan(uint32_t b) { return (b & 0x7F) == 0x7F; }
bool is_e5m2_nan(uint32_t b) { return (b & 0x7C) == 0x7C && (b & 0x03) != 0; }

TEST(Fp8, NaNsWidenAndNarrowToTheCanonicalPatterns) {
  EXPECT_EQ(kCanonicalNanE4M3, 0x7F);
  EXPECT_EQ(kCanonicalNanE5M2, 0x7E);
  for (uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7FC12345u,
                       0xFFFFFFFFu}) {
    EXPECT_EQ(narrow_e4m3(from_bits(nan)), 0x7F) << std::hex << nan;
    EXPECT_EQ(narrow_e5m2(from_bits(nan)), 0x7E) << std::hex << nan;
  }
  int e4m3_nans = 0, e5m2_nans = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    const auto x = static_cast<uint8_t>(b);
    if (is_e4m3_nan(b)) {
      ++e4m3_nans;
      EXPECT_EQ(bits(widen_e4m3(x)), 0x7FC00000u) << std::hex << b;
    } else {
      EXPECT_FALSE(std::isnan(widen_e4m3(x))) << std::hex << b;
      EXPECT_FALSE(std::isinf(widen_e4m3(x))) << std::hex << b;  // E4M3FN: no infinity
    }
    if (is_e5m2_nan(b)) {
      ++e5m2_nans;
      EXPECT_EQ(bits(widen_e5m2(x)), 0x7FC00000u) << std::hex << b;
    }
  }
  EXPECT_EQ(e4m3_nans, 2);  // 0x7F and 0xFF
  EXPECT_EQ(e5m2_nans, 6);
}

TEST(Fp8, EveryPatternSurvivesWidenThenNarrow) {
  for (uint32_t b = 0; b < 256; ++b) {
    const auto x = static_cast<uint8_t>(b);
    EXPECT_EQ(narrow_e4m3(widen_e4m3(x)), is_e4m3_nan(b) ? 0x7F : x) << std::hex << b;
    EXPECT_EQ(narrow_e5m2(widen_e5m2(x)), is_e5m2_nan(b) ? 0x7E : x) << std::hex << b;
  }
}

// E5M2 is the upper byte of an fp16; positive E4M3/E5M2 patterns are ordered like their values.
TEST(Fp8, E5M2IsTheUpperByteOfFp16AndPatternsAreMonotonic) {
  for (uint32_t b = 0; b < 256; ++b) {
    if (is_e5m2_nan(b)) continue;
    EXPECT_EQ(bits(widen_e5m2(static_cast<uint8_t>(b))),
              bits(widen_fp16(static_cast<uint16_t>(b << 8))))
        << std::hex << b;
  }
  for (uint32_t b = 1; b < 0x7F; ++b)
    EXPECT_LT(widen_e4m3(static_cast<uint8_t>(b - 1)), widen_e4m3(static_cast<uint8_t>(b))) << b;
  for (uint32_t b = 1; b <= 0x7C; ++b)
    EXPECT_LT(widen_e5m2(static_cast<uint8_t>(b - 1)), widen_e5m2(static_cast<uint8_t>(b))) << b;
}

TEST(Int8, SumWrapsTwosComplement) {
  constexpr int8_t kMax = 127, kMin = -128;
  EXPECT_EQ(sum(kMax, int8_t{1}), kMin);
  EXPECT_EQ(sum(kMin, int8_t{-1}), kMax);
  EXPECT_EQ(sum(kMin, kMin), int8_t{0});
  EXPECT_EQ(sum(int8_t{100}, int8_t{100}), int8_t{-56});
  EXPECT_EQ(sum(int8_t{-5}, int8_t{3}), int8_t{-2});
  EXPECT_EQ(min(kMin, kMax), kMin);
  EXPECT_EQ(max(kMin, kMax), kMax);
  EXPECT_EQ(min(int8_t{-1}, int8_t{0}), int8_t{-1});
  EXPECT_EQ(max(int8_t{-1}, int8_t{0}), int8_t{0});
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
