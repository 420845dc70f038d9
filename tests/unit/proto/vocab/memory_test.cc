#include "proto/vocab/memory.h"

#include <gtest/gtest.h>

namespace epic::vocab {
namespace {

TEST(Memory, SlotIsBookkeepingPlusWidenedAccumulatorPlusResult) {
  EXPECT_EQ(slot_accum_bytes(1024), 2048u);
  EXPECT_EQ(slot_result_bytes(1024), 1024u);
  EXPECT_EQ(slot_bytes(256), 32u + 512 + 256);
  EXPECT_EQ(slot_bytes(1024), 3104u);
  EXPECT_EQ(slot_bytes(4096), 12320u);
}

TEST(Memory, GroupContextIsTwoWindowsOfSlots) {
  EXPECT_EQ(slots_for_window(16), 32u);
  EXPECT_EQ(group_memory_bytes(16, 1024), 32u * 3104);
  EXPECT_EQ(group_memory_bytes(1, 256), 2u * 800);
  // Doubling the window or the path MTU roughly doubles the memory; it grows with both.
  EXPECT_EQ(group_memory_bytes(32, 1024), 2 * group_memory_bytes(16, 1024));
  EXPECT_LT(group_memory_bytes(16, 1024), group_memory_bytes(16, 2048));
  // The largest context fits in 64 bits with room: 2^21 slots of 12320 bytes.
  EXPECT_EQ(group_memory_bytes(kMaxWindow, kMaxPmtu), (uint64_t{1} << 21) * 12320);
}

TEST(Memory, DefaultSwitchMemoryIs8192SlotsAtTheDefaultPmtu) {
  EXPECT_EQ(kDefaultSwitchMemoryBytes, 8192u * slot_bytes(kDefaultPmtu));
  EXPECT_EQ(kDefaultSwitchMemoryBytes, 25427968u);
}

}  // namespace
}  // namespace epic::vocab
