// Mode-III collectives through the deterministic harness: soft RC ranks (unmodified RC
// endpoints) and Mode-III switches, where every hop ACKs, NAKs and retransmits on its own.
// Results bit for bit against the reference; at the end every Pipe has sent and recycled every
// entry and every timer has stopped (the harness checks both).
#include <gtest/gtest.h>

#include "tests/harness/harness_plan.h"
#include "tests/harness/mode2_harness.h"

namespace epic::harness {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;

HarnessConfig mode3(std::vector<int> shape, Faults faults = {}) {
  HarnessConfig cfg;
  cfg.mode = vocab::GroupMode::kMode3;
  cfg.shape = std::move(shape);
  cfg.faults = faults;
  return cfg;
}

// Lossless AllReduce at one switch: every upload taken once, N+1 aggregations, R·(N+1) results,
// no retransmission by anyone.
TEST(Mode3AllReduce, LosslessSingleSwitch) {
  for (int fan_in : {2, 3, 8}) {
    HarnessConfig cfg = mode3({fan_in});
    const uint32_t count = 40 * cfg.pmtu / 4;  // 40 packets of int32
    const Plan p = make_plan(
        {{CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, count}}, fan_in, 7);
    const RunResult r = run(cfg, p.plan, p.inputs);
    ASSERT_TRUE(r.ok) << "fan-in " << fan_in << ": " << r.failure;
    const uint64_t R = static_cast<uint64_t>(fan_in), N = 40 + 1;
    EXPECT_EQ(r.switches.hop_taken, R * N);
    EXPECT_EQ(r.switches.aggregations_completed, N);
    EXPECT_EQ(r.switches.results_replicated, R * N);
    EXPECT_EQ(r.switches.hop_resent, 0u);
    EXPECT_EQ(r.ranks.tx_retransmits, 0u);
  }
}

TEST(Mode3Primitives, EveryPrimitiveOnOneTwoAndThreeLevels) {
  const std::vector<std::vector<int>> trees = {{4}, {2, 3}, {2, 2, 2}};
  for (const auto& tree : trees) {
    for (const Faults& f : {Faults{}, Faults{0.02, 0.02, 0.2}}) {
      HarnessConfig cfg = mode3(tree, f);
      const int R = rank_count(tree);
      const uint32_t per = 5 * cfg.pmtu / 4;
      const std::vector<CollectiveDescriptor> ds = {
          {CollectiveType::kAllReduce, DType::kFp32, ReduceOp::kSum, 0, per},
          {CollectiveType::kReduce, DType::kInt32, ReduceOp::kMax, 1, per},
          {CollectiveType::kBroadcast, DType::kFp16, ReduceOp::kSum, static_cast<uint16_t>(R - 1),
           per},
          {CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0},
          {CollectiveType::kReduceScatter, DType::kBf16, ReduceOp::kMin, 0, per / 2},
          {CollectiveType::kAllGather, DType::kInt32, ReduceOp::kSum, 0, per / 2},
      };
      const Plan p = make_plan(ds, R, 11);
      const RunResult r = run(cfg, p.plan, p.inputs);
      EXPECT_TRUE(r.ok) << ::testing::PrintToString(tree) << " loss " << f.loss << ": "
                        << r.failure;
    }
  }
}

// A group bound to a partition (GroupContext::pkey): with ranks in it, every primitive runs on
// two levels in both modes — so the switches' own frames (results, ACKs, partials up the tree,
// frontiers) carry the group's P_Key, or the next switch would drop them. Ranks that send the
// default partition's key instead are refused frame by frame as `edge_pkey`, and nothing
// completes.
TEST(PartitionKey, AGroupBoundToAPartitionRunsWithItsRanksAndRefusesOthers) {
  for (const vocab::GroupMode mode : {vocab::GroupMode::kMode2, vocab::GroupMode::kMode3}) {
    SCOPED_TRACE(static_cast<int>(mode));
    HarnessConfig cfg;
    cfg.mode = mode;
    cfg.shape = {2, 2};
    cfg.faults = Faults{0.02, 0.02, 0.2};
    cfg.group_pkey = 0x8012;
    cfg.rank_pkey = 0x8012;
    const int R = rank_count(cfg.shape);
    const uint32_t per = 5 * cfg.pmtu / 4;
    const std::vector<CollectiveDescriptor> ds = {
        {CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, per},
        {CollectiveType::kBroadcast, DType::kInt32, ReduceOp::kSum, 1, per},
        {CollectiveType::kAllGather, DType::kInt32, ReduceOp::kSum, 0, per / 2},
        {CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0},
    };
    const Plan p = make_plan(ds, R, 5);
    const RunResult ok = run(cfg, p.plan, p.inputs);
    EXPECT_TRUE(ok.ok) << ok.failure;
    EXPECT_EQ(ok.switches.drop_edge_pkey, 0u);

    cfg.faults = {};
    cfg.rank_pkey = vocab::kDefaultPkey;
    cfg.time_limit_ns = 50'000'000;
    const RunResult refused = run(cfg, p.plan, p.inputs);
    EXPECT_FALSE(refused.ok);
    EXPECT_GT(refused.switches.drop_edge_pkey, 0u);
    EXPECT_EQ(refused.switches.aggregations_completed, 0u);
    EXPECT_EQ(refused.switches.rx_frames, refused.switches.drop_edge_pkey);
  }
}

}  // namespace
}  // namespace epic::harness
