// 1,000 seeds of random Mode-II scenarios: random tree (one switch with fan-in
// 2..16, two or three levels), window, path MTU, initial PSN (often near the
// wrap), faults (loss, duplication, reordering) and a plan of 1-5 collectives
// of all six primitives with random roots, types, operations and sizes
// interleaved in one group (so the ranks' PSNs drift apart). Every result bit
// for bit against the reference; nothing hangs (virtual-time bound).
#include <gtest/gtest.h>

#include <random>

#include "host/collective/inputs.h"
#include "tests/harness/mode2_harness.h"

namespace epic::harness {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;

TEST(Mode2Random, ThousandSeedsOfAllSixPrimitivesInterleaved) {
  int failures = 0;
  uint64_t collectives = 0, packets_resent = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    std::mt19937_64 rng(seed);
    HarnessConfig cfg;
    switch (rng() % 3) {
      case 0:
        cfg.shape = {2 + static_cast<int>(rng() % 15)};
        break;
      case 1:
        cfg.shape = {2 + static_cast<int>(rng() % 3), 1 + static_cast<int>(rng() % 4)};
        break;
      default:
        cfg.shape = {2, 2, 1 + static_cast<int>(rng() % 3)};
        break;
    }
    cfg.window = 1u << (1 + rng() % 6);  // 2..64
    cfg.pmtu = static_cast<uint16_t>(256u << (rng() % 3));
    cfg.initial_psn = rng() % 2 ? 0xFFFFFF - static_cast<uint32_t>(rng() % 200)
                                : static_cast<uint32_t>(rng() & 0xFFFFFF);
    const double losses[] = {0, 0, 0.01, 0.03};
    cfg.faults = {losses[rng() % 4], (rng() % 3) * 0.02, (rng() % 2) * 0.2};
    cfg.seed = seed;
    const int R = rank_count(cfg.shape);
    std::vector<CollectiveDescriptor> plan;
    std::vector<std::vector<std::vector<uint8_t>>> inputs;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < n; ++k) {
      CollectiveDescriptor d;
      d.type = static_cast<CollectiveType>(1 + rng() % 6);  // all six primitives
      if (d.type != CollectiveType::kBarrier) {
        d.dtype = static_cast<vocab::DType>(rng() % 4);
        d.op = static_cast<vocab::ReduceOp>(rng() % 3);
        d.root = static_cast<uint16_t>(rng() % static_cast<uint64_t>(R));
        d.count = rng() % 3 == 0 ? static_cast<uint32_t>(rng() % 8)
                                 : static_cast<uint32_t>(rng() % (20 * cfg.pmtu / 2));
        if (d.type != CollectiveType::kAllReduce && d.count == 0) d.count = 1;
        if (d.type == CollectiveType::kReduceScatter || d.type == CollectiveType::kAllGather) {
          d.count = 1 + d.count / static_cast<uint32_t>(R);  // per-rank chunks
        }
      }
      plan.push_back(d);
      inputs.push_back(
          host::exact_inputs(d, static_cast<uint16_t>(R), seed, static_cast<uint64_t>(k)));
    }
    const RunResult r = run(cfg, plan, inputs);
    collectives += plan.size();
    packets_resent += r.switches.results_resent;
    if (!r.ok && ++failures <= 5) {
      ADD_FAILURE() << "seed " << seed << " tree " << ::testing::PrintToString(cfg.shape) << " MW "
                    << cfg.window << " pmtu " << cfg.pmtu << " loss " << cfg.faults.loss << ": "
                    << r.failure << " [busy " << r.switches.upward_slot_busy << ", stale "
                    << r.switches.upward_stale << ", retransmits " << r.ranks.tx_retransmits
                    << ", timeouts " << r.ranks.timeouts << "]";
    }
  }
  EXPECT_EQ(failures, 0);
  std::printf("seeds: 1000, collectives: %llu, results re-sent to one child: %llu\n",
              static_cast<unsigned long long>(collectives),
              static_cast<unsigned long long>(packets_resent));
  EXPECT_GT(packets_resent, 0u);  // the faults did exercise recovery
}

}  // namespace
}  // namespace epic::harness
