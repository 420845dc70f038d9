// The engine's slot memory is exactly what the manager grants and the agent accounts:
// SlotRegion is sized by proto/vocab/memory.h, and its accumulators can hold a pmtu payload of
// the narrowest wire type widened to the accumulator width.
#include <gtest/gtest.h>

#include "datapath/arith/dtype.h"
#include "datapath/engine/slot.h"
#include "proto/vocab/memory.h"

namespace epic::engine {
namespace {

TEST(SlotRegion, AllocatesWhatTheGrantCounts) {
  for (uint32_t pmtu : {256u, 1024u, 4096u}) {
    for (uint32_t window : {1u, 16u, 128u}) {
      SlotRegion r(window, static_cast<uint16_t>(pmtu));
      EXPECT_EQ(r.bytes(), vocab::group_memory_bytes(window, pmtu)) << window << " " << pmtu;
      EXPECT_EQ(r.nslots, vocab::slots_for_window(window));
    }
  }
}

TEST(SlotRegion, AccumulatorHoldsAPayloadOfEveryTypeWidened) {
  SlotRegion r(2, 1024);
  for (uint8_t code = 0; code < arith::kNumDTypes; ++code) {
    const auto t = static_cast<arith::DType>(code);
    const size_t elements = 1024 / arith::wire_bytes(t);
    EXPECT_LE(elements * arith::accum_bytes(t), vocab::slot_accum_bytes(1024)) << int{code};
  }
  // Consecutive slots' accumulators do not overlap, and the last ends inside the storage.
  EXPECT_EQ(r.accum_of(1) - r.accum_of(0), static_cast<ptrdiff_t>(vocab::slot_accum_bytes(1024)));
  EXPECT_LE(r.accum_of(3) + vocab::slot_accum_bytes(1024),
            r.accum_storage.data() + r.accum_storage.size());
}

}  // namespace
}  // namespace epic::engine
