// Spatial Mux: per-tenant quotas and static partitions, through IncManager::join.
#include <gtest/gtest.h>

#include "manager/core/inc_manager.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::hosts_on;
using testing::make_request;

const Millis t0{1000};

class SpatialMuxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::build_fabric(m, {.leaves = 2, .spines = 1, .ranks_per_leaf = 4});
  }
  Result<JoinResult> join(const std::string& tenant, const std::string& name, uint32_t window,
                          uint32_t qpn_base, int leaves = 1) {
    return m.join(make_request(name, hosts_on(leaves, 2), window, qpn_base, tenant), t0);
  }
  IncManager m;
};

TEST_F(SpatialMuxTest, PerSwitchQuotaCapsWhatATenantHoldsOnOneSwitch) {
  ASSERT_TRUE(
      m.set_tenant({.name = "a", .quota = {.max_slots_per_switch = 64}, .reserved = {}}).ok());
  ASSERT_TRUE(join("a", "g1", 16, 0x100).ok());
  ASSERT_TRUE(join("a", "g2", 16, 0x200).ok());
  auto r = join("a", "g3", 16, 0x300);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(r.error().message,
            "tenant 'a' holds 64 of its 64 slots per switch on switch 'leaf0'; the group needs "
            "32 more");
  // Another tenant is not affected.
  EXPECT_TRUE(join("t", "g3", 16, 0x300).ok());
}

TEST_F(SpatialMuxTest, AGroupLargerThanTheQuotaCanNeverBeAdmitted) {
  ASSERT_TRUE(
      m.set_tenant({.name = "a", .quota = {.max_slots_per_switch = 64}, .reserved = {}}).ok());
  auto r = join("a", "big", 64, 0x100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message,
            "the group needs 128 slots on switch 'leaf0'; the quota of tenant 'a' is 64 slots "
            "per switch");
  EXPECT_TRUE(m.groups().empty());
}

TEST_F(SpatialMuxTest, TotalQuotaCountsEverySwitchOfTheTree) {
  ASSERT_TRUE(m.set_tenant({.name = "a", .quota = {.max_slots_total = 100}, .reserved = {}}).ok());
  ASSERT_TRUE(join("a", "g1", 16, 0x100, 2).ok());  // leaf0, leaf1, spine0: 3 x 32
  EXPECT_EQ(m.ledger().held_total("a"), 96u);
  auto r = join("a", "g2", 1, 0x200, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(r.error().message,
            "tenant 'a' holds 96 of its 100 slots in all; the group needs 6 more");
  r = join("a", "g3", 32, 0x300, 2);
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message,
            "the group needs 192 slots on 3 switch(es); the quota of tenant 'a' is 100 slots in "
            "all");
}

TEST_F(SpatialMuxTest, GroupCountAndGroupSizeQuotas) {
  ASSERT_TRUE(
      m.set_tenant(
           {.name = "a", .quota = {.max_groups = 1, .max_ranks_per_group = 2}, .reserved = {}})
          .ok());
  ASSERT_TRUE(join("a", "g1", 16, 0x100).ok());
  auto r = join("a", "g2", 16, 0x200);
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(r.error().message, "tenant 'a' already has 1 groups, its quota");
  r = m.join(make_request("g4", hosts_on(1, 4), 16, 0x400, "a"), t0);
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message, "the group has 4 ranks; tenant 'a' allows at most 2 per group");
}

TEST_F(SpatialMuxTest, AStaticPartitionIsTheTenantsAlone) {
  ASSERT_TRUE(m.set_tenant({.name = "a", .quota = {}, .reserved = {{"leaf0", 512}}}).ok());
  ASSERT_TRUE(m.set_tenant({.name = "b", .quota = {}, .reserved = {}}).ok());
  ASSERT_TRUE(join("b", "b1", 256, 0x100).ok());  // 512 slots: the whole shared pool
  auto r = join("b", "b2", 1, 0x200);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "no INC memory: switch 'leaf0' has 0 free slots for tenant 'b' (partition 0 + "
            "shared 0); the group needs 2");
  auto a = join("a", "a1", 256, 0x300);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(m.find_group(a.value().group_id)->grants[0], (SlotGrant{"leaf0", 512, 512}));
}

TEST_F(SpatialMuxTest, TenantsAreValidated) {
  Status s = m.set_tenant({.name = "a", .quota = {}, .reserved = {{"leaf0", 0}}});
  EXPECT_EQ(s.error().message,
            "tenant 'a' reserves 0 slots on switch 'leaf0'; leave the switch out instead");
  s = m.set_tenant({.name = "a b", .quota = {}, .reserved = {}});
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  s = m.set_tenant({.name = "a", .quota = {}, .reserved = {{"leaf0", 2000}}});
  EXPECT_EQ(s.error().message,
            "partitions on switch 'leaf0' would total 2000 slots, more than its capacity 1024");
  EXPECT_EQ(m.tenants().count("a"), 0u);
}

}  // namespace
}  // namespace epic::manager
