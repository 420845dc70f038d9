// Link load (manager/core/link_load.h): a link's load is its busier direction over its declared
// speed; unmeasured links are never hot; the manager's reported rates replace a switch's last
// report and decide where a new group's tree goes.
#include "manager/core/link_load.h"

#include <gtest/gtest.h>

#include "manager/core/inc_manager.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

TEST(LinkLoad, TheBusierDirectionOverTheDeclaredSpeed) {
  IncManager m;
  testing::build_fabric(m, {.leaves = 2, .spines = 1, .ranks_per_leaf = 1});
  LinkSpeeds speeds;
  const Link l0{{"leaf0", "up0"}, {"spine0", "d0"}};
  speeds.links[l0] = {.bandwidth_gbps = 8, .rtt_us = 10};  // 1e9 bytes/s
  PortRates rates{{{"leaf0", "up0"}, 2e8}, {{"spine0", "d0"}, 6e8}};
  const auto loads = link_loads(m.topology(), speeds, rates, 0.5);
  ASSERT_EQ(loads.size(), 2u);
  const LinkLoad& a = loads[0].link == l0 ? loads[0] : loads[1];
  const LinkLoad& b = loads[0].link == l0 ? loads[1] : loads[0];
  EXPECT_TRUE(a.measured);
  EXPECT_DOUBLE_EQ(a.load, 0.6);
  EXPECT_TRUE(a.hot);
  EXPECT_FALSE(b.measured);
  EXPECT_FALSE(b.hot);
  EXPECT_EQ(hot_links(loads), HotLinks{l0});
}

TEST(LinkLoad, TheManagerPlacesNewTreesOffAHotSpine) {
  IncManager m;
  testing::build_fabric(m, {.leaves = 2, .spines = 2, .ranks_per_leaf = 2});
  // spine0's downlink to leaf1 is busy (100 Gb/s default speed = 12.5e9 bytes/s).
  m.report_port_rates("spine0", {{"d1", 9e9}});
  HotLinks hot = hot_links(m.link_loads());
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_EQ(hot.begin()->b.switch_id, "spine0");
  const uint32_t g =
      testing::install(m, testing::make_request("a", testing::hosts_on(2, 2)), Millis{1});
  ASSERT_NE(g, 0u);
  EXPECT_EQ(m.find_group(g)->tree.root, "spine1");
  // A later report of that switch replaces the rates it gave before.
  m.report_port_rates("spine0", {{"d1", 1e9}});
  EXPECT_TRUE(hot_links(m.link_loads()).empty());
}

// A standing transmit queue (incd's traffic classes behind a port's rate) makes a link hot
// whatever its rate says: new trees avoid it, and the queue shows in the link's figures.
TEST(LinkLoad, AStandingQueueMakesALinkHot) {
  IncManager m;
  testing::build_fabric(m, {.leaves = 2, .spines = 2, .ranks_per_leaf = 2});
  m.report_port_rates("spine0", {{"d1", 1e6}});  // 0.01 % of 100 Gb/s: cold by rate
  m.report_port_queues("spine0", {{"d1", kHotQueueBytes - 1}});
  EXPECT_TRUE(hot_links(m.link_loads()).empty()) << "below the depth";
  m.report_port_queues("spine0", {{"d1", kHotQueueBytes}});
  const auto loads = m.link_loads();
  HotLinks hot = hot_links(loads);
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_EQ(hot.begin()->b.switch_id, "spine0");
  for (const LinkLoad& x : loads) {
    if (x.link == *hot.begin()) EXPECT_EQ(x.b_queue_bytes, kHotQueueBytes);
  }
  const uint32_t g =
      testing::install(m, testing::make_request("q", testing::hosts_on(2, 2)), Millis{1});
  ASSERT_NE(g, 0u);
  EXPECT_EQ(m.find_group(g)->tree.root, "spine1");
  m.report_port_queues("spine0", {});  // drained
  EXPECT_TRUE(hot_links(m.link_loads()).empty());
}

}  // namespace
}  // namespace epic::manager
