// Issue 16: with a random source (inc-manager sets the kernel's CSPRNG, manager/service/csprng.h)
// a group's switch QPNs and initial PSN are drawn from it, so a host on the fabric cannot
// predict them; without one they stay deterministic (the other manager tests rely on that).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "manager/core/inc_manager.h"
#include "manager/core/qpn_pool.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

const Millis t0{1000};

// A scripted source: the draws in order, then the last one again and again.
struct Script {
  std::vector<uint64_t> draws;
  size_t next = 0;
  RandomBits source() {
    return [this] { return draws[next < draws.size() ? next++ : draws.size() - 1]; };
  }
};

TEST(QpnPool, ARandomSourceIsDrawnUntilAQpnIsFree) {
  QpnPool pool;
  Script s{{5, 5, 0xFFFFFF, (kQpnLimit - kFirstVirtualQpn) + 7}};
  const RandomBits r = s.source();
  EXPECT_EQ(pool.allocate("s", r), kFirstVirtualQpn + 5);
  // 5 again is taken: the next draw, 0xFFFFFF mod (2^24 - 0x100) = 0xFF, gives 0x1FF.
  EXPECT_EQ(pool.allocate("s", r), kFirstVirtualQpn + 0xFF);
  EXPECT_EQ(pool.allocate("s", r), kFirstVirtualQpn + 7);  // the range wraps
  // Every further draw is 7 again, taken: after kRandomTries the lowest free QPN.
  EXPECT_EQ(pool.allocate("s", r), kFirstVirtualQpn);
  EXPECT_EQ(s.next, 4u);
  EXPECT_EQ(pool.used().at("s").size(), 4u);
  // Another switch has its own QPNs: the same draw is free there.
  Script t{{5}};
  EXPECT_EQ(pool.allocate("t", t.source()), kFirstVirtualQpn + 5);
  // Without a source: the lowest free, as before.
  EXPECT_EQ(pool.allocate("s"), kFirstVirtualQpn + 1);
}

TEST(RandomIds, AGroupsQpnsAndInitialPsnAreTheSourcesDraws) {
  Script s;
  for (uint64_t k = 1; k <= 8; ++k) s.draws.push_back(0x10000 * k + 0x33);
  s.draws.push_back(0xABCDEF0123456789ull);  // the initial PSN's draw
  Policy p;
  p.random = s.source();
  IncManager m(p);
  testing::build_fabric(m, {.leaves = 2, .spines = 1});  // the defaults otherwise
  auto j = m.join(testing::make_request("g", testing::hosts_on(2, 2)), t0);
  ASSERT_TRUE(j.ok()) << j.error().to_string();
  const Group& g = *m.find_group(j.value().group_id);
  // 8 switch endpoints: 2 children on the spine, 2 children and a parent on each leaf.
  std::set<uint32_t> got, want;
  for (const TreeNode& n : g.tree.nodes) {
    for (const TreeChild& c : n.children) got.insert(c.local.qpn);
    if (n.parent) got.insert(n.parent->local.qpn);
  }
  for (size_t k = 0; k < 8; ++k) want.insert(kFirstVirtualQpn + static_cast<uint32_t>(s.draws[k]));
  EXPECT_EQ(got, want);
  EXPECT_EQ(g.initial_psn, 0x456789u);  // the draw's low 24 bits
  for (const SwitchAction& a : j.value().effects.actions) {
    ASSERT_TRUE(a.context.has_value());
    EXPECT_EQ(a.context->initial_psn, 0x456789u) << a.switch_id;
  }
}

}  // namespace
}  // namespace epic::manager
