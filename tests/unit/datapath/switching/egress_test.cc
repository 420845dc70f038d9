// Egress (datapath/switching/egress.h): classification by DSCP, strict priority, weighted
// shares, the line rate and class maximum rates, CE marking at the configured depth, tail drop.
// Frames are ints indexing a table of (length, TOS); the expectations are arithmetic on the
// spec (rates x time, weight ratios), not a replay of the scheduler's own code.
#include "datapath/switching/egress.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace epic::switching {
namespace {

struct Frame {
  uint32_t length;
  uint8_t tos;
  bool freed = false;
};

struct IntOps {
  std::vector<Frame>* frames;
  uint32_t length(int p) const { return (*frames)[static_cast<size_t>(p)].length; }
  uint8_t tos(int p) const { return (*frames)[static_cast<size_t>(p)].tos; }
  bool mark_ce(int p) const {
    uint8_t& tos = (*frames)[static_cast<size_t>(p)].tos;
    if ((tos & 3) == 0) return false;  // Not-ECT
    tos |= 3;
    return true;
  }
  void free(int p) const { (*frames)[static_cast<size_t>(p)].freed = true; }
};

using IntEgress = Egress<int, IntOps>;

constexpr uint8_t kEf = 46, kBulk = 10;
constexpr uint8_t kEct0 = 2;

// Two classes: 0 (DSCP 46, "latency"), 1 (everything else, "bulk").
EgressSpec two_classes(ClassSpec latency, ClassSpec bulk) {
  EgressSpec s;
  s.classes = {latency, bulk};
  s.class_of_dscp.fill(1);
  s.class_of_dscp[kEf] = 0;
  return s;
}

class EgressTest : public ::testing::Test {
 protected:
  int frame(uint32_t length, uint8_t dscp, uint8_t ecn = 0) {
    frames.push_back({length, static_cast<uint8_t>(dscp << 2 | ecn)});
    return static_cast<int>(frames.size() - 1);
  }
  std::vector<int> take(IntEgress& e, uint64_t now, size_t cap = 1024) {
    std::vector<int> out(cap);
    out.resize(e.dequeue(now, out.data(), cap));
    return out;
  }
  std::vector<Frame> frames;
};

TEST_F(EgressTest, ClassifiesByDscpAndServesInOrderWithinAClass) {
  IntEgress e(two_classes({}, {}), IntOps{&frames});
  const int a = frame(100, kBulk), b = frame(100, 0), c = frame(100, kEf);
  EXPECT_EQ(e.class_of(a), 1u);
  EXPECT_EQ(e.class_of(b), 1u);
  EXPECT_EQ(e.class_of(c), 0u);
  e.enqueue(a);
  e.enqueue(b);
  EXPECT_EQ(e.counters(1).queue_frames, 2u);
  EXPECT_EQ(e.counters(1).queue_bytes, 200u);
  EXPECT_EQ(take(e, 1), (std::vector<int>{a, b}));
  EXPECT_EQ(e.counters(1).sent, 2u);
  EXPECT_EQ(e.counters(1).sent_bytes, 200u);
  EXPECT_EQ(e.counters(1).queue_bytes, 0u);
  EXPECT_EQ(e.queued_frames(), 0u);
}

TEST_F(EgressTest, StrictPriorityServesTheHigherLevelFirst) {
  ClassSpec high, low;
  high.priority = 0;
  low.priority = 1;
  IntEgress e(two_classes(high, low), IntOps{&frames});
  std::vector<int> bulk, ef;
  for (int i = 0; i < 10; ++i) bulk.push_back(frame(1000, kBulk));
  for (int i = 0; i < 3; ++i) ef.push_back(frame(100, kEf));
  for (int f : bulk) e.enqueue(f);
  for (int f : ef) e.enqueue(f);  // arrive last, leave first
  const std::vector<int> out = take(e, 1);
  ASSERT_EQ(out.size(), 13u);
  EXPECT_EQ(std::vector<int>(out.begin(), out.begin() + 3), ef);
  EXPECT_EQ(std::vector<int>(out.begin() + 3, out.end()), bulk);
}

TEST_F(EgressTest, WeightsShareALevelInProportion) {
  ClassSpec a, b;
  a.weight = 3;
  b.weight = 1;
  a.queue_bytes = b.queue_bytes = 64 << 20;
  IntEgress e(two_classes(a, b), IntOps{&frames});
  for (int i = 0; i < 4000; ++i) {
    e.enqueue(frame(1024, kEf));
    e.enqueue(frame(1024, kBulk));
  }
  // Take 2,000 frames while both classes stay backlogged: 3:1 by bytes, within a quantum each.
  std::vector<int> out;
  while (out.size() < 2000) {
    for (int f : take(e, 1, 2000 - out.size())) out.push_back(f);
  }
  uint64_t bytes[2] = {0, 0};
  for (int f : out) bytes[e.class_of(f)] += frames[static_cast<size_t>(f)].length;
  const double share = static_cast<double>(bytes[0]) / static_cast<double>(bytes[0] + bytes[1]);
  EXPECT_NEAR(share, 0.75, 0.01) << bytes[0] << " vs " << bytes[1];
}

TEST_F(EgressTest, TheLineRateBoundsWhatLeaves) {
  EgressSpec s = two_classes({}, {});
  s.port_rate_bps = 1'000'000'000;  // 125 bytes per microsecond
  s.classes[1].queue_bytes = 64 << 20;
  IntEgress e(s, IntOps{&frames});
  for (int i = 0; i < 20000; ++i) e.enqueue(frame(1000, kBulk));
  // 10 ms in 10-us loops: 1,250,000 bytes plus at most the bucket (2 jumbo frames) and the one
  // frame a bucket may overdraw.
  uint64_t bytes = 0;
  for (uint64_t t = 1; t <= 1000; ++t) {
    for (int f : take(e, t * 10'000)) bytes += frames[static_cast<size_t>(f)].length;
  }
  EXPECT_GE(bytes, 1'250'000u - 1000);
  EXPECT_LE(bytes, 1'250'000u + 2 * 9216 + 1000);
}

TEST_F(EgressTest, AClassMaximumRateLeavesTheRestToOthers) {
  ClassSpec capped, other;
  capped.max_rate_bps = 100'000'000;  // 12.5 bytes per microsecond
  capped.queue_bytes = other.queue_bytes = 64 << 20;
  IntEgress e(two_classes(capped, other), IntOps{&frames});
  for (int i = 0; i < 5000; ++i) {
    e.enqueue(frame(500, kEf));
    e.enqueue(frame(500, kBulk));
  }
  uint64_t bytes[2] = {0, 0};
  for (uint64_t t = 1; t <= 100; ++t) {  // 1 ms
    for (int f : take(e, t * 10'000, 16))
      bytes[e.class_of(f)] += frames[static_cast<size_t>(f)].length;
  }
  EXPECT_LE(bytes[0], 12'500u + 2 * 9216 + 500);  // 1 ms at 100 Mb/s, plus the bucket
  EXPECT_GE(bytes[0], 12'500u - 500);
  EXPECT_EQ(bytes[1], 100u * 16 * 500 - bytes[0]);  // the port took 16 a loop: the rest is bulk
}

TEST_F(EgressTest, MarksCePastTheThresholdOnlyOnEcnCapableFrames) {
  ClassSpec latency, bulk;
  bulk.ecn_threshold_bytes = 3000;
  IntEgress e(two_classes(latency, bulk), IntOps{&frames});
  std::vector<int> ect, plain;
  for (int i = 0; i < 5; ++i) {
    ect.push_back(frame(1000, kBulk, kEct0));
    e.enqueue(ect.back());
  }
  plain.push_back(frame(1000, kBulk, 0));
  e.enqueue(plain.back());
  // Depth before each ECT frame: 0, 1000, 2000, 3000, 4000 -> the 4th and 5th are marked.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(frames[static_cast<size_t>(ect[static_cast<size_t>(i)])].tos & 3, i < 3 ? kEct0 : 3)
        << i;
  }
  EXPECT_EQ(frames[static_cast<size_t>(plain[0])].tos & 3, 0);  // Not-ECT stays unmarked
  EXPECT_EQ(e.counters(1).ce_marked, 2u);
  EXPECT_EQ(e.counters(1).peak_queue_bytes, 6000u);
  // The latency class has no threshold: never marked however deep.
  for (int i = 0; i < 10; ++i) e.enqueue(frame(1000, kEf, kEct0));
  EXPECT_EQ(e.counters(0).ce_marked, 0u);
}

TEST_F(EgressTest, AFullQueueDropsAndCountsAndDrainFreesTheRest) {
  ClassSpec latency, bulk;
  bulk.queue_bytes = 2500;
  std::vector<int> in;
  {
    IntEgress e(two_classes(latency, bulk), IntOps{&frames});
    for (int i = 0; i < 4; ++i) {
      in.push_back(frame(1000, kBulk));
      e.enqueue(in.back());
    }
    EXPECT_EQ(e.counters(1).enqueued, 2u);
    EXPECT_EQ(e.counters(1).dropped, 2u);
    EXPECT_TRUE(frames[static_cast<size_t>(in[2])].freed);
    EXPECT_TRUE(frames[static_cast<size_t>(in[3])].freed);
    EXPECT_FALSE(frames[static_cast<size_t>(in[0])].freed);
  }  // the destructor drains
  EXPECT_TRUE(frames[static_cast<size_t>(in[0])].freed);
  EXPECT_TRUE(frames[static_cast<size_t>(in[1])].freed);
}

TEST_F(EgressTest, DisabledWithoutClasses) {
  EXPECT_FALSE(EgressSpec{}.enabled());
  EXPECT_TRUE(two_classes({}, {}).enabled());
}

}  // namespace
}  // namespace epic::switching
