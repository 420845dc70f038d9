#include "agent/core/group_table.h"

#include <gtest/gtest.h>

#include "tests/unit/agent/agent_test_util.h"

namespace epic::agent {
namespace {

using test::FakeSink;
using test::group;

// Switch memory counted in slots of pmtu 1024 (the test groups' pmtu): window 16 holds 32.
constexpr uint64_t slots(uint64_t n) { return n * vocab::slot_bytes(1024); }

vocab::GroupContext loaded(const inc::v1::GroupContext& g) {
  vocab::ContextErrors errors;
  vocab::SwitchView sw = test::test_switch();
  vocab::ContextReader v(sw, errors);
  return *v.read(g, "groups[0]");
}

// Static group 1 (window 16: 32 slots, QPNs 100/101) of a switch with `capacity` slots.
struct Rig {
  explicit Rig(uint32_t capacity = 256)
      : table(test::test_switch(), SwitchLimits{slots(capacity), 64, 4096}, {loaded(group(1, 100))},
              sink) {}
  FakeSink sink;
  GroupTable table;
};

TEST(GroupTable, InstallPublishesTheStaticAndTheNewGroupInOneSet) {
  Rig r;
  EXPECT_EQ(r.table.install(group(7, 200), slots(32)), "");
  EXPECT_EQ(r.sink.sets().size(), 1u);
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{1, 7}));
  EXPECT_EQ(r.sink.sets().back()[1], loaded(group(7, 200)));
  EXPECT_EQ(r.table.bytes_in_use(), slots(64));
  EXPECT_EQ(r.table.manager_capacity(), slots(256 - 32));
}

TEST(GroupTable, InstallingTheSameContextAgainSucceedsWithoutTouchingTheDatapath) {
  Rig r;
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  EXPECT_EQ(r.table.install(group(7, 200), slots(32)), "");
  EXPECT_EQ(r.sink.sets().size(), 1u);
}

TEST(GroupTable, ADifferentContextForAnInstalledGroupIsRefusedNamingTheDifference) {
  Rig r;
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  EXPECT_EQ(r.table.install(group(7, 200, 32), slots(64)),
            "group 7 is installed with a different context (window 16 → 32); remove it first");
  EXPECT_EQ(r.sink.sets().size(), 1u);
  EXPECT_EQ(r.table.find(7)->config.window, 16u);
}

TEST(GroupTable, RemovingAnUnknownGroupSucceedsAndPublishesNothing) {
  Rig r;
  EXPECT_EQ(r.table.remove(42), "");
  EXPECT_TRUE(r.sink.sets().empty());
}

TEST(GroupTable, InstallingAndRemovingGroupBRepublishesGroupAUnchanged) {
  // The datapath keeps the engine state of a group whose config is equal between two sets
  // (GroupSink's contract, tested on DPDK in datapath_set_groups_test), so A must be
  // republished bit for bit.
  Rig r;
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  const vocab::GroupContext a = r.sink.sets().back()[1];
  ASSERT_EQ(r.table.install(group(8, 300), slots(32)), "");
  ASSERT_EQ(r.table.remove(8), "");
  const auto sets = r.sink.sets();
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[1][1], a);
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{1, 7}));
  EXPECT_EQ(sets[2][1], a);
}

TEST(GroupTable, AnOverGrantIsRefusedWithWhatIsInUseAndFree) {
  Rig r(96);  // 32 held by static group 1
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  EXPECT_EQ(r.table.install(group(8, 300, 32), slots(64)),
            "group 8 needs 198656 bytes, 99328 free (capacity 297984, 198656 in use, 99328 by "
            "static groups)");
  EXPECT_EQ(r.table.find(8), nullptr);
  EXPECT_EQ(r.sink.sets().size(), 1u);
}

TEST(GroupTable, AGrantMustBeTheContextsMemoryExactly) {
  Rig r;
  EXPECT_EQ(r.table.install(group(7, 200), slots(16)),
            "group 7: memory_bytes 49664 granted, but window 16 and pmtu 1024 need exactly 99328 "
            "(2*window slots of 3104 bytes)");
  EXPECT_EQ(r.table.install(group(7, 200), slots(32) + 1),
            "group 7: memory_bytes 99329 granted, but window 16 and pmtu 1024 need exactly 99328 "
            "(2*window slots of 3104 bytes)");
  EXPECT_EQ(r.table.find(7), nullptr);
  EXPECT_TRUE(r.sink.sets().empty());
}

TEST(GroupTable, AWindowOrPmtuAboveTheSwitchLimitsIsRefused) {
  Rig r;  // max_window 64
  EXPECT_EQ(r.table.install(group(7, 200, 128), slots(256)),
            "group 7: window 128 exceeds this switch's max_window 64");
}

TEST(GroupTable, ABadContextIsRefusedWithEveryErrorUnderContextPaths) {
  Rig r;
  inc::v1::GroupContext g = group(7, 200);
  g.mutable_children(0)->set_port("nope");
  g.mutable_children(1)->mutable_local()->set_qpn(100);  // static group 1's children[0].local
  EXPECT_EQ(r.table.install(g, 32),
            "invalid context: context.children[0].port: no port named \"nope\" (ports: r0, r1, "
            "up); context.children[1].local: (10.77.0.254, qpn 0x64) is already used by group 1 "
            "(children[0].local); the switch finds a group's edge by its local (ipv4, qpn), so "
            "each must be unique");
  EXPECT_TRUE(r.sink.sets().empty());
}

TEST(GroupTable, StaticGroupsCannotBeReplacedRemovedDetachedOrAttached) {
  Rig r;
  const std::string prefix =
      "group 1 is a static group of incd's configuration file (groups[]); inc-manager cannot ";
  EXPECT_EQ(r.table.install(group(1, 100), slots(32)), prefix + "replace it");
  EXPECT_EQ(r.table.remove(1), prefix + "remove it");
  EXPECT_EQ(r.table.detach(1), prefix + "detach it");
  EXPECT_EQ(r.table.attach(1, slots(32)), prefix + "attach memory to it");
  EXPECT_EQ(r.table.retain({}), "");
  EXPECT_NE(r.table.find(1), nullptr);
  EXPECT_TRUE(r.sink.sets().empty());
}

TEST(GroupTable, DetachFreesTheSlotsAndKeepsTheContextAndItsEndpoints) {
  Rig r(64);
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  EXPECT_EQ(r.table.detach(7), "");
  EXPECT_EQ(r.table.detach(7), "");  // again: nothing to do
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{1}));
  EXPECT_EQ(r.table.find(7)->memory_bytes, 0u);
  EXPECT_EQ(r.table.bytes_in_use(), slots(32));
  // Its endpoints stay reserved: another group cannot take them.
  EXPECT_NE(r.table.install(group(8, 200), slots(32)), "");
  EXPECT_EQ(r.table.attach(7, slots(32)), "");
  EXPECT_EQ(r.table.attach(7, slots(32)), "");  // again: nothing to do
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{1, 7}));
  EXPECT_EQ(r.sink.sets().size(), 3u);  // install, detach, attach
}

TEST(GroupTable, AttachNeedsAContextAndFreeSlots) {
  Rig r(64);
  EXPECT_EQ(r.table.attach(9, slots(32)),
            "group 9 has no context on this switch; install it (with its memory) instead");
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  ASSERT_EQ(r.table.detach(7), "");
  ASSERT_EQ(r.table.install(group(8, 300), slots(32)), "");  // takes the freed slots
  EXPECT_EQ(r.table.attach(7, slots(32)),
            "group 7 needs 99328 bytes, 0 free (capacity 198656, 198656 in use, 99328 by static "
            "groups)");
}

TEST(GroupTable, InstallingADetachedGroupsContextAgainAttachesIt) {
  Rig r;
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  ASSERT_EQ(r.table.detach(7), "");
  EXPECT_EQ(r.table.install(group(7, 200), slots(32)), "");
  EXPECT_EQ(r.table.find(7)->memory_bytes, slots(32));
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{1, 7}));
}

TEST(GroupTable, InstallingWithZeroSlotsReservesTheContextDetached) {
  Rig r(64);
  ASSERT_EQ(r.table.install(group(7, 200), 0), "");
  EXPECT_TRUE(r.sink.sets().empty()) << "nothing enters the datapath";
  EXPECT_EQ(r.table.find(7)->memory_bytes, 0u);
  EXPECT_EQ(r.table.bytes_in_use(), slots(32));              // the static group's only
  EXPECT_NE(r.table.install(group(8, 200), slots(32)), "");  // its endpoints are reserved
  EXPECT_EQ(r.table.install(group(7, 200), 0), "");          // again: nothing to do
  EXPECT_EQ(r.table.attach(7, slots(32)), "");
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{1, 7}));
}

TEST(GroupTable, ARefusalOfTheDatapathLeavesTheTableAsItWas) {
  Rig r;
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  r.sink.refuse("group 8: engine says no");
  EXPECT_EQ(r.table.install(group(8, 300), slots(32)),
            "the datapath refused: group 8: engine says no");
  EXPECT_EQ(r.table.remove(7), "the datapath refused: group 8: engine says no");
  EXPECT_EQ(r.table.find(8), nullptr);
  EXPECT_NE(r.table.find(7), nullptr);
  EXPECT_EQ(r.table.bytes_in_use(), slots(64));
}

TEST(GroupTable, RetainRemovesTheManagerGroupsNotKeptInOneSet) {
  Rig r;
  ASSERT_EQ(r.table.install(group(7, 200), slots(32)), "");
  ASSERT_EQ(r.table.install(group(8, 300), slots(32)), "");
  ASSERT_EQ(r.table.install(group(9, 400), slots(32)), "");
  ASSERT_EQ(r.table.detach(9), "");
  EXPECT_EQ(r.table.retain({8}), "");
  EXPECT_EQ(r.sink.sets().size(), 5u);
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{1, 8}));
  EXPECT_EQ(r.table.find(9), nullptr);
  EXPECT_EQ(r.table.retain({8}), "");  // nothing more to do
  EXPECT_EQ(r.sink.sets().size(), 5u);
}

}  // namespace
}  // namespace epic::agent
