// The group arithmetic's figures (proto/vocab/arith.h) against PRISM's table and
// docs/arithmetic.md: the exact width W of every float type for R = 1..65535, the layout that
// holds it, the bytes of one accumulator element and of one slot, and which collectives fit a
// group's slots.
#include "proto/vocab/arith.h"

#include <gtest/gtest.h>

#include "proto/vocab/memory.h"

namespace epic::vocab {
namespace {

// ceil(log2 R), counted by hand.
uint32_t ceil_log2_slow(uint32_t r) {
  uint32_t bits = 0;
  while ((uint64_t{1} << bits) < r) ++bits;
  return bits;
}

// PRISM's table: W = (Emax - Emin + p) + ceil(log2 R) + 1, written out per type.
TEST(ExactWidth, IsPrismsTableForEveryTypeAndContributorCount) {
  const std::pair<DType, uint32_t> base[] = {{DType::kFp32, 278},
                                             {DType::kBf16, 262},
                                             {DType::kFp16, 41},
                                             {DType::kFp8E5M2, 33},
                                             {DType::kFp8E4M3, 19}};
  for (uint32_t r : {1u, 2u, 3u, 4u, 5u, 8u, 9u, 255u, 256u, 257u, 1024u, 8192u, 8193u, 65535u}) {
    for (const auto& [t, w0] : base) {
      EXPECT_EQ(exact_width_bits(t, r), w0 + ceil_log2_slow(r)) << to_string(t) << " R " << r;
    }
    EXPECT_EQ(exact_width_bits(DType::kInt32, r), 0u);
    EXPECT_EQ(exact_width_bits(DType::kInt8, r), 0u);
  }
  EXPECT_EQ(exact_width_bits(DType::kFp32, 256), 286u);
}

// No group of at most 65535 ranks needs a width its layout cannot hold, for any R.
TEST(KulischLayout, HoldsTheWidthForEveryContributorCount) {
  for (DType t : {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E5M2, DType::kFp8E4M3}) {
    for (uint32_t r = 1; r <= 65535; ++r) {
      ASSERT_LE(exact_width_bits(t, r), kulisch_layout(t, r).capacity_bits())
          << to_string(t) << " R " << r;
    }
  }
  // E4M3 fits one int32 up to R = 8192 (19 + 13 = 32 bits), then one int64.
  EXPECT_EQ(kulisch_layout(DType::kFp8E4M3, 8192).limb_bytes, 4u);
  EXPECT_EQ(kulisch_layout(DType::kFp8E4M3, 8193).limb_bytes, 8u);
  EXPECT_EQ(kulisch_layout(DType::kFp32, 2).capacity_bits(), 319u);
}

TEST(AccumBytes, PerElementAndPerSlotAsDocumented) {
  const auto K = AccumProfile::kKulischFixed;
  const auto A = AccumProfile::kFp32Arrival;
  const auto sum = ReduceOp::kSum;
  EXPECT_EQ(accum_element_bytes(K, DType::kFp32, sum, 256), 73u);
  EXPECT_EQ(accum_element_bytes(K, DType::kBf16, sum, 256), 73u);
  EXPECT_EQ(accum_element_bytes(K, DType::kFp16, sum, 256), 9u);
  EXPECT_EQ(accum_element_bytes(K, DType::kFp8E5M2, sum, 256), 9u);
  EXPECT_EQ(accum_element_bytes(K, DType::kFp8E4M3, sum, 256), 5u);
  EXPECT_EQ(accum_element_bytes(K, DType::kFp8E4M3, sum, 9000), 9u);
  // min/max and integer sums use the FP32_ARRIVAL accumulators in both profiles.
  EXPECT_EQ(accum_element_bytes(K, DType::kFp32, ReduceOp::kMax, 256), 4u);
  EXPECT_EQ(accum_element_bytes(K, DType::kInt32, sum, 256), 4u);
  EXPECT_EQ(accum_element_bytes(K, DType::kInt8, sum, 256), 1u);
  EXPECT_EQ(accum_element_bytes(A, DType::kFp8E4M3, sum, 256), 4u);

  // docs/arithmetic.md's table, pmtu 1024.
  EXPECT_EQ(slot_accum_bytes(1024, GroupArith{}, 4), 2048u);
  EXPECT_EQ(slot_accum_bytes(1024, GroupArith{A, DType::kFp8E4M3}, 4), 4096u);
  EXPECT_EQ(slot_accum_bytes(1024, GroupArith{A, DType::kFp32}, 4), 1024u);
  EXPECT_EQ(slot_accum_bytes(1024, GroupArith{K, DType::kFp32}, 4), 256u * 73);
  EXPECT_EQ(slot_accum_bytes(1024, GroupArith{K, DType::kFp16}, 4), 512u * 9);
  EXPECT_EQ(group_memory_bytes(4, 1024, GroupArith{K, DType::kFp16}, 2), 8u * (32 + 4608 + 1024));
  EXPECT_EQ(group_memory_bytes(16, 1024, GroupArith{}, 2), group_memory_bytes(16, 1024));
}

TEST(CollectiveFits, WhatAGroupsSlotsHold) {
  const auto K = AccumProfile::kKulischFixed;
  const auto A = AccumProfile::kFp32Arrival;
  const auto sum = ReduceOp::kSum;
  const GroupArith plain{};
  for (DType t : {DType::kInt32, DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt8}) {
    EXPECT_TRUE(collective_fits(1024, plain, 4, t, sum)) << to_string(t);
  }
  EXPECT_FALSE(collective_fits(1024, plain, 4, DType::kFp8E4M3, sum));
  EXPECT_TRUE(collective_fits(1024, GroupArith{A, DType::kFp8E5M2}, 4, DType::kFp8E4M3, sum));
  EXPECT_FALSE(collective_fits(1024, GroupArith{A, DType::kFp32}, 4, DType::kFp16, sum));
  const GroupArith exact32{K, DType::kFp32};
  EXPECT_TRUE(collective_fits(1024, exact32, 4, DType::kFp32, sum));
  EXPECT_TRUE(collective_fits(1024, exact32, 4, DType::kFp16, sum));     // 4608 <= 18688
  EXPECT_TRUE(collective_fits(1024, exact32, 4, DType::kFp8E5M2, sum));  // 9216
  EXPECT_FALSE(collective_fits(1024, exact32, 4, DType::kBf16, sum));    // 37376
  EXPECT_TRUE(collective_fits(1024, exact32, 4, DType::kBf16, ReduceOp::kMin));
  const GroupArith exact16{K, DType::kFp16};
  EXPECT_FALSE(collective_fits(1024, exact16, 4, DType::kFp8E4M3, sum));  // 5120 > 4608
  EXPECT_FALSE(collective_fits(1024, exact16, 4, DType::kFp32, sum));
}

}  // namespace
}  // namespace epic::vocab
