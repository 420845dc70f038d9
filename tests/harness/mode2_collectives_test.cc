// Mode-II collectives through the deterministic harness: soft RC
// ranks and Mode-II switches, single switch and multi-level trees, lossless
// and with seeded loss/reorder/duplication; results bit for bit against
// arith::reference and EPIC's counter identities.
#include <gtest/gtest.h>

#include "tests/harness/harness_plan.h"
#include "tests/harness/mode2_harness.h"

namespace epic::harness {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;

CollectiveDescriptor allreduce(DType t, ReduceOp op, uint32_t count) {
  return {CollectiveType::kAllReduce, t, op, 0, count};
}

// Lossless AllReduce with R ranks and N data packets (+1 control message) at one switch:
// upward = R*(N+1), aggregations = N+1, results replicated = R*(N+1), every rank ACK reflected.
TEST(Mode2AllReduce, LosslessSingleSwitchCounterIdentities) {
  for (int fan_in : {2, 3, 8, 16}) {
    HarnessConfig cfg;
    cfg.shape = {fan_in};
    const uint32_t count = 64 * cfg.pmtu / 4;  // 64 packets of int32
    const Plan p = make_plan({allreduce(DType::kInt32, ReduceOp::kSum, count)}, fan_in, 7);
    const RunResult r = run(cfg, p.plan, p.inputs);
    ASSERT_TRUE(r.ok) << "fan-in " << fan_in << ": " << r.failure;
    const uint64_t R = static_cast<uint64_t>(fan_in), N = 64 + 1;
    EXPECT_EQ(r.switches.upward_accepted, R * N) << fan_in;
    EXPECT_EQ(r.switches.aggregations_completed, N) << fan_in;
    EXPECT_EQ(r.switches.results_replicated, R * N) << fan_in;
    EXPECT_EQ(r.switches.acks_reflected, r.ranks.tx_acks) << fan_in;
    EXPECT_EQ(r.switches.upward_duplicate, 0u);
    EXPECT_EQ(r.ranks.tx_retransmits, 0u);
  }
}

TEST(Mode2AllReduce, LosslessTwoLevelCounterIdentities) {
  HarnessConfig cfg;
  cfg.shape = {3, 4};  // root with 3 leaves of 4 ranks
  const Plan p = make_plan({allreduce(DType::kFp32, ReduceOp::kSum, 10 * cfg.pmtu / 4)}, 12, 3);
  const RunResult r = run(cfg, p.plan, p.inputs);
  ASSERT_TRUE(r.ok) << r.failure;
  const uint64_t N = 10 + 1;
  // leaves aggregate 4 each (3 leaves), the root aggregates 3: upward = (12 + 3) * N
  EXPECT_EQ(r.switches.upward_accepted, 15 * N);
  EXPECT_EQ(r.switches.aggregations_completed, 4 * N);
  EXPECT_EQ(r.switches.results_replicated, 15 * N);
  EXPECT_EQ(r.switches.acks_reflected, r.ranks.tx_acks);
}

struct Case {
  std::vector<int> shape;
  Faults faults;
};

// The matrix: primitive x dtype x op x size x tree x faults, results bit for bit.
TEST(Mode2Primitives, MatrixOfPrimitivesTypesOpsSizesTreesAndFaults) {
  const std::vector<Case> cases = {
      {{2}, {}},
      {{5}, {}},
      {{16}, {}},
      {{2, 3}, {}},
      {{2, 2, 2}, {}},
      {{4}, {0.01}},
      {{2, 3}, {0.01}},
      {{2, 2, 2}, {0.01}},
      {{4}, {0.05, 0.05, 0.2}},
      {{3, 2}, {0.05, 0.05, 0.2}},
      {{2, 2, 2}, {0.05, 0.05, 0.2}},
  };
  const std::vector<CollectiveType> types = {
      CollectiveType::kAllReduce, CollectiveType::kReduce, CollectiveType::kBroadcast,
      CollectiveType::kReduceScatter, CollectiveType::kAllGather};
  const uint16_t pmtu = 256;
  int runs = 0, collectives = 0;
  for (const Case& c : cases) {
    const int R = rank_count(c.shape);
    for (CollectiveType type : types) {
      for (DType t : {DType::kInt32, DType::kFp32, DType::kBf16, DType::kFp16}) {
        const uint32_t wb = static_cast<uint32_t>(vocab::wire_bytes(t));
        const uint32_t per_packet = pmtu / wb;
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
          const bool reduces =
              type != CollectiveType::kBroadcast && type != CollectiveType::kAllGather;
          if (!reduces && op != ReduceOp::kSum) continue;  // nothing to reduce: one op is enough
          // sizes: 0 (AllReduce only), one element, one packet, MTU-1 and MTU+1 elements, 64
          // packets
          std::vector<uint32_t> counts = {1, per_packet, per_packet - 1, per_packet + 1,
                                          64 * per_packet};
          if (type == CollectiveType::kAllReduce) counts.insert(counts.begin(), 0);
          std::vector<CollectiveDescriptor> ds;
          for (uint32_t n : counts) {
            ds.push_back(
                {type, t, op, static_cast<uint16_t>((runs + n) % static_cast<uint32_t>(R)), n});
          }
          ds.push_back({CollectiveType::kBarrier, t, op, 0, 0});
          HarnessConfig cfg;
          cfg.shape = c.shape;
          cfg.pmtu = pmtu;
          cfg.faults = c.faults;
          cfg.seed = static_cast<uint64_t>(++runs);
          collectives += static_cast<int>(ds.size());
          const Plan p = make_plan(ds, R, cfg.seed);
          const RunResult r = run(cfg, p.plan, p.inputs);
          ASSERT_TRUE(r.ok) << "tree " << ::testing::PrintToString(c.shape) << " loss "
                            << c.faults.loss << " " << vocab::to_string(type) << " "
                            << vocab::to_string(t) << " " << vocab::to_string(op) << ": "
                            << r.failure;
        }
      }
    }
  }
  std::printf(
      "matrix: %d runs, %d collectives (%zu tree/fault cases x 5 primitives x 4 dtypes x "
      "ops, 5-6 sizes each, a Barrier after each run)\n",
      runs, collectives, cases.size());
}

// 1 MiB per rank for every primitive (ReduceScatter/AllGather: 1 MiB in all), two levels, loss.
TEST(Mode2Primitives, OneMebibyteEveryPrimitiveAcrossTwoLevelsWithLoss) {
  HarnessConfig cfg;
  cfg.shape = {2, 2};
  cfg.pmtu = 1024;
  cfg.window = 64;
  cfg.faults = {0.01, 0.01, 0.1};
  const uint32_t mib = (1u << 20) / 4;  // fp32 elements
  const std::vector<CollectiveDescriptor> ds = {
      allreduce(DType::kFp32, ReduceOp::kSum, mib),
      {CollectiveType::kReduce, DType::kFp32, ReduceOp::kSum, 3, mib},
      {CollectiveType::kBroadcast, DType::kFp32, ReduceOp::kSum, 1, mib},
      {CollectiveType::kReduceScatter, DType::kFp32, ReduceOp::kMax, 0, mib / 4},
      {CollectiveType::kAllGather, DType::kFp32, ReduceOp::kSum, 0, mib / 4}};
  const Plan p = make_plan(ds, 4, 11);
  const RunResult r = run(cfg, p.plan, p.inputs);
  ASSERT_TRUE(r.ok) << r.failure;
}

TEST(Mode2Barrier, BarriersInterleavedWithAllReduces) {
  HarnessConfig cfg;
  cfg.shape = {2, 3};
  cfg.faults = {0.02, 0.02, 0.2};
  std::vector<CollectiveDescriptor> ds;
  for (int i = 0; i < 10; ++i) {
    ds.push_back({CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0});
    ds.push_back(allreduce(DType::kInt32, ReduceOp::kMax, 100));
  }
  const Plan p = make_plan(ds, 6, 5);
  const RunResult r = run(cfg, p.plan, p.inputs);
  ASSERT_TRUE(r.ok) << r.failure;
}

// A late rank under loss (integration.incd_single_switch's failure, reduced): one rank starts
// every collective a virtual second after the others, who wait at the switch with their uploads
// unacknowledged, retransmitting. Losses during that wait must not spend their transport retry
// count (7, refilled only by progress): the switch parks them with RNR NAK whichever end of
// their go-back-N burst arrives. Before that, a lost oldest upload meant a local ACK timeout
// each, and a long enough wait failed every waiting rank with retry-exceeded.
TEST(Mode2Waiting, LateRankUnderLossSpendsNoRetriesOfTheWaitingRanks) {
  HarnessConfig cfg;
  cfg.shape = {4};
  cfg.faults = {0.01, 0, 0};
  cfg.late_rank = 2;
  cfg.late_ns = 1'000'000'000;
  cfg.time_limit_ns = 60'000'000'000;
  const std::vector<CollectiveDescriptor> ds = {
      allreduce(DType::kInt32, ReduceOp::kSum, 600),
      {CollectiveType::kReduce, DType::kBf16, ReduceOp::kMin, 2, 700},
      {CollectiveType::kReduce, DType::kFp32, ReduceOp::kMax, 0, 300},
      {CollectiveType::kBroadcast, DType::kInt32, ReduceOp::kSum, 2, 500},
      {CollectiveType::kBroadcast, DType::kInt32, ReduceOp::kSum, 1, 500},
      {CollectiveType::kReduceScatter, DType::kInt32, ReduceOp::kSum, 0, 90},
      {CollectiveType::kAllGather, DType::kFp32, ReduceOp::kSum, 0, 90},
      {CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0}};
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    cfg.seed = seed;
    const Plan p = make_plan(ds, 4, seed);
    const RunResult r = run(cfg, p.plan, p.inputs);
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.failure;
    // The waits were long: the late rank really was late every time.
    EXPECT_GT(r.virtual_ns, ds.size() * cfg.late_ns);
    EXPECT_GT(r.switches.rnr_naks_sent, 10 * ds.size());
  }
}

}  // namespace
}  // namespace epic::harness
