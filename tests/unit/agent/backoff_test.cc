#include "agent/client/backoff.h"

#include <gtest/gtest.h>

namespace epic::agent {
namespace {

using ms = std::chrono::milliseconds;

TEST(Backoff, DoublesFromInitialToMaxWithoutJitter) {
  Backoff b(ms{100}, ms{1000}, 0.0, 1);
  std::vector<int64_t> got;
  for (int i = 0; i < 6; ++i) got.push_back(b.next().count());
  EXPECT_EQ(got, (std::vector<int64_t>{100, 200, 400, 800, 1000, 1000}));
  b.reset();
  EXPECT_EQ(b.next(), ms{100});
}

TEST(Backoff, JitterStaysWithinItsBoundAndNeverAboveMax) {
  Backoff b(ms{100}, ms{1000}, 0.25, 7);
  int64_t nominal = 100;
  for (int i = 0; i < 200; ++i) {
    const int64_t d = b.next().count();
    EXPECT_LE(d, nominal);
    EXPECT_GE(d, nominal * 3 / 4);
    nominal = std::min<int64_t>(1000, nominal * 2);
  }
}

TEST(Backoff, TwoSeedsDrawDifferentDelays) {
  Backoff a(ms{1000}, ms{1000}, 0.5, 1), b(ms{1000}, ms{1000}, 0.5, 2);
  int same = 0;
  for (int i = 0; i < 20; ++i) same += a.next() == b.next();
  EXPECT_LT(same, 5);
}

}  // namespace
}  // namespace epic::agent
