// The timer wheel (timer_wheel.h): timers expire at the first tick boundary at or after their
// deadline — never early — also a round or many rounds away; cancel and re-arm; a callback that
// re-arms its own timer (a periodic retransmission timer); at most `max` callbacks per call,
// the rest on the next; a clock that jumps far ahead or goes back. Wheel of 8 buckets of 100 ns
// unless said otherwise; times are worked out by hand.
#include "datapath/engine/timer_wheel.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace epic::engine {
namespace {

constexpr uint64_t kTick = 100;

// The nodes expired by one call, as indexes into `nodes`.
template <size_t N>
std::vector<size_t> expire(TimerWheel& w, uint64_t now, std::array<TimerNode, N>& nodes,
                           size_t max = 1000) {
  std::vector<size_t> out;
  w.expire(now, max, [&](TimerNode& n) { out.push_back(static_cast<size_t>(&n - nodes.data())); });
  return out;
}

TEST(TimerWheel, NeverEarlyAtMostOneTickLate) {
  TimerWheel w(8, kTick, 1000);
  std::array<TimerNode, 3> n;
  w.arm(n[0], 1000, 250);  // deadline 1250: the boundary at 1300
  w.arm(n[1], 1000, 300);  // deadline 1300: exactly a boundary
  w.arm(n[2], 1000, 1);    // deadline 1001: 1100
  EXPECT_EQ(w.armed(), 3u);
  EXPECT_TRUE(expire(w, 1099, n).empty());
  EXPECT_EQ(expire(w, 1100, n), std::vector<size_t>{2});
  EXPECT_TRUE(expire(w, 1299, n).empty());
  const std::vector<size_t> both = expire(w, 1300, n);
  EXPECT_EQ(both.size(), 2u);
  EXPECT_EQ(w.armed(), 0u);
  EXPECT_FALSE(n[0].armed());
}

TEST(TimerWheel, DeadlinesRoundsAwayWaitTheirRound) {
  TimerWheel w(8, kTick, 0);
  std::array<TimerNode, 2> n;
  w.arm(n[0], 0, 2000);   // tick 20: bucket 4, passed at ticks 4 and 12 first
  w.arm(n[1], 0, 80000);  // tick 800: a hundred rounds
  for (uint64_t t = 100; t < 2000; t += 100) ASSERT_TRUE(expire(w, t, n).empty()) << t;
  EXPECT_EQ(expire(w, 2000, n), std::vector<size_t>{0});
  EXPECT_TRUE(expire(w, 79999, n).empty());  // a jump of many rounds: every bucket once
  EXPECT_EQ(expire(w, 80000, n), std::vector<size_t>{1});
}

TEST(TimerWheel, CancelAndRearm) {
  TimerWheel w(8, kTick, 0);
  std::array<TimerNode, 2> n;
  w.arm(n[0], 0, 300);
  w.arm(n[1], 0, 300);
  w.cancel(n[0]);
  w.cancel(n[0]);  // twice: nothing
  EXPECT_EQ(w.armed(), 1u);
  w.arm(n[1], 0, 500);  // moved later
  EXPECT_TRUE(expire(w, 400, n).empty());
  EXPECT_EQ(expire(w, 500, n), std::vector<size_t>{1});
  w.arm(n[0], 500, 0);  // now: the next tick the wheel looks at
  EXPECT_EQ(expire(w, 600, n), std::vector<size_t>{0});
}

TEST(TimerWheel, ACallbackMayRearmItsOwnTimer) {
  TimerWheel w(8, kTick, 0);
  std::array<TimerNode, 1> n;
  w.arm(n[0], 0, 300);
  int fired = 0;
  uint64_t last = 0;
  for (uint64_t t = 0; t <= 3000; t += 50) {
    w.expire(t, 10, [&](TimerNode& node) {
      ++fired;
      last = t;
      w.arm(node, t, 300);  // every 300 ns
    });
  }
  EXPECT_EQ(fired, 10);  // at 300, 600, ..., 3000
  EXPECT_EQ(last, 3000u);
  EXPECT_EQ(w.armed(), 1u);
}

TEST(TimerWheel, AtMostMaxCallbacksPerCallTheRestNextTime) {
  TimerWheel w(8, kTick, 0);
  std::array<TimerNode, 10> n;
  for (size_t k = 0; k < n.size(); ++k) w.arm(n[k], 0, 100 * (k % 3 + 1));  // ticks 1, 2, 3
  EXPECT_EQ(expire(w, 1000, n, 3).size(), 3u);
  EXPECT_EQ(expire(w, 1000, n, 3).size(), 3u);
  EXPECT_EQ(expire(w, 1000, n, 3).size(), 3u);
  EXPECT_EQ(expire(w, 1000, n, 3).size(), 1u);
  EXPECT_EQ(w.armed(), 0u);
  EXPECT_EQ(expire(w, 1000, n, 0).size(), 0u);
}

TEST(TimerWheel, AClockThatGoesBackExpiresNothingEarly) {
  TimerWheel w(8, kTick, 1000);
  std::array<TimerNode, 1> n;
  w.arm(n[0], 1000, 200);  // 1200
  EXPECT_TRUE(expire(w, 500, n).empty());
  EXPECT_TRUE(expire(w, 1100, n).empty());
  EXPECT_EQ(expire(w, 1200, n), std::vector<size_t>{0});
}

TEST(TimerWheel, ABucketCountThatIsNotAPowerOfTwoIsRoundedDown) {
  TimerWheel w(12, kTick, 0);  // 8 buckets
  std::array<TimerNode, 2> n;
  w.arm(n[0], 0, 800);   // tick 8: bucket 0 of 8
  w.arm(n[1], 0, 1200);  // tick 12
  EXPECT_TRUE(expire(w, 700, n).empty());
  EXPECT_EQ(expire(w, 800, n), std::vector<size_t>{0});
  EXPECT_EQ(expire(w, 1200, n), std::vector<size_t>{1});
}

}  // namespace
}  // namespace epic::engine
