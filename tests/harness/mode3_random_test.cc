// Random Mode-III scenarios, 1,000 seeds: each seed runs all six primitives (in a random order,
// with random roots, types, operations and sizes, plus up to three more collectives) on a
// one-, two- or three-level tree (by seed), with a random window, path MTU and initial PSN
// (often near the wrap), under seeded loss, duplication, reordering and a burst outage on every
// link. Every result bit for bit against the reference; nothing hangs (virtual-time bound);
// at the end every Pipe has sent and recycled every entry and no timer runs (the harness
// checks). Four ctest tests of 250 seeds each, so that CI runs them in parallel.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "host/collective/inputs.h"
#include "tests/harness/mode2_harness.h"

namespace epic::harness {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;

struct Totals {
  uint64_t collectives = 0, hop_resent = 0, hop_timeouts = 0, naks = 0, rnr = 0;
};

CollectiveDescriptor random_collective(CollectiveType t, int R, uint16_t pmtu,
                                       std::mt19937_64& rng) {
  CollectiveDescriptor d;
  d.type = t;
  if (t == CollectiveType::kBarrier) return d;
  d.dtype = static_cast<vocab::DType>(rng() % 4);
  d.op = static_cast<vocab::ReduceOp>(rng() % 3);
  d.root = static_cast<uint16_t>(rng() % static_cast<uint64_t>(R));
  d.count = rng() % 3 == 0 ? static_cast<uint32_t>(rng() % 8)
                           : static_cast<uint32_t>(rng() % (12 * pmtu / 2));
  if (t != CollectiveType::kAllReduce && d.count == 0) d.count = 1;
  if (t == CollectiveType::kReduceScatter || t == CollectiveType::kAllGather) {
    d.count = 1 + d.count / static_cast<uint32_t>(R);  // per-rank chunks
  }
  return d;
}

void run_seeds(uint64_t first, uint64_t last) {
  int failures = 0;
  Totals t;
  for (uint64_t seed = first; seed <= last; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    HarnessConfig cfg;
    cfg.mode = vocab::GroupMode::kMode3;
    switch (seed % 3) {
      case 0:
        cfg.shape = {2 + static_cast<int>(rng() % 7)};
        break;
      case 1:
        cfg.shape = {2 + static_cast<int>(rng() % 3), 1 + static_cast<int>(rng() % 3)};
        break;
      default:
        cfg.shape = {2, 1 + static_cast<int>(rng() % 2), 1 + static_cast<int>(rng() % 3)};
        break;
    }
    cfg.window = 1u << (1 + rng() % 5);  // 2..32
    cfg.pmtu = static_cast<uint16_t>(256u << (rng() % 3));
    cfg.initial_psn = rng() % 2 ? 0xFFFFFF - static_cast<uint32_t>(rng() % 200)
                                : static_cast<uint32_t>(rng() & 0xFFFFFF);
    const double losses[] = {0, 0.01, 0.03, 0.05};
    cfg.faults.loss = losses[rng() % 4];
    cfg.faults.duplicate = (rng() % 3) * 0.02;
    cfg.faults.reorder = (rng() % 2) * 0.2;
    if (rng() % 2) {  // a burst outage of 0.1 .. 2 ms somewhere in the first 2 ms
      cfg.faults.outage_at_ns = rng() % 2'000'000;
      cfg.faults.outage_ns = 100'000 + rng() % 1'900'000;
    }
    cfg.seed = seed;
    const int R = rank_count(cfg.shape);
    std::vector<CollectiveType> types = {CollectiveType::kAllReduce, CollectiveType::kReduce,
                                         CollectiveType::kBroadcast, CollectiveType::kReduceScatter,
                                         CollectiveType::kAllGather, CollectiveType::kBarrier};
    for (int extra = static_cast<int>(rng() % 4); extra > 0; --extra) {
      types.push_back(static_cast<CollectiveType>(1 + rng() % 6));
    }
    std::shuffle(types.begin(), types.end(), rng);
    std::vector<CollectiveDescriptor> plan;
    std::vector<std::vector<std::vector<uint8_t>>> inputs;
    for (CollectiveType type : types) {
      plan.push_back(random_collective(type, R, cfg.pmtu, rng));
      inputs.push_back(host::exact_inputs(plan.back(), static_cast<uint16_t>(R), seed,
                                          static_cast<uint64_t>(inputs.size())));
    }
    const RunResult r = run(cfg, plan, inputs);
    t.collectives += plan.size();
    t.hop_resent += r.switches.hop_resent;
    t.hop_timeouts += r.switches.hop_timeouts;
    t.naks += r.switches.hop_naks_sent;
    t.rnr += r.switches.hop_rnr_naks_sent;
    if (!r.ok && ++failures <= 5) {
      ADD_FAILURE() << "seed " << seed << " tree " << ::testing::PrintToString(cfg.shape) << " MW "
                    << cfg.window << " pmtu " << cfg.pmtu << " loss " << cfg.faults.loss
                    << " outage " << cfg.faults.outage_ns << " ns at " << cfg.faults.outage_at_ns
                    << ": " << r.failure;
    }
  }
  EXPECT_EQ(failures, 0);
  std::printf(
      "seeds %llu..%llu: collectives %llu, hop retransmissions %llu, hop timeouts %llu, "
      "sequence NAKs %llu, RNR NAKs %llu\n",
      static_cast<unsigned long long>(first), static_cast<unsigned long long>(last),
      static_cast<unsigned long long>(t.collectives), static_cast<unsigned long long>(t.hop_resent),
      static_cast<unsigned long long>(t.hop_timeouts), static_cast<unsigned long long>(t.naks),
      static_cast<unsigned long long>(t.rnr));
  EXPECT_GT(t.hop_resent, 0u);  // the faults did exercise the hops' recovery
  EXPECT_GT(t.hop_timeouts, 0u);
}

TEST(Mode3Random, Seeds1To250) { run_seeds(1, 250); }
TEST(Mode3Random, Seeds251To500) { run_seeds(251, 500); }
TEST(Mode3Random, Seeds501To750) { run_seeds(501, 750); }
TEST(Mode3Random, Seeds751To1000) { run_seeds(751, 1000); }

}  // namespace
}  // namespace epic::harness
