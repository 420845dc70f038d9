// The engine's slot memory is exactly what the manager grants and the agent accounts:
// SlotRegion is sized by proto/vocab/memory.h for the group's arithmetic (proto/vocab/arith.h),
// and its accumulators hold a pmtu payload of every (dtype, op) the arithmetic admits.
#include <gtest/gtest.h>

#include <vector>

#include "datapath/arith/dtype.h"
#include "datapath/engine/slot.h"
#include "proto/vocab/memory.h"

namespace epic::engine {
namespace {

using vocab::AccumProfile;
using vocab::GroupArith;

std::vector<GroupArith> every_arith() {
  std::vector<GroupArith> all{GroupArith{}};
  for (uint8_t p = 0; p < vocab::kNumAccumProfiles; ++p) {
    for (uint8_t code = 0; code < arith::kNumDTypes; ++code) {
      all.push_back({static_cast<AccumProfile>(p), static_cast<arith::DType>(code)});
    }
  }
  return all;
}

TEST(SlotRegion, AllocatesWhatTheGrantCounts) {
  for (uint32_t pmtu : {256u, 1024u, 4096u}) {
    for (uint32_t window : {1u, 16u, 128u}) {
      SlotRegion r(window, static_cast<uint16_t>(pmtu));
      EXPECT_EQ(r.bytes(), vocab::group_memory_bytes(window, pmtu)) << window << " " << pmtu;
      EXPECT_EQ(r.nslots, vocab::slots_for_window(window));
    }
  }
  for (const GroupArith& a : every_arith()) {
    for (uint32_t ranks : {2u, 256u, 9000u}) {
      SlotRegion r(16, 1024, a, ranks);
      EXPECT_EQ(r.bytes(), vocab::group_memory_bytes(16, 1024, a, ranks))
          << vocab::to_string(a.profile) << " " << (a.dtype ? vocab::to_string(*a.dtype) : "-");
      EXPECT_EQ(r.accum_stride % 64, 0u) << "accumulators stay on cache lines";
    }
  }
}

TEST(SlotRegion, TheDefaultArithmeticHoldsTheFourByteAccumulatorsOfEveryTypeButFp8) {
  SlotRegion r(2, 1024);
  EXPECT_EQ(r.accum_stride, 2048u);  // fp16/bf16 in binary32: 2·pmtu, as before fp8 existed
  for (uint8_t code = 0; code < arith::kNumDTypes; ++code) {
    const auto t = static_cast<arith::DType>(code);
    const bool fp8 = t == arith::DType::kFp8E4M3 || t == arith::DType::kFp8E5M2;
    EXPECT_EQ(vocab::collective_fits(1024, {}, 8, t, arith::ReduceOp::kSum), !fp8) << int{code};
  }
  // Consecutive slots' accumulators do not overlap, and the last ends inside the storage.
  EXPECT_EQ(r.accum_of(1) - r.accum_of(0), static_cast<ptrdiff_t>(vocab::slot_accum_bytes(1024)));
  EXPECT_LE(r.accum_of(3) + vocab::slot_accum_bytes(1024),
            r.accum_storage.data() + r.accum_storage.size());
}

TEST(SlotRegion, AnExactGroupHoldsItsKulischLayoutAndAPartialBuffer) {
  const GroupArith exact{AccumProfile::kKulischFixed, arith::DType::kFp32};
  SlotRegion r(2, 1024, exact, 256);
  EXPECT_EQ(r.accum_stride, 256u * (9 * 8 + 1));  // nine int64 limbs and a flag byte
  EXPECT_EQ(r.partial.size(), vocab::max_partial_bytes(1024, arith::DType::kFp32, 256));
  // Every payload whose accumulator fits runs; bf16's exact sum (512 elements) does not.
  for (uint8_t code = 0; code < arith::kNumDTypes; ++code) {
    const auto t = static_cast<arith::DType>(code);
    for (uint8_t op = 0; op < arith::kNumReduceOps; ++op) {
      const auto o = static_cast<arith::ReduceOp>(op);
      EXPECT_EQ(vocab::collective_fits(1024, exact, 256, t, o),
                vocab::packet_accum_bytes(1024, exact.profile, t, o, 256) <= r.accum_stride);
    }
  }
  EXPECT_FALSE(
      vocab::collective_fits(1024, exact, 256, arith::DType::kBf16, arith::ReduceOp::kSum));
  EXPECT_TRUE(vocab::collective_fits(1024, exact, 256, arith::DType::kBf16, arith::ReduceOp::kMax));
}

}  // namespace
}  // namespace epic::engine
