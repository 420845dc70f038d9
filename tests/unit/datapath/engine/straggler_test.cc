// Straggler (datapath/engine/straggler.h): the lag buckets and quantiles, who is counted last,
// the slot table keyed by group PSN, and the halving that keeps the quantiles recent.
#include "datapath/engine/straggler.h"

#include <gtest/gtest.h>

namespace epic::engine {
namespace {

StragglerState timed(size_t slots) {
  StragglerState s;
  s.first.resize(slots);
  return s;
}

TEST(Straggler, LagBucketsAreLog2FromOneMicrosecond) {
  EXPECT_EQ(lag_bucket(0), 0u);
  EXPECT_EQ(lag_bucket(1023), 0u);
  EXPECT_EQ(lag_bucket(1024), 1u);
  EXPECT_EQ(lag_bucket(2047), 1u);
  EXPECT_EQ(lag_bucket(2048), 2u);
  EXPECT_EQ(lag_bucket(1'000'000), 10u);  // 976 units of 1024 ns: [2^19, 2^20) ns
  EXPECT_EQ(lag_bucket(UINT64_MAX), kLagBuckets - 1);
  EXPECT_EQ(lag_bucket_bound_ns(0), 1024u);
  EXPECT_EQ(lag_bucket_bound_ns(10), uint64_t{1} << 20);
  // Every lag lies below its bucket's bound (but the last bucket's).
  for (uint64_t ns : {0ull, 5ull, 1500ull, 70'000ull, 3'000'000ull}) {
    EXPECT_LT(ns, lag_bucket_bound_ns(lag_bucket(ns))) << ns;
  }
}

TEST(Straggler, QuantilesAreBucketBounds) {
  LagHistogram h{};
  EXPECT_EQ(lag_quantile(h, 0, 0.5), 0u);
  h[0] = 98;
  h[12] = 2;
  EXPECT_EQ(lag_quantile(h, 100, 0.5), 1024u);
  EXPECT_EQ(lag_quantile(h, 100, 0.98), 1024u);
  EXPECT_EQ(lag_quantile(h, 100, 0.99), uint64_t{1} << 22);
}

TEST(Straggler, TheChildThatCompletesASlotIsLastAndTheOthersLagBehindTheFirst) {
  StragglerState s = timed(8);
  // Slot of group PSN 100: child 1 first at t=1000, child 0 at 6000, child 2 completes at 501000.
  time_contribution(s, 100, 1, false, 3, 1000);
  time_contribution(s, 100, 0, false, 3, 6000);
  time_contribution(s, 100, 2, true, 3, 501'000);
  EXPECT_EQ(s.last[2], 1u);
  EXPECT_EQ(s.last[0] + s.last[1], 0u);
  const vocab::ChildTiming late = child_timing(s, 2);
  EXPECT_EQ(late.lag_samples, 1u);
  EXPECT_EQ(late.lag_p50_ns, uint64_t{1} << 19);                // 500 us lies in [2^18, 2^19) ns
  EXPECT_EQ(child_timing(s, 1).lag_p50_ns, 1024u);              // the first: lag 0
  EXPECT_EQ(child_timing(s, 0).lag_p50_ns, uint64_t{1} << 13);  // 5 us
  // PSN 108 maps to the same entry: a new slot, timed from its own first contribution.
  time_contribution(s, 108, 0, false, 2, 900'000);
  time_contribution(s, 108, 1, true, 2, 900'500);
  EXPECT_EQ(s.last[1], 1u);
  EXPECT_EQ(child_timing(s, 1).lag_samples, 2u);
  EXPECT_EQ(child_timing(s, 1).lag_p99_ns, 1024u);
}

TEST(Straggler, FanInOneAndUntimedGroupsAreNotCounted) {
  StragglerState s = timed(8);
  time_contribution(s, 1, 0, true, 1, 10);
  EXPECT_EQ(s.last[0], 0u);
  EXPECT_EQ(s.samples[0], 0u);
  StragglerState none;
  time_contribution(none, 1, 0, true, 4, 10);
  EXPECT_EQ(none.last[0], 0u);
}

TEST(Straggler, AFullHistogramIsHalvedSoItsQuantilesFollowRecentLags) {
  StragglerState s = timed(2);
  uint32_t psn = 0;
  // Long ago: child 1 always 100 us behind child 0.
  for (uint32_t k = 0; k + 1 < kLagDecayAt; ++k, ++psn) {
    time_contribution(s, psn, 0, false, 2, uint64_t{psn} * 1'000'000);
    time_contribution(s, psn, 1, true, 2, uint64_t{psn} * 1'000'000 + 100'000);
  }
  EXPECT_EQ(child_timing(s, 1).lag_p50_ns, uint64_t{1} << 17);
  // Recently: no lag at all. The halving lets the recent lags take over the median.
  for (uint32_t k = 0; k < kLagDecayAt; ++k, ++psn) {
    time_contribution(s, psn, 0, false, 2, uint64_t{psn} * 1'000'000);
    time_contribution(s, psn, 1, true, 2, uint64_t{psn} * 1'000'000);
  }
  EXPECT_LT(child_timing(s, 1).lag_samples, kLagDecayAt);
  EXPECT_EQ(child_timing(s, 1).lag_p50_ns, 1024u);
  // "last" counts are never halved; the recent slots completed in one burst are ties.
  EXPECT_EQ(s.last[1], uint64_t{kLagDecayAt} - 1);
}

TEST(Straggler, ASlotCompletedInTheBurstOfItsPreviousContributionIsATie) {
  StragglerState s = timed(4);
  EXPECT_EQ(time_contribution(s, 7, 0, false, 3, 100), Timed::kAdded);
  EXPECT_EQ(time_contribution(s, 7, 1, false, 3, 900), Timed::kAdded);
  // Child 2 in the same burst as child 1: the order within a burst says nothing.
  EXPECT_EQ(time_contribution(s, 7, 2, true, 3, 900), Timed::kTied);
  EXPECT_EQ(s.last[0] + s.last[1] + s.last[2], 0u);
  EXPECT_EQ(time_contribution(s, 8, 0, false, 2, 1000), Timed::kAdded);
  EXPECT_EQ(time_contribution(s, 8, 1, true, 2, 1001), Timed::kLast);
  EXPECT_EQ(s.last[1], 1u);
  EXPECT_EQ(time_contribution(s, 9, 0, true, 1, 1001), Timed::kNot);
}

}  // namespace
}  // namespace epic::engine
