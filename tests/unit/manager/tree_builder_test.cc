#include "manager/core/tree_builder.h"

#include <gtest/gtest.h>

#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::FabricShape;
using testing::rank_ip;

std::vector<RankPlacement> placements(const std::vector<std::pair<int, int>>& hosts) {
  std::vector<RankPlacement> out;
  for (size_t i = 0; i < hosts.size(); ++i) {
    out.push_back({static_cast<uint32_t>(i),
                   {testing::leaf_name(hosts[i].first), testing::numbered("r", hosts[i].second)},
                   Endpoint{rank_ip(hosts[i].first, hosts[i].second),
                            testing::rank_mac(hosts[i].first, hosts[i].second),
                            0x11 + static_cast<uint32_t>(i)}});
  }
  return out;
}

Topology fabric(const FabricShape& f) {
  IncManager m;
  testing::build_fabric(m, f);
  return m.topology();
}

TEST(TreeBuilder, AllRanksOnOneLeafMakeASingleSwitchTree) {
  const Topology t = fabric({.leaves = 2, .spines = 1, .ranks_per_leaf = 4});
  auto r = build_tree_candidates(t, placements(testing::hosts_on(1, 4)), {});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const IncTree& tree = r.value().front().tree;
  EXPECT_EQ(tree.root, "leaf0");
  EXPECT_EQ(tree.depth, 1u);
  ASSERT_EQ(tree.nodes.size(), 1u);
  const TreeNode& n = tree.nodes[0];
  EXPECT_FALSE(n.parent.has_value());
  ASSERT_EQ(n.children.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(n.children[i].is_rank);
    EXPECT_EQ(n.children[i].first_rank, i);
    EXPECT_EQ(n.children[i].rank_count, 1u);
    EXPECT_EQ(n.children[i].port, testing::numbered("r", static_cast<int>(i)));
    EXPECT_EQ(n.children[i].remote.ipv4, rank_ip(0, static_cast<int>(i)));
    EXPECT_EQ(n.children[i].remote.qpn, 0x11 + i);
  }
  // Rooting anywhere else would only relay: the single switch is the only candidate.
  EXPECT_EQ(r.value().size(), 1u);
}

TEST(TreeBuilder, TwoLeavesMeetAtTheSpine) {
  const Topology t = fabric({.leaves = 2, .spines = 1, .ranks_per_leaf = 2});
  auto r = build_tree_candidates(t, placements(testing::hosts_on(2, 2)), {});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const IncTree& tree = r.value().front().tree;
  EXPECT_EQ(tree.root, "spine0");
  EXPECT_EQ(tree.depth, 2u);
  ASSERT_EQ(tree.nodes.size(), 3u);
  EXPECT_EQ(tree.nodes[0].switch_id, "spine0");
  EXPECT_EQ(tree.nodes[1].switch_id, "leaf0");
  EXPECT_EQ(tree.nodes[2].switch_id, "leaf1");
  const TreeNode& spine = tree.nodes[0];
  ASSERT_EQ(spine.children.size(), 2u);
  EXPECT_FALSE(spine.children[0].is_rank);
  EXPECT_EQ(spine.children[0].port, "d0");
  EXPECT_EQ(spine.children[0].first_rank, 0u);
  EXPECT_EQ(spine.children[0].rank_count, 2u);
  EXPECT_EQ(spine.children[0].child_port, (SwitchPort{"leaf0", "up0"}));
  EXPECT_EQ(spine.children[1].port, "d1");
  EXPECT_EQ(spine.children[1].first_rank, 2u);
  EXPECT_EQ(spine.children[1].rank_count, 2u);
  const TreeNode& leaf1 = tree.nodes[2];
  EXPECT_EQ(leaf1.level, 1u);
  ASSERT_TRUE(leaf1.parent.has_value());
  EXPECT_EQ(leaf1.parent->port, "up0");
  EXPECT_EQ(leaf1.parent->parent_port, (SwitchPort{"spine0", "d1"}));
  ASSERT_EQ(leaf1.children.size(), 2u);
  EXPECT_EQ(leaf1.children[0].first_rank, 2u);
  EXPECT_EQ(tree.links(), (std::vector<Link>{{{"leaf0", "up0"}, {"spine0", "d0"}},
                                             {{"leaf1", "up0"}, {"spine0", "d1"}}}));
  // The leaves as roots are deeper candidates, tried only when the spine cannot be used.
  ASSERT_EQ(r.value().size(), 3u);
  EXPECT_EQ(r.value()[1].tree.root, "leaf0");
  EXPECT_EQ(r.value()[1].tree.depth, 3u);
}

TEST(TreeBuilder, EdgeDisjointTreesPreferTheSpineNoActiveGroupUses) {
  const Topology t = fabric({.leaves = 2, .spines = 2, .ranks_per_leaf = 2});
  const auto ranks = placements(testing::hosts_on(2, 2));
  // Unused fabric: the spines tie and the lower id wins.
  auto r = build_tree_candidates(t, ranks, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().front().tree.root, "spine0");
  // An active group on spine0's links: spine1 is chosen.
  const LinkUsage usage{{{{"leaf0", "up0"}, {"spine0", "d0"}}, 1},
                        {{{"leaf1", "up0"}, {"spine0", "d1"}}, 1}};
  r = build_tree_candidates(t, ranks, usage);
  ASSERT_TRUE(r.ok());
  const TreeCandidate& best = r.value().front();
  EXPECT_EQ(best.tree.root, "spine1");
  EXPECT_EQ(best.shared_links, 0u);
  EXPECT_EQ(best.tree.nodes[1].parent->port, "up1");
  EXPECT_EQ(r.value()[1].tree.root, "spine0");
  EXPECT_EQ(r.value()[1].shared_links, 2u);
  EXPECT_EQ(r.value()[1].shared_uses, 2u);
}

// Load-aware placement: a hot uplink (link_load.h) keeps new trees off its spine, before the
// Edge-Disjoint Trees preference.
TEST(TreeBuilder, NewTreesAvoidAHotUplink) {
  const Topology t = fabric({.leaves = 2, .spines = 2, .ranks_per_leaf = 2});
  const auto ranks = placements(testing::hosts_on(2, 2));
  const Link hot{{"leaf1", "up0"}, {"spine0", "d1"}};
  auto r = build_tree_candidates(t, ranks, {}, {hot});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().front().tree.root, "spine1");
  EXPECT_EQ(r.value().front().hot_links, 0u);
  EXPECT_EQ(r.value()[1].tree.root, "spine0");
  EXPECT_EQ(r.value()[1].hot_links, 1u);
  // Hot beats shared: spine1's links carry an active group, spine0's uplink is hot.
  const LinkUsage usage{{{{"leaf0", "up1"}, {"spine1", "d0"}}, 1},
                        {{{"leaf1", "up1"}, {"spine1", "d1"}}, 1}};
  r = build_tree_candidates(t, ranks, usage, {hot});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().front().tree.root, "spine1");
  // Every spine hot somewhere: the least hot tree, then the usual order.
  r = build_tree_candidates(
      t, ranks, {},
      {hot, {{"leaf0", "up1"}, {"spine1", "d0"}}, {{"leaf1", "up1"}, {"spine1", "d1"}}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().front().tree.root, "spine0");
}

TEST(TreeBuilder, EdgeDisjointChoiceAppliesToParallelLinksToo) {
  IncManager m;
  testing::FabricShape f{.leaves = 2, .spines = 1, .ranks_per_leaf = 1};
  SwitchSpec leaf0 = testing::leaf_spec(f, 0), leaf1 = testing::leaf_spec(f, 1);
  SwitchSpec spine = testing::spine_spec(f, 0);
  leaf0.ports.push_back({"up0b", 9000});
  spine.ports.push_back({"d0b", 9000});
  ASSERT_TRUE(m.add_switch(leaf0).ok());
  ASSERT_TRUE(m.add_switch(leaf1).ok());
  ASSERT_TRUE(m.add_switch(spine).ok());
  ASSERT_TRUE(m.add_link({{"leaf0", "up0"}, {"spine0", "d0"}}).ok());
  ASSERT_TRUE(m.add_link({{"leaf0", "up0b"}, {"spine0", "d0b"}}).ok());
  ASSERT_TRUE(m.add_link({{"leaf1", "up0"}, {"spine0", "d1"}}).ok());
  for (int l = 0; l < 2; ++l) {
    ASSERT_TRUE(
        m.attach_rank({rank_ip(l, 0), testing::rank_mac(l, 0), {testing::leaf_name(l), "r0"}})
            .ok());
  }
  const auto ranks = placements({{0, 0}, {1, 0}});
  auto r = build_tree_candidates(m.topology(), ranks, {});
  EXPECT_EQ(r.value().front().tree.node("leaf0")->parent->port, "up0");
  r = build_tree_candidates(m.topology(), ranks, {{{{"leaf0", "up0"}, {"spine0", "d0"}}, 1}});
  EXPECT_EQ(r.value().front().tree.node("leaf0")->parent->port, "up0b");
  EXPECT_EQ(r.value().front().tree.node("spine0")->children[0].port, "d0b");
}

// A chain a - b - c with ranks on a and c: b is the root that minimises depth.
TEST(TreeBuilder, ChoosesTheRootThatMinimisesDepth) {
  IncManager m;
  testing::FabricShape f{.leaves = 3, .spines = 0, .ranks_per_leaf = 1};
  for (int l = 0; l < 3; ++l) {
    SwitchSpec s = testing::leaf_spec(f, l);
    s.ports.push_back({"west", 9000});
    s.ports.push_back({"east", 9000});
    ASSERT_TRUE(m.add_switch(s).ok());
  }
  ASSERT_TRUE(m.add_link({{"leaf0", "east"}, {"leaf1", "west"}}).ok());
  ASSERT_TRUE(m.add_link({{"leaf1", "east"}, {"leaf2", "west"}}).ok());
  for (int l : {0, 2}) {
    ASSERT_TRUE(
        m.attach_rank({rank_ip(l, 0), testing::rank_mac(l, 0), {testing::leaf_name(l), "r0"}})
            .ok());
  }
  auto r = build_tree_candidates(m.topology(), placements({{0, 0}, {2, 0}}), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().front().tree.root, "leaf1");
  EXPECT_EQ(r.value().front().tree.depth, 2u);
  EXPECT_EQ(r.value().front().tree.nodes.size(), 3u);
  EXPECT_EQ(r.value()[1].tree.root, "leaf0");
  EXPECT_EQ(r.value()[1].tree.depth, 3u);
}

TEST(TreeBuilder, SwitchesThatDoNotReachEveryLeafAreNotCandidates) {
  IncManager m;
  testing::FabricShape f{.leaves = 2, .spines = 1, .ranks_per_leaf = 1};
  testing::build_fabric(m, f);
  SwitchSpec extra = testing::leaf_spec(f, 7);
  ASSERT_TRUE(m.add_switch(extra).ok());
  // Rank 0 and 1 behind leaves 0 and 1; leaf7 is unconnected and never a candidate.
  auto r = build_tree_candidates(m.topology(), placements({{0, 0}, {1, 0}}), {});
  ASSERT_TRUE(r.ok());
  for (const auto& c : r.value()) EXPECT_NE(c.tree.root, "leaf7");
}

TEST(TreeBuilder, RanksBehindOneSwitchMustBeConsecutive) {
  const Topology t = fabric({.leaves = 2, .spines = 1, .ranks_per_leaf = 2});
  auto r = build_tree_candidates(t, placements({{0, 0}, {1, 0}, {0, 1}, {1, 1}}), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message,
            "the ranks below switch 'leaf0' (0, 2) are not contiguous; a switch child of "
            "'spine0' covers one range of ranks: number the ranks so that those behind one "
            "switch are consecutive");
}

TEST(TreeBuilder, UnconnectedLeavesAreRefused) {
  const Topology t = fabric({.leaves = 2, .spines = 0, .ranks_per_leaf = 1});
  auto r = build_tree_candidates(t, placements({{0, 0}, {1, 0}}), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message,
            "no switch reaches every rank: switches 'leaf0' and 'leaf1' are not connected by "
            "switch-to-switch links");
}

TEST(TreeBuilder, MoreThan64ChildrenOnASwitchAreRefused) {
  const Topology t = fabric({.leaves = 1, .spines = 0, .ranks_per_leaf = 65});
  auto r = build_tree_candidates(t, placements(testing::hosts_on(1, 65)), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "switch 'leaf0' would have 65 children; an engine context has at most 64");
}

}  // namespace
}  // namespace epic::manager
