#include "manager/core/memory_ledger.h"

#include <gtest/gtest.h>

namespace epic::manager {
namespace {

class MemoryLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ledger.add_switch("leaf0", 64);
    ledger.add_switch("leaf1", 64);
    ledger.add_switch("spine0", 32);
  }
  MemoryLedger ledger;
  Quota none;
};

TEST_F(MemoryLedgerTest, AGroupCostsTwoWindowsOfSlotsPerSwitch) {
  EXPECT_EQ(slots_for_window(16), 32u);
  EXPECT_EQ(slots_for_window(1), 2u);
  EXPECT_EQ(slots_for_window(1u << 20), 1u << 21);
}

TEST_F(MemoryLedgerTest, AGrantSpansEverySwitchAndIsCommittedWhole) {
  GrantPlan p = ledger.plan("t", none, {{"leaf0", 32}, {"leaf1", 32}, {"spine0", 32}});
  ASSERT_EQ(p.verdict, PlanVerdict::kFits) << p.reason;
  ASSERT_EQ(p.grants.size(), 3u);
  EXPECT_EQ(p.grants[2], (SlotGrant{"spine0", 32, 0}));
  ledger.commit("t", p.grants);
  EXPECT_EQ(ledger.free_for("t", "leaf0"), 32u);
  EXPECT_EQ(ledger.free_for("t", "spine0"), 0u);
  EXPECT_EQ(ledger.held_on("t", "leaf1"), 32u);
  EXPECT_EQ(ledger.held_total("t"), 96u);
}

TEST_F(MemoryLedgerTest, ARefusedPlanChangesNothing) {
  ledger.commit("t", ledger.plan("t", none, {{"spine0", 32}}).grants);
  const MemoryLedger before = ledger;
  GrantPlan p = ledger.plan("u", none, {{"leaf0", 32}, {"leaf1", 32}, {"spine0", 32}});
  EXPECT_EQ(p.verdict, PlanVerdict::kNoMemory);
  EXPECT_TRUE(p.grants.empty());
  EXPECT_EQ(p.reason,
            "no INC memory: switch 'spine0' has 0 free slots for tenant 'u' (partition 0 + "
            "shared 0); the group needs 32");
  EXPECT_EQ(ledger, before);
}

TEST_F(MemoryLedgerTest, ReleaseReturnsTheSlots) {
  const MemoryLedger empty = ledger;
  GrantPlan p = ledger.plan("t", none, {{"leaf0", 32}, {"spine0", 32}});
  ledger.commit("t", p.grants);
  ledger.release("t", p.grants);
  EXPECT_EQ(ledger, empty);
}

TEST_F(MemoryLedgerTest, MoreThanTheCapacityCanNeverFit) {
  GrantPlan p = ledger.plan("t", none, {{"leaf0", 32}, {"spine0", 64}});
  EXPECT_EQ(p.verdict, PlanVerdict::kNever);
  EXPECT_EQ(p.reason,
            "the group needs 64 slots on switch 'spine0', which can never give tenant 't' more "
            "than 32 (its partition 0 + the shared pool 32)");
}

TEST_F(MemoryLedgerTest, APartitionIsDrawnFirstAndKeepsOthersOut) {
  ASSERT_TRUE(ledger.set_partitions("a", {{"leaf0", 48}}).ok());
  EXPECT_EQ(ledger.book("leaf0")->shared_capacity(), 16u);
  EXPECT_EQ(ledger.free_for("a", "leaf0"), 64u);
  EXPECT_EQ(ledger.free_for("b", "leaf0"), 16u);
  GrantPlan p = ledger.plan("a", none, {{"leaf0", 56}});
  ASSERT_EQ(p.verdict, PlanVerdict::kFits);
  EXPECT_EQ(p.grants[0], (SlotGrant{"leaf0", 56, 48}));
  ledger.commit("a", p.grants);
  EXPECT_EQ(ledger.book("leaf0")->shared_used, 8u);
  p = ledger.plan("b", none, {{"leaf0", 16}});
  EXPECT_EQ(p.verdict, PlanVerdict::kNoMemory);
  EXPECT_EQ(p.reason,
            "no INC memory: switch 'leaf0' has 8 free slots for tenant 'b' (partition 0 + shared "
            "8); the group needs 16");
  p = ledger.plan("b", none, {{"leaf0", 32}});
  EXPECT_EQ(p.verdict, PlanVerdict::kNever);
}

TEST_F(MemoryLedgerTest, PartitionsMustFitAndCoverWhatIsHeld) {
  Status s = ledger.set_partitions("a", {{"spine0", 40}});
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.error().message,
            "partitions on switch 'spine0' would total 40 slots, more than its capacity 32");
  s = ledger.set_partitions("a", {{"spine9", 4}});
  EXPECT_EQ(s.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(s.error().message, "tenant 'a' reserves slots on unknown switch 'spine9'");
  ASSERT_TRUE(ledger.set_partitions("a", {{"leaf0", 32}}).ok());
  ledger.commit("a", ledger.plan("a", none, {{"leaf0", 32}}).grants);
  s = ledger.set_partitions("a", {{"leaf0", 16}});
  EXPECT_EQ(s.error().message,
            "tenant 'a' holds 32 slots of its partition on switch 'leaf0'; the partition cannot "
            "shrink to 16");
  ledger.commit("b", ledger.plan("b", none, {{"leaf0", 32}}).grants);
  s = ledger.set_partitions("c", {{"leaf0", 8}});
  EXPECT_EQ(s.error().message,
            "the shared pool of switch 'leaf0' would shrink to 24 slots but groups hold 32 of it");
}

TEST_F(MemoryLedgerTest, RestoreRefusesAGrantThatDoesNotFit) {
  EXPECT_TRUE(ledger.restore("t", {{"spine0", 32, 0}}).ok());
  Status s = ledger.restore("t", {{"spine0", 2, 0}});
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.error().message,
            "grant of 2 slots (0 from the partition) on switch 'spine0' does not fit: partition "
            "free 0, shared free 0");
}

}  // namespace
}  // namespace epic::manager
