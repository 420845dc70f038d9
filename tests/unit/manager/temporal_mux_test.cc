// Temporal Mux: slots reclaimed from idle groups and re-attached on resume, and the FIFO queue of
// joins waiting for memory with their deadlines.
#include <gtest/gtest.h>

#include "manager/core/inc_manager.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::action_list;
using testing::make_request;
using testing::slots;
using Actions = std::vector<std::pair<ActionKind, SwitchId>>;

constexpr Millis kIdle{10'000};

// One leaf with 64 slots: a group with window 32 fills it.
class TemporalMuxTest : public ::testing::Test {
 protected:
  explicit TemporalMuxTest(Policy p = Policy{.reclaim_idle_after = kIdle}) : m(p) {}
  void SetUp() override {
    testing::build_fabric(m, {.leaves = 1, .spines = 0, .ranks_per_leaf = 8, .leaf_slots = 64});
  }
  GroupRequest req(const std::string& name, int first_port, uint32_t window,
                   Millis queue_timeout = Millis{0}) {
    GroupRequest r = make_request(name, {{0, first_port}, {0, first_port + 1}}, window,
                                  0x100 * static_cast<uint32_t>(first_port + 1));
    r.queue_timeout = queue_timeout;
    return r;
  }
  IncManager m;
};

class QueueTest : public TemporalMuxTest {
 protected:
  QueueTest() : TemporalMuxTest(Policy{.max_queue_wait = Millis{60'000}}) {}
};

TEST_F(TemporalMuxTest, AnIdleGroupsSlotsAreReclaimedForANewJoin) {
  const uint32_t a = testing::install(m, req("a", 0, 32), Millis{1000});
  auto b = m.join(req("b", 2, 32), Millis{20'000});
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  EXPECT_EQ(action_list(b.value().effects),
            (Actions{{ActionKind::kDetachSlots, "leaf0"}, {ActionKind::kInstallContext, "leaf0"}}));
  const auto& ev = b.value().effects.events;
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].group_id, a);
  EXPECT_EQ(ev[0].kind, GroupEventKind::kReclaimed);
  EXPECT_EQ(ev[0].error->message,
            "the slots of group 1 were reclaimed after 19000 ms idle; resume it to use INC again");
  EXPECT_EQ(ev[1], (GroupEvent{b.value().group_id, GroupEventKind::kInstalling, std::nullopt}));
  const Group& ga = *m.find_group(a);
  EXPECT_EQ(ga.state, GroupState::kReclaimed);
  EXPECT_TRUE(ga.grants.empty());
  EXPECT_FALSE(ga.tree.nodes.empty());  // the context (routing state) stays installed
  EXPECT_EQ(m.ledger().held_on("t", "leaf0"), slots(64));
  EXPECT_EQ(m.report_activity(a, Millis{20'000}).error().message,
            "group 1 is reclaimed: only an installed group is active");
}

TEST_F(TemporalMuxTest, ARecentlyActiveGroupKeepsItsSlots) {
  const uint32_t a = testing::install(m, req("a", 0, 32), Millis{1000});
  ASSERT_TRUE(m.report_activity(a, Millis{15'000}).ok());
  auto b = m.join(req("b", 2, 32), Millis{20'000});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(b.error().message,
            "no INC memory: the group needs 198656 bytes on switch 'leaf0', 0 free for tenant 't' "
            "(partition 0 + shared 0; capacity 198656)");
  EXPECT_EQ(m.find_group(a)->state, GroupState::kInstalled);
}

TEST_F(TemporalMuxTest, OnlyAsManyIdleGroupsAsNeededAreReclaimedOldestFirst) {
  const uint32_t a = testing::install(m, req("a", 0, 8), Millis{1000});   // 16 slots
  const uint32_t b = testing::install(m, req("b", 2, 8), Millis{500});    // 16, idle longer
  const uint32_t c = testing::install(m, req("c", 4, 16), Millis{2000});  // 32
  auto d = m.join(req("d", 6, 8), Millis{30'000});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(m.find_group(b)->state, GroupState::kReclaimed);
  EXPECT_EQ(m.find_group(a)->state, GroupState::kInstalled);
  EXPECT_EQ(m.find_group(c)->state, GroupState::kInstalled);
}

TEST_F(TemporalMuxTest, AResumedGroupGetsItsSlotsBackOnTheSameTree) {
  const uint32_t a = testing::install(m, req("a", 0, 32), Millis{1000});
  const IncTree tree = m.find_group(a)->tree;
  const uint32_t b = testing::install(m, req("b", 2, 32), Millis{20'000});
  auto busy = m.resume(a, Millis{21'000});
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(m.find_group(a)->state, GroupState::kReclaimed);
  ASSERT_TRUE(m.teardown(b, Millis{22'000}).ok());
  auto r = m.resume(a, Millis{23'000});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r.value().actions.size(), 1u);
  EXPECT_EQ(r.value().actions[0], (SwitchAction{.kind = ActionKind::kAttachSlots,
                                                .switch_id = "leaf0",
                                                .group_id = a,
                                                .context = std::nullopt,
                                                .memory_bytes = slots(64)}));
  auto ready = m.ack(a, "leaf0", Millis{23'100});
  EXPECT_EQ(ready.value().events,
            (std::vector<GroupEvent>{{a, GroupEventKind::kReady, std::nullopt}}));
  EXPECT_EQ(m.find_group(a)->state, GroupState::kInstalled);
  EXPECT_EQ(m.find_group(a)->tree, tree);
  EXPECT_EQ(m.ledger().held_on("t", "leaf0"), slots(64));
}

TEST_F(TemporalMuxTest, AFailedReattachLeavesTheGroupReclaimed) {
  const uint32_t a = testing::install(m, req("a", 0, 32), Millis{1000});
  const uint32_t b = testing::install(m, req("b", 2, 32), Millis{20'000});
  ASSERT_TRUE(m.teardown(b, Millis{22'000}).ok());
  ASSERT_TRUE(m.resume(a, Millis{23'000}).ok());
  auto f = m.fail(a, "leaf0", "no hugepages", Millis{23'100});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f.value().actions.empty());
  ASSERT_EQ(f.value().events.size(), 1u);
  EXPECT_EQ(f.value().events[0].kind, GroupEventKind::kReclaimed);
  EXPECT_EQ(f.value().events[0].error->message,
            "switch 'leaf0' could not re-attach the slots of group 1: no hugepages; the group "
            "stays reclaimed");
  EXPECT_EQ(m.find_group(a)->state, GroupState::kReclaimed);
  EXPECT_EQ(m.ledger().held_on("t", "leaf0"), 0u);
}

TEST_F(QueueTest, WithoutTemporalMuxIdleGroupsKeepTheirSlots) {
  testing::install(m, req("a", 0, 32), Millis{1000});
  auto b = m.join(req("b", 2, 32), Millis{1'000'000});
  EXPECT_EQ(b.error().code, ErrorCode::kResourceExhausted);
}

TEST_F(QueueTest, AQueuedJoinIsAdmittedWhenMemoryFrees) {
  const uint32_t a = testing::install(m, req("a", 0, 32), Millis{1000});
  auto b = m.join(req("b", 2, 32, Millis{5000}), Millis{2000});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value().state, GroupState::kQueued);
  EXPECT_TRUE(b.value().effects.actions.empty());
  ASSERT_EQ(b.value().effects.events.size(), 1u);
  EXPECT_EQ(b.value().effects.events[0].kind, GroupEventKind::kQueued);
  EXPECT_EQ(m.queue(), (std::deque<uint32_t>{b.value().group_id}));
  EXPECT_EQ(m.find_group(b.value().group_id)->queue_deadline, Millis{7000});
  auto down = m.teardown(a, Millis{3000});
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(action_list(down.value()), (Actions{{ActionKind::kRemoveContext, "leaf0"},
                                                {ActionKind::kInstallContext, "leaf0"}}));
  EXPECT_EQ(
      down.value().events,
      (std::vector<GroupEvent>{{a, GroupEventKind::kTornDown, std::nullopt},
                               {b.value().group_id, GroupEventKind::kInstalling, std::nullopt}}));
  EXPECT_TRUE(m.queue().empty());
  EXPECT_EQ(m.find_group(b.value().group_id)->state, GroupState::kInstalling);
}

TEST_F(QueueTest, AQueuedJoinFailsAtItsDeadline) {
  testing::install(m, req("a", 0, 32), Millis{1000});
  auto b = m.join(req("b", 2, 32, Millis{5000}), Millis{2000});
  const uint32_t id = b.value().group_id;
  EXPECT_TRUE(m.tick(Millis{6999}).events.empty());
  Effects fx = m.tick(Millis{7000});
  ASSERT_EQ(fx.events.size(), 1u);
  EXPECT_EQ(fx.events[0].group_id, id);
  EXPECT_EQ(fx.events[0].kind, GroupEventKind::kFailed);
  EXPECT_EQ(fx.events[0].error->code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(fx.events[0].error->message,
            "not admitted after 5000 ms in the queue: no INC memory: group 2 needs 198656 bytes "
            "on switch 'leaf0', 0 free for tenant 't' (partition 0 + shared 0; capacity 198656)");
  EXPECT_EQ(m.find_group(id), nullptr);
  EXPECT_TRUE(m.queue().empty());
}

TEST(QueuePolicy, TheWaitIsCappedByThePolicy) {
  IncManager m(Policy{.max_queue_wait = Millis{1000}});
  testing::build_fabric(m, {.leaves = 1, .spines = 0, .ranks_per_leaf = 4, .leaf_slots = 64});
  testing::install(m, make_request("a", {{0, 0}, {0, 1}}, 32), Millis{0});
  GroupRequest r = make_request("b", {{0, 2}, {0, 3}}, 32, 0x100);
  r.queue_timeout = Millis{5000};
  auto b = m.join(r, Millis{2000});
  EXPECT_EQ(m.find_group(b.value().group_id)->queue_deadline, Millis{3000});
}

TEST_F(QueueTest, TheQueueIsFirstInFirstOut) {
  const uint32_t a = testing::install(m, req("a", 0, 16), Millis{1000});  // 32 of 64
  auto b = m.join(req("b", 2, 32, Millis{60'000}), Millis{2000});         // needs 64: waits
  ASSERT_EQ(b.value().state, GroupState::kQueued);
  // c would fit now, but b waits for memory ahead of it.
  auto c_now = m.join(req("c", 4, 8), Millis{2000});
  EXPECT_EQ(c_now.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(c_now.error().message, "no INC memory: 1 group(s) wait in the queue ahead of this one");
  auto c = m.join(req("c", 4, 8, Millis{60'000}), Millis{2000});
  ASSERT_EQ(c.value().state, GroupState::kQueued);
  auto down = m.teardown(a, Millis{3000});
  EXPECT_EQ(m.find_group(b.value().group_id)->state, GroupState::kInstalling);
  EXPECT_EQ(m.find_group(c.value().group_id)->state, GroupState::kQueued);
  EXPECT_EQ(m.queue(), (std::deque<uint32_t>{c.value().group_id}));
}

TEST_F(QueueTest, AJoinWaitingForItsOwnQuotaDoesNotHoldBackOthers) {
  ASSERT_TRUE(
      m.set_tenant({.name = "a", .quota = {.max_bytes_per_switch = slots(16)}, .reserved = {}})
          .ok());
  GroupRequest a1 = req("a1", 0, 8);
  a1.tenant = "a";
  ASSERT_TRUE(m.join(a1, Millis{1000}).ok());
  GroupRequest a2 = req("a2", 2, 8, Millis{60'000});
  a2.tenant = "a";
  auto q = m.join(a2, Millis{1000});
  ASSERT_EQ(q.value().state, GroupState::kQueued);
  EXPECT_TRUE(m.find_group(q.value().group_id)->blocked_by_quota);
  auto t = m.join(req("t1", 4, 8), Millis{1000});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.value().state, GroupState::kInstalling);
}

TEST_F(TemporalMuxTest, AQueuedJoinReclaimsOnceAGroupTurnsIdle) {
  const uint32_t a = testing::install(m, req("a", 0, 32), Millis{1000});
  auto b = m.join(req("b", 2, 32, Millis{30'000}), Millis{5000});  // a is not idle yet
  ASSERT_EQ(b.value().state, GroupState::kQueued);
  EXPECT_TRUE(m.tick(Millis{10'999}).actions.empty());
  Effects fx = m.tick(Millis{11'000});
  EXPECT_EQ(action_list(fx),
            (Actions{{ActionKind::kDetachSlots, "leaf0"}, {ActionKind::kInstallContext, "leaf0"}}));
  EXPECT_EQ(m.find_group(a)->state, GroupState::kReclaimed);
  EXPECT_EQ(m.find_group(b.value().group_id)->state, GroupState::kInstalling);
}

}  // namespace
}  // namespace epic::manager
