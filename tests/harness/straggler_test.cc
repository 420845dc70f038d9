// Straggler telemetry through the deterministic harness (docs/telemetry.md): a rank made late
// in the simulation (it starts every collective late, the others wait for it at the switch) is
// named as the slowest child and pinned; random link jitter alone spreads the last arrivals;
// and the counter identities of a lossless run hold for the new counters.
#include <gtest/gtest.h>

#include <numeric>

#include "tests/harness/harness_plan.h"
#include "tests/harness/mode2_harness.h"

namespace epic::harness {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;

CollectiveDescriptor allreduce(uint32_t count) {
  return {CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, count};
}

// Collectives of at most one window each, so that every slot waits for the late rank.
std::vector<CollectiveDescriptor> small_allreduces(const HarnessConfig& cfg, size_t n) {
  return std::vector<CollectiveDescriptor>(n, allreduce(8 * cfg.pmtu / 4));
}

const vocab::ChildTiming* child_with_rank(const std::vector<vocab::ChildTiming>& cs,
                                          uint16_t rank) {
  for (const auto& c : cs) {
    if (c.first_rank <= rank && rank < c.first_rank + c.rank_count) return &c;
  }
  return nullptr;
}

TEST(Straggler, ALateRankIsTheSlowestChildAndPinned) {
  for (vocab::GroupMode mode : {vocab::GroupMode::kMode2, vocab::GroupMode::kMode3}) {
    HarnessConfig cfg;
    cfg.shape = {4};
    cfg.mode = mode;
    cfg.late_rank = 2;
    cfg.late_ns = 200'000;
    const Plan p = make_plan(small_allreduces(cfg, 20), 4, 3);
    const RunResult r = run(cfg, p.plan, p.inputs);
    ASSERT_TRUE(r.ok) << r.failure;
    ASSERT_EQ(r.child_timing.size(), 1u);
    const auto& cs = r.child_timing[0];
    const vocab::SlowestChild slow = vocab::slowest_child(cs);
    ASSERT_GE(slow.child, 0);
    EXPECT_EQ(cs[static_cast<size_t>(slow.child)].first_rank, 2) << vocab::child_name(cs[0]);
    EXPECT_GE(slow.share, 0.9);
    // Its contributions come about late_ns after the first of each slot; the others' soon after.
    const vocab::ChildTiming& late = *child_with_rank(cs, 2);
    EXPECT_GE(late.lag_p50_ns, cfg.late_ns / 2);
    for (const auto& c : cs) {
      if (c.first_rank != 2) EXPECT_LT(c.lag_p50_ns, cfg.late_ns / 2) << vocab::child_name(c);
    }
  }
}

// Link jitter only (every frame may take an extra random delay): nobody is last most of the
// time; the slowest child's share falls toward 1/fan-in.
TEST(Straggler, JitterAloneSpreadsTheLastArrivals) {
  HarnessConfig cfg;
  cfg.shape = {4};
  cfg.faults.reorder = 0.5;
  cfg.seed = 5;
  const Plan p = make_plan(small_allreduces(cfg, 30), 4, 3);
  const RunResult r = run(cfg, p.plan, p.inputs);
  ASSERT_TRUE(r.ok) << r.failure;
  const vocab::SlowestChild slow = vocab::slowest_child(r.child_timing[0]);
  EXPECT_GT(slow.slots, 100u);
  EXPECT_LT(slow.share, 0.5);
}

// Two levels: rank 4 lies under the second leaf. The root sees that leaf last; the leaf sees
// rank 4 last.
TEST(Straggler, TheWalkDownATreeEndsAtTheLateRank) {
  HarnessConfig cfg;
  cfg.shape = {2, 3};
  cfg.late_rank = 4;
  cfg.late_ns = 200'000;
  const Plan p = make_plan(small_allreduces(cfg, 20), 6, 3);
  const RunResult r = run(cfg, p.plan, p.inputs);
  ASSERT_TRUE(r.ok) << r.failure;
  ASSERT_EQ(r.child_timing.size(), 3u);  // root, leaf 0, leaf 1
  const auto& root = r.child_timing[0];
  const vocab::SlowestChild at_root = vocab::slowest_child(root);
  ASSERT_GE(at_root.child, 0);
  EXPECT_FALSE(root[static_cast<size_t>(at_root.child)].is_rank);
  EXPECT_EQ(root[static_cast<size_t>(at_root.child)].first_rank, 3);
  EXPECT_GE(at_root.share, 0.9);
  const auto& leaf = r.child_timing[2];
  const vocab::SlowestChild at_leaf = vocab::slowest_child(leaf);
  ASSERT_GE(at_leaf.child, 0);
  EXPECT_EQ(leaf[static_cast<size_t>(at_leaf.child)].first_rank, 4);
  EXPECT_GE(at_leaf.share, 0.9);
}

// A lossless single switch: every slot's completion is one child's "last" or a tie (their sum =
// aggregations),
// every collective is counted complete once, and result_bytes are the results' payload bytes.
TEST(Straggler, LosslessCounterIdentities) {
  for (vocab::GroupMode mode : {vocab::GroupMode::kMode2, vocab::GroupMode::kMode3}) {
    HarnessConfig cfg;
    cfg.shape = {5};
    cfg.mode = mode;
    const std::vector<CollectiveDescriptor> ds = {
        allreduce(40 * cfg.pmtu / 4),
        allreduce(3),
        {CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0},
        {CollectiveType::kReduce, DType::kInt32, ReduceOp::kMax, 1, 500}};
    const Plan p = make_plan(ds, 5, 2);
    const RunResult r = run(cfg, p.plan, p.inputs);
    ASSERT_TRUE(r.ok) << r.failure;
    ASSERT_EQ(r.group_stats.size(), 1u);
    const vocab::GroupStats& g = r.group_stats[0];
    uint64_t last = 0;
    for (const auto& c : r.child_timing[0]) last += c.last;
    EXPECT_EQ(last + g.slots_tied, g.aggregations_completed);
    EXPECT_EQ(g.result_bytes, (40 * cfg.pmtu / 4 + 3 + 500) * 4u);
    if (mode == vocab::GroupMode::kMode2) EXPECT_EQ(g.collectives_completed, ds.size());
  }
}

}  // namespace
}  // namespace epic::harness
