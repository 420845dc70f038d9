#include "manager/core/memory_ledger.h"

#include <gtest/gtest.h>

namespace epic::manager {
namespace {

// One slot and one window-16 group context at pmtu 1024, in bytes.
constexpr uint64_t kSlot = vocab::slot_bytes(1024);               // 3104
constexpr uint64_t kGroup = vocab::group_memory_bytes(16, 1024);  // 99328 = 32 slots
static_assert(kSlot == 3104 && kGroup == 99328);

class MemoryLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ledger.add_switch("leaf0", 2 * kGroup);  // 198656
    ledger.add_switch("leaf1", 2 * kGroup);
    ledger.add_switch("spine0", kGroup);  // 99328
  }
  MemoryLedger ledger;
  Quota none;
};

TEST_F(MemoryLedgerTest, AGroupCostsTwoWindowsOfSlotsPerSwitchInBytes) {
  EXPECT_EQ(group_memory_bytes(16, 1024), 32 * kSlot);
  EXPECT_EQ(group_memory_bytes(1, 256), 2u * (32 + 512 + 256));
  EXPECT_EQ(group_memory_bytes(16, 4096), 32u * (32 + 8192 + 4096));
}

TEST_F(MemoryLedgerTest, AGrantSpansEverySwitchAndIsCommittedWhole) {
  GrantPlan p = ledger.plan("t", none, {{"leaf0", kGroup}, {"leaf1", kGroup}, {"spine0", kGroup}});
  ASSERT_EQ(p.verdict, PlanVerdict::kFits) << p.reason;
  ASSERT_EQ(p.grants.size(), 3u);
  EXPECT_EQ(p.grants[2], (MemoryGrant{"spine0", kGroup, 0}));
  ledger.commit("t", p.grants);
  EXPECT_EQ(ledger.free_for("t", "leaf0"), kGroup);
  EXPECT_EQ(ledger.free_for("t", "spine0"), 0u);
  EXPECT_EQ(ledger.held_on("t", "leaf1"), kGroup);
  EXPECT_EQ(ledger.held_total("t"), 3 * kGroup);
}

TEST_F(MemoryLedgerTest, ARefusedPlanChangesNothingAndNamesGroupSwitchAndBytes) {
  ledger.commit("t", ledger.plan("t", none, {{"spine0", kGroup}}).grants);
  const MemoryLedger before = ledger;
  GrantPlan p =
      ledger.plan("u", none, {{"leaf0", kGroup}, {"leaf1", kGroup}, {"spine0", kGroup}}, 7);
  EXPECT_EQ(p.verdict, PlanVerdict::kNoMemory);
  EXPECT_TRUE(p.grants.empty());
  EXPECT_EQ(p.reason,
            "no INC memory: group 7 needs 99328 bytes on switch 'spine0', 0 free for tenant 'u' "
            "(partition 0 + shared 0; capacity 99328)");
  EXPECT_EQ(ledger, before);
}

TEST_F(MemoryLedgerTest, ReleaseReturnsTheBytes) {
  const MemoryLedger empty = ledger;
  GrantPlan p = ledger.plan("t", none, {{"leaf0", kGroup}, {"spine0", kGroup}});
  ledger.commit("t", p.grants);
  ledger.release("t", p.grants);
  EXPECT_EQ(ledger, empty);
}

TEST_F(MemoryLedgerTest, MoreThanTheCapacityCanNeverFit) {
  GrantPlan p = ledger.plan("t", none, {{"leaf0", kGroup}, {"spine0", kGroup + 1}}, 3);
  EXPECT_EQ(p.verdict, PlanVerdict::kNever);
  EXPECT_EQ(p.reason,
            "group 3 needs 99329 bytes on switch 'spine0', which can never give tenant 't' more "
            "than 99328 (its partition 0 + the shared pool 99328; capacity 99328)");
}

TEST_F(MemoryLedgerTest, APartitionIsDrawnFirstAndKeepsOthersOut) {
  ASSERT_TRUE(ledger.set_partitions("a", {{"leaf0", 150000}}).ok());
  EXPECT_EQ(ledger.book("leaf0")->shared_capacity(), 48656u);
  EXPECT_EQ(ledger.free_for("a", "leaf0"), 2 * kGroup);
  EXPECT_EQ(ledger.free_for("b", "leaf0"), 48656u);
  GrantPlan p = ledger.plan("a", none, {{"leaf0", 160000}});
  ASSERT_EQ(p.verdict, PlanVerdict::kFits);
  EXPECT_EQ(p.grants[0], (MemoryGrant{"leaf0", 160000, 150000}));
  ledger.commit("a", p.grants);
  EXPECT_EQ(ledger.book("leaf0")->shared_used, 10000u);
  p = ledger.plan("b", none, {{"leaf0", 40000}});
  EXPECT_EQ(p.verdict, PlanVerdict::kNoMemory);
  EXPECT_EQ(p.reason,
            "no INC memory: the group needs 40000 bytes on switch 'leaf0', 38656 free for tenant "
            "'b' (partition 0 + shared 38656; capacity 198656)");
  p = ledger.plan("b", none, {{"leaf0", 48657}});
  EXPECT_EQ(p.verdict, PlanVerdict::kNever);
}

TEST_F(MemoryLedgerTest, PartitionsMustFitAndCoverWhatIsHeld) {
  Status s = ledger.set_partitions("a", {{"spine0", kGroup + 1}});
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.error().message,
            "reserved_bytes: partitions on switch 'spine0' would total 99329 bytes, more than its "
            "capacity 99328 bytes");
  s = ledger.set_partitions("a", {{"spine9", 4}});
  EXPECT_EQ(s.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(s.error().message, "tenant 'a' reserves memory on unknown switch 'spine9'");
  ASSERT_TRUE(ledger.set_partitions("a", {{"leaf0", kGroup}}).ok());
  ledger.commit("a", ledger.plan("a", none, {{"leaf0", kGroup}}).grants);
  s = ledger.set_partitions("a", {{"leaf0", 1000}});
  EXPECT_EQ(s.error().message,
            "reserved_bytes: tenant 'a' holds 99328 bytes of its partition on switch 'leaf0'; the "
            "partition cannot shrink to 1000 bytes");
  ledger.commit("b", ledger.plan("b", none, {{"leaf0", kGroup}}).grants);
  s = ledger.set_partitions("c", {{"leaf0", 1000}});
  EXPECT_EQ(s.error().message,
            "reserved_bytes: the shared pool of switch 'leaf0' would shrink to 98328 bytes but "
            "groups hold 99328 bytes of it");
  // Partitions close to 2^64 are refused, not wrapped around.
  s = ledger.set_partitions("d", {{"spine0", UINT64_MAX}});
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
}

TEST_F(MemoryLedgerTest, QuotaPerSwitchNamesTheFieldAndTheLimit) {
  Quota q{.max_bytes_per_switch = kGroup};
  GrantPlan p = ledger.plan("t", q, {{"leaf0", kGroup + kSlot}}, 5);
  EXPECT_EQ(p.verdict, PlanVerdict::kNever);
  EXPECT_EQ(p.reason,
            "group 5 needs 102432 bytes on switch 'leaf0'; max_bytes_per_switch of tenant 't' is "
            "99328");
  ledger.commit("t", ledger.plan("t", q, {{"leaf0", kGroup}}).grants);
  p = ledger.plan("t", q, {{"leaf0", kSlot}}, 6);
  EXPECT_EQ(p.verdict, PlanVerdict::kOverQuota);
  EXPECT_EQ(p.reason,
            "group 6 needs 3104 bytes on switch 'leaf0'; tenant 't' holds 99328 of its "
            "max_bytes_per_switch 99328 there");
  EXPECT_EQ(ledger.plan("t", q, {{"leaf1", kGroup}}).verdict, PlanVerdict::kFits);
}

TEST_F(MemoryLedgerTest, QuotaTotalNamesTheFieldAndTheLimit) {
  Quota q{.max_bytes_total = 2 * kGroup};
  GrantPlan p = ledger.plan("t", q, {{"leaf0", kGroup}, {"leaf1", kGroup}, {"spine0", kGroup}}, 8);
  EXPECT_EQ(p.verdict, PlanVerdict::kNever);
  EXPECT_EQ(p.reason,
            "group 8 needs 297984 bytes on 3 switch(es); max_bytes_total of tenant 't' is 198656");
  ledger.commit("t", ledger.plan("t", q, {{"leaf0", kGroup}}).grants);
  p = ledger.plan("t", q, {{"leaf1", kGroup}, {"spine0", kGroup}}, 9);
  EXPECT_EQ(p.verdict, PlanVerdict::kOverQuota);
  EXPECT_EQ(p.reason,
            "group 9 needs 198656 bytes; tenant 't' holds 99328 of its max_bytes_total 198656");
}

TEST_F(MemoryLedgerTest, RestoreRefusesAGrantThatDoesNotFit) {
  EXPECT_TRUE(ledger.restore("t", {{"spine0", kGroup, 0}}).ok());
  Status s = ledger.restore("t", {{"spine0", kSlot, 0}});
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.error().message,
            "grant of 3104 bytes (0 from the partition) on switch 'spine0' does not fit: "
            "partition free 0, shared free 0 (capacity 99328)");
}

}  // namespace
}  // namespace epic::manager
