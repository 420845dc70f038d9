// Spatial Mux: per-tenant quotas and static partitions, through IncManager::join.
#include <gtest/gtest.h>

#include "manager/core/inc_manager.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::hosts_on;
using testing::make_request;
using testing::slots;

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
      m.set_tenant({.name = "a", .quota = {.max_bytes_per_switch = slots(64)}, .reserved = {}})
          .ok());
  ASSERT_TRUE(join("a", "g1", 16, 0x100).ok());
  ASSERT_TRUE(join("a", "g2", 16, 0x200).ok());
  auto r = join("a", "g3", 16, 0x300);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(r.error().message,
            "the group needs 99328 bytes on switch 'leaf0'; tenant 'a' holds 198656 of its "
            "max_bytes_per_switch 198656 there");
  // Another tenant is not affected.
  EXPECT_TRUE(join("t", "g3", 16, 0x300).ok());
}

TEST_F(SpatialMuxTest, AGroupLargerThanTheQuotaCanNeverBeAdmitted) {
  ASSERT_TRUE(
      m.set_tenant({.name = "a", .quota = {.max_bytes_per_switch = slots(64)}, .reserved = {}})
          .ok());
  auto r = join("a", "big", 64, 0x100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message,
            "the group needs 397312 bytes on switch 'leaf0'; max_bytes_per_switch of tenant 'a' is "
            "198656");
  EXPECT_TRUE(m.groups().empty());
}

TEST_F(SpatialMuxTest, TotalQuotaCountsEverySwitchOfTheTree) {
  ASSERT_TRUE(
      m.set_tenant({.name = "a", .quota = {.max_bytes_total = slots(100)}, .reserved = {}}).ok());
  ASSERT_TRUE(join("a", "g1", 16, 0x100, 2).ok());  // leaf0, leaf1, spine0: 3 x 32 slots
  EXPECT_EQ(m.ledger().held_total("a"), slots(96));
  auto r = join("a", "g2", 1, 0x200, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(r.error().message,
            "the group needs 18624 bytes; tenant 'a' holds 297984 of its max_bytes_total 310400");
  r = join("a", "g3", 32, 0x300, 2);
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message,
            "the group needs 595968 bytes on 3 switch(es); max_bytes_total of tenant 'a' is "
            "310400");
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
  ASSERT_TRUE(m.set_tenant({.name = "a", .quota = {}, .reserved = {{"leaf0", slots(512)}}}).ok());
  ASSERT_TRUE(m.set_tenant({.name = "b", .quota = {}, .reserved = {}}).ok());
  ASSERT_TRUE(join("b", "b1", 256, 0x100).ok());  // 512 slots: the whole shared pool
  auto r = join("b", "b2", 1, 0x200);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "no INC memory: the group needs 6208 bytes on switch 'leaf0', 0 free for tenant 'b' "
            "(partition 0 + shared 0; capacity 3178496)");
  auto a = join("a", "a1", 256, 0x300);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(m.find_group(a.value().group_id)->grants[0],
            (MemoryGrant{"leaf0", slots(512), slots(512)}));
}

TEST_F(SpatialMuxTest, TenantsAreValidated) {
  Status s = m.set_tenant({.name = "a", .quota = {}, .reserved = {{"leaf0", 0}}});
  EXPECT_EQ(s.error().message,
            "reserved_bytes: tenant 'a' reserves 0 bytes on switch 'leaf0'; leave the switch out "
            "instead");
  s = m.set_tenant({.name = "a b", .quota = {}, .reserved = {}});
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  s = m.set_tenant({.name = "a", .quota = {}, .reserved = {{"leaf0", slots(2000)}}});
  EXPECT_EQ(s.error().message,
            "reserved_bytes: partitions on switch 'leaf0' would total 6208000 bytes, more than its "
            "capacity 3178496 bytes");
  EXPECT_EQ(m.tenants().count("a"), 0u);
}

}  // namespace
}  // namespace epic::manager
