// Group contexts are prepared off the packet path (check_group, prepare_group) and attached
// by a worker (Mode2Engine::attach), which refuses without side effects what it cannot take.
#include "datapath/engine/group_instance.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/builder.h"
#include "tests/unit/datapath/engine/engine_test_util.h"

namespace epic::engine {
namespace {

namespace w = epic::wire;

using testing::kSwitchIp;

GroupConfig group(uint32_t id, uint32_t qp_base, uint32_t window = 4) {
  return testing::two_rank_group(id, qp_base, window);
}

// An ACK to (kSwitchIp, qpn): counted as no_route unless the edge is attached.
uint64_t no_route_after_ack(Mode2Engine& e, uint32_t qpn) {
  const auto f =
      w::PacketBuilder().ipv4(0x0A640000, kSwitchIp).bth(w::op::kAck, qpn, 1).aeth(0x1F, 0).build();
  const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), 0};
  TxBatch tx;
  const uint64_t before = e.counters().drop_no_route;
  e.process(&rx, 1, tx);
  return e.counters().drop_no_route - before;
}

TEST(GroupInstance, CheckGroupNamesWhatIsWrong) {
  SlotRegion slots(4, 256);
  EXPECT_EQ(check_group(group(1, 0x10), &slots), "");
  GroupConfig g = group(1, 0x10);
  g.window = 3;
  EXPECT_NE(check_group(g, &slots).find("not a power of two"), std::string::npos);
  g = group(1, 0x10);
  g.children.clear();
  EXPECT_NE(check_group(g, &slots).find("children"), std::string::npos);
  g = group(1, 0x10);
  g.children[1].first_rank = 5;
  EXPECT_EQ(check_group(g, &slots),
            "children[1].rank: rank 5 is outside [0, 2) (the group has 2 ranks)");
  g = group(1, 0x10);
  g.pmtu = 1500;  // checked before any slot memory is sized for it
  EXPECT_EQ(check_config(g), "pmtu: 1500 is not one of 256, 512, 1024, 2048, 4096");
  EXPECT_NE(check_group(group(1, 0x10, 8), &slots).find("slot region"), std::string::npos);
  EXPECT_NE(check_group(group(1, 0x10), nullptr).find("slot region"), std::string::npos);
}

TEST(GroupInstance, PrepareAllocatesABoundedHistory) {
  EXPECT_EQ(history_records(4), 10u);
  EXPECT_EQ(history_records(1u << 20), kMaxHistory);
  SlotRegion slots(4, 256);
  std::string error;
  auto g = prepare_group(group(1, 0x10), &slots, error);
  ASSERT_TRUE(g) << error;
  EXPECT_EQ(g->state.config, &g->config);
  EXPECT_EQ(g->state.history.size(), 10u);
  GroupConfig bad = group(1, 0x10);
  bad.num_ranks = 0;
  EXPECT_FALSE(prepare_group(bad, &slots, error));
  EXPECT_EQ(error, "ranks: 0 is outside 1..65535");
}

TEST(GroupInstance, AttachRefusesWithoutSideEffects) {
  SlotRegion sa(4, 256), sb(4, 256), sc(4, 256);
  std::string error;
  auto a = prepare_group(group(1, 0x10), &sa, error);
  auto same_id = prepare_group(group(1, 0x20), &sb, error);
  auto clash = prepare_group(group(2, 0x11), &sc, error);  // its child 0 is a's child 1
  ASSERT_TRUE(a && same_id && clash);
  Mode2Engine e;
  EXPECT_EQ(e.attach(*a), AttachResult::kOk);
  EXPECT_EQ(e.attach(*same_id), AttachResult::kGroupInstalled);
  EXPECT_EQ(e.attach(*clash), AttachResult::kEndpointInUse);
  EXPECT_EQ(e.groups().size(), 1u);
  EXPECT_EQ(no_route_after_ack(e, 0x20), 1u);  // same_id's edges were never added
  EXPECT_EQ(no_route_after_ack(e, 0x12), 1u);  // nor clash's child 1
  EXPECT_EQ(no_route_after_ack(e, 0x10), 0u);  // a's edges are there
  EXPECT_TRUE(e.detach(1));
  EXPECT_FALSE(e.detach(1));
  EXPECT_EQ(no_route_after_ack(e, 0x10), 1u);
  EXPECT_EQ(e.attach(*clash), AttachResult::kOk);  // its endpoints are free now
}

TEST(GroupInstance, AGroupRepeatingItsOwnEndpointIsRolledBack) {
  SlotRegion s(4, 256);
  GroupConfig g = group(3, 0x30);
  g.children[1].local = g.children[0].local;
  std::string error;
  auto inst = prepare_group(g, &s, error);
  ASSERT_TRUE(inst) << error;
  Mode2Engine e;
  EXPECT_EQ(e.attach(*inst), AttachResult::kEndpointInUse);
  EXPECT_TRUE(e.groups().empty());
  EXPECT_EQ(no_route_after_ack(e, 0x30), 1u);
}

TEST(GroupInstance, AFullEngineRefuses) {
  SlotRegion sa(4, 256), sb(4, 256);
  std::string error;
  auto a = prepare_group(group(1, 0x10), &sa, error);
  auto b = prepare_group(group(2, 0x20), &sb, error);
  Mode2Engine one_group(1);
  EXPECT_EQ(one_group.attach(*a), AttachResult::kOk);
  EXPECT_EQ(one_group.attach(*b), AttachResult::kFull);
  Mode2Engine three_edges(8, 3);
  EXPECT_EQ(three_edges.attach(*a), AttachResult::kOk);
  EXPECT_EQ(three_edges.attach(*b), AttachResult::kFull);
  EXPECT_EQ(no_route_after_ack(three_edges, 0x20), 1u);
}

TEST(GroupInstance, InstallGroupThrowsTheReason) {
  SlotRegion s(4, 256);
  Mode2Engine e;
  e.install_group(group(1, 0x10), &s);
  try {
    e.install_group(group(1, 0x40), &s);
    FAIL() << "a second group 1 was installed";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("already installed"), std::string::npos) << ex.what();
  }
  EXPECT_TRUE(e.remove_group(1));
  EXPECT_FALSE(e.remove_group(1));
}

}  // namespace
}  // namespace epic::engine
