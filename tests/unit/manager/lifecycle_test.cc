// The group lifecycle: installing -> installed (every agent acknowledged) -> torn down; a failed
// install rolled back; a lost switch breaking its groups; Edge-Disjoint Trees across groups.
#include <gtest/gtest.h>

#include "manager/core/inc_manager.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::action_list;
using testing::hosts_on;
using testing::make_request;
using Actions = std::vector<std::pair<ActionKind, SwitchId>>;

const Millis t0{1000};

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::build_fabric(
        m, {.leaves = 2, .spines = 2, .ranks_per_leaf = 4, .leaf_slots = 128, .spine_slots = 64});
  }
  void expect_nothing_held() {
    EXPECT_TRUE(m.qpns().used().empty());
    for (const auto& [id, b] : m.ledger().books()) EXPECT_TRUE(b.held.empty()) << id;
    EXPECT_EQ(m.ledger().held_total("t"), 0u);
  }
  IncManager m;
};

TEST_F(LifecycleTest, TheLastAckMakesTheGroupReadyAndItsRanksGetTheirPeers) {
  auto j = m.join(make_request("g", hosts_on(2, 2)), t0);
  ASSERT_TRUE(j.ok());
  const uint32_t id = j.value().group_id;
  auto early = m.answers(id);
  EXPECT_EQ(early.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(early.error().message,
            "group 1 is installing; its ranks are answered once it is installed");
  EXPECT_TRUE(m.ack(id, "leaf0", t0).value().events.empty());
  EXPECT_TRUE(m.ack(id, "spine0", t0).value().events.empty());
  auto again = m.ack(id, "leaf0", t0);
  EXPECT_EQ(again.error().message, "switch 'leaf0' has no action pending for group 1 (installing)");
  auto last = m.ack(id, "leaf1", Millis{1500});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last.value().events,
            (std::vector<GroupEvent>{{id, GroupEventKind::kReady, std::nullopt}}));
  const Group& g = *m.find_group(id);
  EXPECT_EQ(g.state, GroupState::kInstalled);
  EXPECT_EQ(g.last_activity, Millis{1500});
  auto answers = m.answers(id);
  ASSERT_TRUE(answers.ok());
  ASSERT_EQ(answers.value().size(), 4u);
  const RankAnswer& a3 = answers.value()[3];
  EXPECT_EQ(a3.rank, 3u);
  EXPECT_EQ(a3.group_id, id);
  EXPECT_EQ(a3.switch_id, "leaf1");
  EXPECT_EQ(a3.peer.ipv4, testing::ip("10.77.1.254"));
  EXPECT_EQ(a3.peer.mac, testing::mac("02:ec:00:00:01:fe"));
  EXPECT_EQ(a3.peer.qpn, 0x101u);
  EXPECT_EQ(a3.peer_gid,
            (vocab::Ipv6Addr{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 1, 254}));
  EXPECT_EQ(a3.initial_psn, initial_psn_for(id));
  EXPECT_EQ(a3.window, 16u);
  EXPECT_EQ(a3.pmtu, 1024u);
}

TEST_F(LifecycleTest, AFailedInstallIsRolledBackEverywhere) {
  auto j = m.join(make_request("g", hosts_on(2, 2)), t0);
  const uint32_t id = j.value().group_id;
  ASSERT_TRUE(m.ack(id, "leaf0", t0).ok());
  auto r = m.fail(id, "spine0", "out of memory", t0);
  ASSERT_TRUE(r.ok());
  // leaf0 installed it, leaf1 may have: both remove it; spine0 said it did not install it.
  EXPECT_EQ(action_list(r.value()), (Actions{{ActionKind::kRemoveContext, "leaf0"},
                                             {ActionKind::kRemoveContext, "leaf1"}}));
  ASSERT_EQ(r.value().events.size(), 1u);
  EXPECT_EQ(r.value().events[0].kind, GroupEventKind::kFailed);
  EXPECT_EQ(r.value().events[0].error->code, ErrorCode::kUnavailable);
  EXPECT_EQ(r.value().events[0].error->message,
            "switch 'spine0' could not install group 1: out of memory; nothing of the group is "
            "left installed");
  EXPECT_TRUE(m.groups().empty());
  expect_nothing_held();
}

TEST_F(LifecycleTest, TeardownFreesTheGrantsForTheNextGroup) {
  const uint32_t id = testing::install(m, make_request("g", hosts_on(1, 2), 64), t0);  // 128/128
  auto blocked = m.join(make_request("h", {{0, 2}, {0, 3}}, 1), t0);
  EXPECT_EQ(blocked.error().code, ErrorCode::kResourceExhausted);
  auto r = m.teardown(id, t0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(action_list(r.value()), (Actions{{ActionKind::kRemoveContext, "leaf0"}}));
  EXPECT_EQ(r.value().events,
            (std::vector<GroupEvent>{{id, GroupEventKind::kTornDown, std::nullopt}}));
  expect_nothing_held();
  EXPECT_TRUE(m.join(make_request("h", {{0, 2}, {0, 3}}, 1), t0).ok());
  EXPECT_EQ(m.teardown(id, t0).error().message, "unknown group 1");
}

TEST_F(LifecycleTest, QpnsAreReusedAfterTeardownButTheInitialPsnIsNot) {
  const uint32_t a = testing::install(m, make_request("a", hosts_on(1, 2)), t0);
  const uint32_t qpn = m.find_group(a)->tree.nodes[0].children[0].local.qpn;
  const uint32_t psn = m.find_group(a)->initial_psn;
  ASSERT_TRUE(m.teardown(a, t0).ok());
  const uint32_t b = testing::install(m, make_request("b", hosts_on(1, 2)), t0);
  EXPECT_EQ(m.find_group(b)->tree.nodes[0].children[0].local.qpn, qpn);
  EXPECT_NE(m.find_group(b)->initial_psn, psn);
  EXPECT_EQ(b, a + 1);
}

TEST_F(LifecycleTest, LosingASwitchBreaksItsGroupsAndFreesTheirGrants) {
  const uint32_t across = testing::install(m, make_request("across", hosts_on(2, 2)), t0);
  const uint32_t local =
      testing::install(m, make_request("local", {{0, 2}, {0, 3}}, 16, 0x100), t0);
  ASSERT_EQ(m.find_group(across)->tree.root, "spine0");
  auto r = m.remove_switch("spine0", t0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(action_list(r.value()), (Actions{{ActionKind::kRemoveContext, "leaf0"},
                                             {ActionKind::kRemoveContext, "leaf1"}}));
  ASSERT_EQ(r.value().events.size(), 1u);
  EXPECT_EQ(r.value().events[0].kind, GroupEventKind::kBroken);
  EXPECT_EQ(r.value().events[0].error->message,
            "group 1 is broken: switch 'spine0' was removed; its contexts were removed from the "
            "other switches: tear it down and join again");
  const Group& g = *m.find_group(across);
  EXPECT_EQ(g.state, GroupState::kBroken);
  EXPECT_TRUE(g.grants.empty());
  EXPECT_EQ(m.find_group(local)->state, GroupState::kInstalled);
  EXPECT_EQ(m.ledger().held_on("t", "leaf0"), testing::slots(32));  // only the local group's
  EXPECT_EQ(m.ledger().held_on("t", "leaf1"), 0u);
  // The name stays taken until the broken group is torn down; then it can join again (spine1).
  EXPECT_EQ(m.join(make_request("across", hosts_on(2, 2), 16, 0x200), t0).error().code,
            ErrorCode::kAlreadyExists);
  auto down = m.teardown(across, t0);
  EXPECT_TRUE(down.value().actions.empty());
  auto again = m.join(make_request("across", hosts_on(2, 2), 16, 0x200), t0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(m.find_group(again.value().group_id)->tree.root, "spine1");
}

TEST_F(LifecycleTest, ConcurrentGroupsGetEdgeDisjointTrees) {
  const uint32_t a = testing::install(m, make_request("a", hosts_on(2, 2)), t0);
  const uint32_t b =
      testing::install(m, make_request("b", {{0, 2}, {0, 3}, {1, 2}, {1, 3}}, 16, 0x100), t0);
  EXPECT_EQ(m.find_group(a)->tree.root, "spine0");
  EXPECT_EQ(m.find_group(b)->tree.root, "spine1");
  EXPECT_EQ(m.link_usage().size(), 4u);
  for (const auto& [link, n] : m.link_usage()) EXPECT_EQ(n, 1u) << to_string(link);
}

TEST(EdgeDisjointPolicy, RequireRefusesASharedLinkAndIgnoreShares) {
  for (EdgeDisjoint p : {EdgeDisjoint::kRequire, EdgeDisjoint::kIgnore}) {
    IncManager m(Policy{.edge_disjoint = p});
    testing::build_fabric(m, {.leaves = 2, .spines = 1, .ranks_per_leaf = 4});
    const uint32_t a = testing::install(m, make_request("a", hosts_on(2, 2)), t0);
    auto b = m.join(make_request("b", {{0, 2}, {0, 3}, {1, 2}, {1, 3}}, 16, 0x100), t0);
    if (p == EdgeDisjoint::kIgnore) {
      ASSERT_TRUE(b.ok());
      EXPECT_EQ(m.find_group(b.value().group_id)->tree.root, "spine0");
      continue;
    }
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().code, ErrorCode::kResourceExhausted);
    EXPECT_EQ(b.error().message,
              "no edge-disjoint IncTree: every candidate shares a link with an active group (the "
              "best, rooted at 'spine0', shares leaf0:up0 - spine0:d0)");
    ASSERT_TRUE(m.teardown(a, t0).ok());
    EXPECT_TRUE(m.join(make_request("b", {{0, 2}, {0, 3}, {1, 2}, {1, 3}}, 16, 0x100), t0).ok());
  }
}

TEST_F(LifecycleTest, ActivityMovesTheIdleClockForward) {
  auto q = m.join(make_request("g", hosts_on(2, 2)), t0);
  const uint32_t id = q.value().group_id;
  EXPECT_TRUE(m.report_activity(id, Millis{2000}).ok());
  testing::ack_all(m, id, Millis{2500});
  EXPECT_TRUE(m.report_activity(id, Millis{3000}).ok());
  EXPECT_EQ(m.find_group(id)->last_activity, Millis{3000});
  EXPECT_EQ(m.report_activity(99, t0).error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace epic::manager
