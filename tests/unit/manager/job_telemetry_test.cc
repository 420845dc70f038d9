// The job-wide straggler figure (manager/core/job_telemetry.h) on a leaf/spine IncTree: the
// minimum goodput and the switch that has it, and the walk from the root that names a late
// rank, a slowed leaf link, or nobody when the last arrivals are spread.
#include "manager/core/job_telemetry.h"

#include <gtest/gtest.h>

namespace epic::manager {
namespace {

// spine0 over leaf0 (ranks 0-3) and leaf1 (ranks 4-7).
IncTree leaf_spine() {
  IncTree t;
  t.root = "spine0";
  t.depth = 2;
  TreeNode spine{"spine0", 0, {}, std::nullopt};
  for (uint32_t l = 0; l < 2; ++l) {
    TreeChild c;
    c.port = "down" + std::to_string(l);
    c.first_rank = 4 * l;
    c.rank_count = 4;
    c.child_port = {"leaf" + std::to_string(l), "up"};
    spine.children.push_back(c);
  }
  t.nodes.push_back(spine);
  for (uint32_t l = 0; l < 2; ++l) {
    TreeNode leaf{"leaf" + std::to_string(l), 1, {}, TreeParent{"up", {"spine0", "down"}, {}, {}}};
    for (uint32_t r = 0; r < 4; ++r) {
      TreeChild c;
      c.port = "p" + std::to_string(r);
      c.is_rank = true;
      c.first_rank = 4 * l + r;
      leaf.children.push_back(c);
    }
    t.nodes.push_back(leaf);
  }
  return t;
}

// A switch's figures whose children completed `last[c]` slots each, with p50 lags `lag[c]`.
SwitchGroupFigures figures(const TreeNode& n, std::vector<uint64_t> last, double rate,
                           std::vector<uint64_t> lag = {}) {
  SwitchGroupFigures f;
  f.rate_bytes_per_s = rate;
  f.collectives_completed = 100;
  for (size_t c = 0; c < n.children.size(); ++c) {
    vocab::ChildTiming t;
    t.child = static_cast<uint16_t>(c);
    t.is_rank = n.children[c].is_rank;
    t.first_rank = static_cast<uint16_t>(n.children[c].first_rank);
    t.rank_count = static_cast<uint16_t>(n.children[c].rank_count);
    t.last = last[c];
    t.lag_p50_ns = c < lag.size() ? lag[c] : 0;
    f.children.push_back(t);
  }
  return f;
}

TEST(JobTelemetry, ALateRankUnderALeafIsNamedThroughTheSpine) {
  const IncTree t = leaf_spine();
  std::map<SwitchId, SwitchGroupFigures> local;
  local["spine0"] = figures(t.nodes[0], {3, 97}, 5e8);
  local["leaf0"] = figures(t.nodes[1], {26, 24, 25, 25}, 6e8);
  local["leaf1"] = figures(t.nodes[2], {1, 2, 95, 2}, 4e8);
  const JobFigures j = combine_job(t, local);
  EXPECT_EQ(j.verdict, "straggler");
  EXPECT_EQ(j.slowest, "rank 6");
  EXPECT_DOUBLE_EQ(j.pinned, 0.95);
  ASSERT_EQ(j.path.size(), 2u);
  EXPECT_EQ(j.path[0].child, "leaf1");
  EXPECT_TRUE(j.path[0].pinned);
  // The minimum goodput, not a mean, and where it is.
  ASSERT_TRUE(j.rate_bytes_per_s);
  EXPECT_DOUBLE_EQ(*j.rate_bytes_per_s, 4e8);
  EXPECT_EQ(j.rate_switch, "leaf1");
  EXPECT_EQ(j.collectives_completed, 100u);
  EXPECT_TRUE(j.missing.empty());
}

TEST(JobTelemetry, ASlowedLeafLinkIsNamedWhenNoRankBelowStandsOut) {
  const IncTree t = leaf_spine();
  std::map<SwitchId, SwitchGroupFigures> local;
  local["spine0"] = figures(t.nodes[0], {98, 2}, 5e8);
  local["leaf0"] = figures(t.nodes[1], {30, 20, 26, 24}, 5e8);
  local["leaf1"] = figures(t.nodes[2], {25, 25, 25, 25}, 5e8);
  const JobFigures j = combine_job(t, local);
  EXPECT_EQ(j.verdict, "straggler");
  EXPECT_EQ(j.slowest, "link leaf0 -> spine0 (ranks 0-3)");
  EXPECT_DOUBLE_EQ(j.pinned, 0.98);
  ASSERT_EQ(j.path.size(), 2u);
  EXPECT_FALSE(j.path[1].pinned);
}

// Below a link that holds everything 1 ms, a rank that is always a little later than its
// neighbour (the one the leaf replicates to last) is pinned at the leaf, but it is not what
// the job waits for: the link is named.
TEST(JobTelemetry, APinnedRankThatExplainsLittleOfTheLinksLagLeavesTheLinkNamed) {
  const IncTree t = leaf_spine();
  std::map<SwitchId, SwitchGroupFigures> local;
  local["spine0"] = figures(t.nodes[0], {100, 0}, 5e8, {2'097'152, 1024});
  local["leaf0"] = figures(t.nodes[1], {0, 5, 5, 90}, 5e8, {1024, 16'384, 16'384, 32'768});
  local["leaf1"] = figures(t.nodes[2], {25, 25, 25, 25}, 5e8);
  const JobFigures j = combine_job(t, local);
  EXPECT_EQ(j.slowest, "link leaf0 -> spine0 (ranks 0-3)");
  EXPECT_DOUBLE_EQ(j.pinned, 1.0);
  ASSERT_EQ(j.path.size(), 2u);
  EXPECT_TRUE(j.path[1].pinned);
  EXPECT_EQ(j.path[1].lag_p50_ns, 32'768u);
  // The same rank, late by most of what the leaf was late at the spine, is the straggler.
  local["leaf0"] = figures(t.nodes[1], {0, 5, 5, 90}, 5e8, {1024, 16'384, 16'384, 2'097'152});
  EXPECT_EQ(combine_job(t, local).slowest, "rank 3");
}

// A switch child last by no more than its link's declared round trip: the tree's shape (its
// partial has a hop more to come), not a straggler; beyond it, the link is named.
TEST(JobTelemetry, ASwitchChildLateByItsLinksRoundTripIsAnExtraHop) {
  const IncTree t = leaf_spine();
  LinkSpeeds speeds;
  speeds.links[link_between({"spine0", "down1"}, {"leaf1", "up"})] = {.bandwidth_gbps = 100,
                                                                      .rtt_us = 2500};
  std::map<SwitchId, SwitchGroupFigures> local;
  local["spine0"] = figures(t.nodes[0], {5, 95}, 5e8, {1024, 2'097'152});
  local["leaf0"] = figures(t.nodes[1], {25, 25, 25, 25}, 5e8);
  local["leaf1"] = figures(t.nodes[2], {25, 25, 25, 25}, 5e8);
  JobFigures j = combine_job(t, local, &speeds);
  EXPECT_EQ(j.verdict, "extra hop");
  EXPECT_EQ(j.slowest, "");
  EXPECT_DOUBLE_EQ(j.pinned, 0.95);
  // Without declared round trips it is not judged so.
  EXPECT_EQ(combine_job(t, local).slowest, "link leaf1 -> spine0 (ranks 4-7)");
  // Four times the round trip late: the link.
  local["spine0"] = figures(t.nodes[0], {5, 95}, 5e8, {1024, 8'388'608});
  j = combine_job(t, local, &speeds);
  EXPECT_EQ(j.verdict, "straggler");
  EXPECT_EQ(j.slowest, "link leaf1 -> spine0 (ranks 4-7)");
}

TEST(JobTelemetry, SpreadLastArrivalsAreNoise) {
  const IncTree t = leaf_spine();
  std::map<SwitchId, SwitchGroupFigures> local;
  local["spine0"] = figures(t.nodes[0], {55, 45}, 5e8);
  const JobFigures j = combine_job(t, local);
  EXPECT_EQ(j.verdict, "noise");
  EXPECT_EQ(j.slowest, "");
  EXPECT_DOUBLE_EQ(j.pinned, 0.55);
  EXPECT_EQ(j.missing, (std::vector<SwitchId>{"leaf0", "leaf1"}));
}

TEST(JobTelemetry, TooFewSlotsAreNotJudged) {
  const IncTree t = leaf_spine();
  std::map<SwitchId, SwitchGroupFigures> local;
  local["spine0"] = figures(t.nodes[0], {0, 5}, 5e8);
  const JobFigures j = combine_job(t, local);
  EXPECT_EQ(j.verdict, "too few slots timed");
  EXPECT_EQ(j.slowest, "");
}

TEST(JobTelemetry, APinnedLinkToASilentSwitchIsNamedWithWhatIsKnown) {
  const IncTree t = leaf_spine();
  std::map<SwitchId, SwitchGroupFigures> local;
  local["spine0"] = figures(t.nodes[0], {1, 99}, 5e8);
  const JobFigures j = combine_job(t, local);
  EXPECT_EQ(j.verdict, "straggler");
  EXPECT_EQ(j.slowest, "link leaf1 -> spine0 (ranks 4-7); leaf1 sends no figures");
}

TEST(JobTelemetry, ThePinnedThresholdLiesBetweenChanceAndAlways) {
  EXPECT_DOUBLE_EQ(pinned_threshold(2), 0.75);
  EXPECT_DOUBLE_EQ(pinned_threshold(4), 0.625);
  EXPECT_DOUBLE_EQ(pinned_threshold(1), 1.0);
}

}  // namespace
}  // namespace epic::manager
