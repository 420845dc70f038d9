#include "datapath/switching/fault_stage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace epic::switching {
namespace {

// Packets are ints; clones get fresh handles from kFirstClone up. The tracker
// records every clone and every free so tests can account for each handle.
constexpr int kFirstClone = 1'000'000;

struct Tracker {
  int next_clone = kFirstClone;
  int clone_budget = -1;        // -1: unlimited
  std::map<int, int> clone_of;  // clone -> original
  std::map<int, int> frees;     // handle -> times freed
};

struct TrackOps {
  Tracker* t;
  bool clone(int in, int* out) {
    if (t->clone_budget == 0) return false;
    if (t->clone_budget > 0) --t->clone_budget;
    *out = t->next_clone++;
    t->clone_of[*out] = in;
    return true;
  }
  void free(int p) { ++t->frees[p]; }
};

using Stage = FaultStage<int, TrackOps>;

struct Out {
  int pkt;
  uint64_t at_ns;
};

// Feeds packets 1..n, `burst` at a time, one burst every `step_ns`; calls
// release() after each burst and keeps releasing until nothing is held.
std::vector<Out> run(Stage& s, int n, size_t burst = 32, uint64_t step_ns = 1000,
                     size_t out_cap = 256) {
  std::vector<Out> got;
  std::vector<int> in(burst), out(out_cap);
  uint64_t now = 0;
  auto take = [&](size_t k) {
    for (size_t i = 0; i < k; ++i) got.push_back({out[i], now});
  };
  for (int next = 1; next <= n; now += step_ns) {
    size_t k = 0;
    while (k < burst && next <= n) in[k++] = next++;
    take(s.process(in.data(), k, out.data(), out.size(), now));
    take(s.release(now, out.data(), out.size()));
  }
  while (s.held() > 0) {
    now = std::max(now, *s.next_release());
    take(s.release(now, out.data(), out.size()));
  }
  return got;
}

std::vector<int> handles(const std::vector<Out>& v) {
  std::vector<int> h;
  h.reserve(v.size());
  for (const Out& o : v) h.push_back(o.pkt);
  return h;
}

// Every input 1..n and every clone ends up exactly once: output or freed.
void expect_conserved(const std::vector<Out>& got, const Tracker& t, int n) {
  std::map<int, int> seen;
  for (const Out& o : got) ++seen[o.pkt];
  for (const auto& [h, k] : t.frees) seen[h] += k;
  for (int i = 1; i <= n; ++i) {
    ASSERT_EQ(seen[i], 1) << "input " << i;
    seen.erase(i);
  }
  for (const auto& [clone, orig] : t.clone_of) {
    ASSERT_EQ(seen[clone], 1) << "clone " << clone << " of " << orig;
    seen.erase(clone);
  }
  EXPECT_TRUE(seen.empty()) << "unknown handle " << seen.begin()->first;
}

TEST(FaultSpec, EnabledWhenAnyFaultIsNonZero) {
  EXPECT_FALSE(FaultSpec{}.enabled());
  EXPECT_FALSE((FaultSpec{.seed = 99}.enabled()));
  EXPECT_TRUE((FaultSpec{.drop = 0.01}.enabled()));
  EXPECT_TRUE((FaultSpec{.duplicate = 0.01}.enabled()));
  EXPECT_TRUE((FaultSpec{.reorder = 0.01}.enabled()));
  EXPECT_TRUE((FaultSpec{.delay_ns = 1}.enabled()));
  EXPECT_TRUE((FaultSpec{.mark_ce = 0.01}.enabled()));
}

// Ops that can mark: even handles are ECN-capable, odd ones are not.
struct MarkOps {
  std::map<int, int>* marked;
  bool clone(int, int*) { return false; }
  void free(int) {}
  bool mark_ce(int p) {
    if (p % 2 != 0) return false;
    ++(*marked)[p];
    return true;
  }
};

TEST(FaultStage, MarkCeMarksEcnCapablePacketsAtItsRateAndPassesAll) {
  std::map<int, int> marked;
  FaultStage<int, MarkOps> s({.mark_ce = 0.25, .seed = 3}, MarkOps{&marked});
  std::vector<int> in(20'000), out(20'000);
  for (int i = 0; i < 20'000; ++i) in[static_cast<size_t>(i)] = i;
  ASSERT_EQ(s.process(in.data(), in.size(), out.data(), out.size(), 0), in.size());
  EXPECT_EQ(out, in);  // nothing dropped, held or reordered
  // 10,000 capable packets at p = 0.25: 2,500 +- 5 sigma (sigma = 43).
  EXPECT_NEAR(static_cast<double>(s.counters().ce_marked), 2500.0, 5 * 43.3);
  EXPECT_EQ(s.counters().ce_marked, marked.size());
  for (const auto& [p, n] : marked) {
    EXPECT_EQ(p % 2, 0);
    EXPECT_EQ(n, 1);
  }
}

TEST(FaultStage, DisabledSpecPassesEveryPacketThroughInOrderAtOnce) {
  Tracker t;
  Stage s(FaultSpec{}, TrackOps{&t});
  int in[] = {5, 6, 7};
  int out[8] = {};
  EXPECT_EQ(s.process(in, 3, out, 8, 0), 3u);
  EXPECT_EQ(std::vector<int>(out, out + 3), (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(s.held(), 0u);
  EXPECT_EQ(s.next_release(), std::nullopt);
  EXPECT_EQ(s.counters().passed, 3u);
  EXPECT_TRUE(t.frees.empty());
}

TEST(FaultStage, DropRateOverHundredThousandPacketsIsWithinFiveSigma) {
  Tracker t;
  Stage s(FaultSpec{.drop = 0.1, .seed = 42}, TrackOps{&t});
  const std::vector<Out> got = run(s, 100'000);
  // Binomial(100000, 0.1): mean 10000, sigma ~ 95.
  EXPECT_GE(s.counters().dropped, 9525u);
  EXPECT_LE(s.counters().dropped, 10475u);
  EXPECT_EQ(s.counters().passed + s.counters().dropped, 100'000u);
  EXPECT_EQ(got.size(), s.counters().passed);
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end(),
                             [](const Out& a, const Out& b) { return a.pkt < b.pkt; }));
  expect_conserved(got, t, 100'000);
}

TEST(FaultStage, DropOneDropsEverything) {
  Tracker t;
  Stage s(FaultSpec{.drop = 1.0}, TrackOps{&t});
  const std::vector<Out> got = run(s, 1000);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(s.counters().dropped, 1000u);
  expect_conserved(got, t, 1000);
}

TEST(FaultStage, SameSeedSameInputsSameTimesGiveTheSameOutput) {
  const FaultSpec spec{
      .drop = 0.05, .duplicate = 0.05, .reorder = 0.1, .delay_ns = 3000, .seed = 7};
  Tracker t1, t2, t3;
  Stage a(spec, TrackOps{&t1}), b(spec, TrackOps{&t2});
  FaultSpec other = spec;
  other.seed = 8;
  Stage c(other, TrackOps{&t3});
  const std::vector<Out> ga = run(a, 20'000), gb = run(b, 20'000), gc = run(c, 20'000);
  EXPECT_EQ(handles(ga), handles(gb));
  for (size_t i = 0; i < ga.size() && i < gb.size(); ++i) ASSERT_EQ(ga[i].at_ns, gb[i].at_ns);
  EXPECT_EQ(t1.frees, t2.frees);
  EXPECT_NE(handles(ga), handles(gc));
}

TEST(FaultStage, DuplicatesAreClonesThatLeaveRightAfterTheirOriginal) {
  Tracker t;
  Stage s(FaultSpec{.duplicate = 0.2, .seed = 3}, TrackOps{&t});
  const std::vector<Out> got = run(s, 10'000);
  const uint64_t dups = s.counters().duplicated;
  EXPECT_GE(dups, 1800u);  // Binomial(10000, 0.2): mean 2000, sigma 40
  EXPECT_LE(dups, 2200u);
  EXPECT_EQ(t.clone_of.size(), dups);
  EXPECT_EQ(got.size(), 10'000u + dups);
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].pkt < kFirstClone) continue;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(got[i - 1].pkt, t.clone_of.at(got[i].pkt));
  }
  expect_conserved(got, t, 10'000);
}

TEST(FaultStage, FailedCloneCountsAndTheOriginalStillLeaves) {
  Tracker t;
  t.clone_budget = 0;
  Stage s(FaultSpec{.duplicate = 1.0}, TrackOps{&t});
  const std::vector<Out> got = run(s, 100);
  EXPECT_EQ(s.counters().clone_failed, 100u);
  EXPECT_EQ(s.counters().duplicated, 0u);
  EXPECT_EQ(got.size(), 100u);
  expect_conserved(got, t, 100);
}

TEST(FaultStage, ReorderLetsLaterPacketsOvertakeAndReleasesEveryPacket) {
  Tracker t;
  // One packet per microsecond: a reorder hold of 1..50 us lets 1..50 packets pass.
  Stage s(FaultSpec{.reorder = 0.1, .seed = 11}, TrackOps{&t});
  const std::vector<Out> got = run(s, 10'000, 1, 1000);
  ASSERT_EQ(got.size(), 10'000u);
  EXPECT_EQ(s.held(), 0u);
  EXPECT_GE(s.counters().reordered, 880u);  // mean 1000, sigma 30
  EXPECT_LE(s.counters().reordered, 1120u);
  size_t overtaken = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint64_t arrived = static_cast<uint64_t>(got[i].pkt - 1) * 1000;
    const uint64_t waited = got[i].at_ns - arrived;
    EXPECT_TRUE(waited == 0 || (waited >= 1000 && waited <= 51'000)) << waited;
    if (i > 0 && got[i].pkt < got[i - 1].pkt) ++overtaken;
  }
  EXPECT_GE(overtaken, 800u);
  expect_conserved(got, t, 10'000);
}

TEST(FaultStage, DelayHoldsPacketsUntilTheirTimeThenReleasesInOrder) {
  Tracker t;
  Stage s(FaultSpec{.delay_ns = 10'000}, TrackOps{&t});
  int in[] = {1, 2, 3, 4};
  int out[8] = {};
  EXPECT_EQ(s.process(in, 2, out, 8, 0), 0u);
  EXPECT_EQ(s.process(in + 2, 2, out, 8, 500), 0u);
  EXPECT_EQ(s.held(), 4u);
  EXPECT_EQ(s.next_release(), std::optional<uint64_t>(10'000));
  EXPECT_EQ(s.release(9'999, out, 8), 0u);
  EXPECT_EQ(s.release(10'000, out, 8), 2u);
  EXPECT_EQ(std::vector<int>(out, out + 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(s.next_release(), std::optional<uint64_t>(10'500));
  EXPECT_EQ(s.release(20'000, out, 1), 1u);  // out_cap bounds a release
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(s.release(20'000, out, 8), 1u);
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(s.held(), 0u);
  EXPECT_EQ(s.counters().delayed, 4u);
  EXPECT_EQ(s.counters().passed, 4u);
}

TEST(FaultStage, DelayAndReorderTogetherHoldEachPacketItsOwnTime) {
  Tracker t;
  Stage s(FaultSpec{.reorder = 0.3, .delay_ns = 5000, .seed = 5}, TrackOps{&t});
  const std::vector<Out> got = run(s, 5000, 1, 1000);  // release() called every 1000 ns
  ASSERT_EQ(got.size(), 5000u);
  size_t plain = 0;
  for (const Out& o : got) {
    const uint64_t waited = o.at_ns - static_cast<uint64_t>(o.pkt - 1) * 1000;
    if (waited == 5000) {
      ++plain;
    } else {
      EXPECT_GE(waited, 6000u);   // delay + at least 1 us
      EXPECT_LE(waited, 56000u);  // delay + at most 50 us, rounded up to the next call
    }
  }
  EXPECT_EQ(plain, 5000u - s.counters().reordered);
  EXPECT_EQ(s.counters().delayed, 5000u);
  expect_conserved(got, t, 5000);
}

TEST(FaultStage, ClockGoingBackwardsStillReleasesInReleaseTimeOrder) {
  Tracker t;
  Stage s(FaultSpec{.delay_ns = 1000}, TrackOps{&t});
  int a = 1, b = 2, c = 3;
  int out[4] = {};
  s.process(&a, 1, out, 4, 5000);  // due 6000
  s.process(&b, 1, out, 4, 3000);  // due 4000
  s.process(&c, 1, out, 4, 5000);  // due 6000, after 1
  EXPECT_EQ(s.next_release(), std::optional<uint64_t>(4000));
  EXPECT_EQ(s.release(4000, out, 4), 1u);
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(s.release(6000, out, 4), 2u);
  EXPECT_EQ(std::vector<int>(out, out + 2), (std::vector<int>{1, 3}));
}

TEST(FaultStage, FullHoldQueuePassesPacketsAtOnceAndCountsOverflow) {
  Tracker t;
  Stage s(FaultSpec{.delay_ns = 1000}, TrackOps{&t}, 2);
  int in[] = {1, 2, 3, 4, 5};
  int out[8] = {};
  EXPECT_EQ(s.process(in, 5, out, 8, 0), 3u);
  EXPECT_EQ(std::vector<int>(out, out + 3), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(s.held(), 2u);
  EXPECT_EQ(s.counters().overflow, 3u);
  EXPECT_EQ(s.counters().delayed, 2u);
  EXPECT_EQ(s.release(1000, out, 8), 2u);
  EXPECT_EQ(std::vector<int>(out, out + 2), (std::vector<int>{1, 2}));
}

TEST(FaultStage, FullOutputHoldsTheRestForTheNextRelease) {
  Tracker t;
  Stage s(FaultSpec{}, TrackOps{&t});
  int in[] = {1, 2, 3, 4, 5};
  int out[8] = {};
  EXPECT_EQ(s.process(in, 5, out, 2, 100), 2u);
  EXPECT_EQ(s.held(), 3u);
  EXPECT_EQ(s.counters().deferred, 3u);
  EXPECT_EQ(s.next_release(), std::optional<uint64_t>(100));
  EXPECT_EQ(s.release(100, out, 8), 3u);
  EXPECT_EQ(std::vector<int>(out, out + 3), (std::vector<int>{3, 4, 5}));
  EXPECT_TRUE(t.frees.empty());
}

TEST(FaultStage, OutputAndHoldQueueBothFullFreeAndCountLost) {
  Tracker t;
  Stage s(FaultSpec{.duplicate = 1.0}, TrackOps{&t}, 1);
  int in[] = {1, 2, 3};
  int out[4] = {};
  // 1, c1, 2, c2, 3, c3 leave; out holds 2, the queue 1, the other 3 are freed.
  EXPECT_EQ(s.process(in, 3, out, 2, 0), 2u);
  EXPECT_EQ(s.held(), 1u);
  EXPECT_EQ(s.counters().deferred, 1u);
  EXPECT_EQ(s.counters().lost, 3u);
  EXPECT_EQ(t.frees.size(), 3u);
}

TEST(FaultStage, DrainFreesEveryHeldPacketOnce) {
  Tracker t;
  Stage s(FaultSpec{.delay_ns = 1'000'000'000}, TrackOps{&t});
  std::vector<int> in(100), out(100);
  for (int i = 0; i < 100; ++i) in[i] = i + 1;
  EXPECT_EQ(s.process(in.data(), 100, out.data(), 100, 0), 0u);
  s.drain();
  EXPECT_EQ(s.held(), 0u);
  EXPECT_EQ(s.counters().drained, 100u);
  ASSERT_EQ(t.frees.size(), 100u);
  for (const auto& [h, k] : t.frees) EXPECT_EQ(k, 1) << h;
  expect_conserved({}, t, 100);
}

TEST(FaultStage, DestructorFreesWhatIsStillHeld) {
  Tracker t;
  {
    Stage s(FaultSpec{.delay_ns = 1000}, TrackOps{&t});
    int in[] = {1, 2};
    int out[2];
    s.process(in, 2, out, 2, 0);
  }
  EXPECT_EQ(t.frees, (std::map<int, int>{{1, 1}, {2, 1}}));
}

TEST(FaultStage, EveryHandleIsOutputOrFreedExactlyOnceUnderAllFaultsAndTightBuffers) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Tracker t;
    t.clone_budget = static_cast<int>(seed * 7);
    const FaultSpec spec{.drop = 0.1,
                         .duplicate = 0.2,
                         .reorder = 0.2,
                         .delay_ns = seed % 2 ? 2000u : 0u,
                         .seed = seed};
    std::vector<Out> got;
    {
      Stage s(spec, TrackOps{&t}, seed * 3);
      got = run(s, 2000, 1 + seed % 8, 700, 1 + seed % 5);
      EXPECT_EQ(s.held(), 0u);
      const FaultCounters& c = s.counters();
      EXPECT_EQ(c.passed + c.dropped, 2000u);
      EXPECT_EQ(got.size() + c.lost, c.passed + c.duplicated);
    }
    SCOPED_TRACE(seed);
    expect_conserved(got, t, 2000);
  }
}

}  // namespace
}  // namespace epic::switching
