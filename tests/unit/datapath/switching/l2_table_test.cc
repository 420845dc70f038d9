#include "datapath/switching/l2_table.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace epic::switching {
namespace {

constexpr uint64_t kAging = 300'000'000'000;  // 300 s

vocab::MacAddr host(uint32_t n) {
  return {0x02,
          0x00,
          static_cast<uint8_t>(n >> 24),
          static_cast<uint8_t>(n >> 16),
          static_cast<uint8_t>(n >> 8),
          static_cast<uint8_t>(n)};
}

TEST(L2Table, CapacityIsRoundedUpToAPowerOfTwoOfAtLeastOneBucket) {
  EXPECT_EQ(L2Table(100, kAging).capacity(), 128u);
  EXPECT_EQ(L2Table(4096, kAging).capacity(), 4096u);
  EXPECT_EQ(L2Table(1, kAging).capacity(), L2Table::kBucketSlots);
  EXPECT_EQ(L2Table(0, kAging).capacity(), L2Table::kBucketSlots);
}

TEST(L2Table, LearnedMacIsFoundOnItsPortAndUnknownMacIsNot) {
  L2Table t(64, kAging);
  t.learn(host(1), 3, 1000);
  t.learn(host(2), 7, 1000);
  EXPECT_EQ(t.lookup(host(1), 2000), std::optional<uint16_t>(3));
  EXPECT_EQ(t.lookup(host(2), 2000), std::optional<uint16_t>(7));
  EXPECT_EQ(t.lookup(host(3), 2000), std::nullopt);
  EXPECT_EQ(t.size(2000), 2u);
  EXPECT_EQ(t.counters().learned, 2u);
}

TEST(L2Table, MulticastBroadcastAndZeroSourceMacsAreNotLearned) {
  L2Table t(64, kAging);
  t.learn({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 1, 0);
  t.learn({0x01, 0x00, 0x5E, 0x00, 0x00, 0x01}, 1, 0);  // IPv4 multicast
  t.learn({0x33, 0x33, 0x00, 0x00, 0x00, 0x01}, 1, 0);  // IPv6 multicast
  t.learn({0, 0, 0, 0, 0, 0}, 1, 0);
  EXPECT_EQ(t.size(0), 0u);
  EXPECT_EQ(t.counters().learned, 0u);
  EXPECT_EQ(t.lookup({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 0), std::nullopt);
}

TEST(L2Table, RefreshOnTheSamePortBumpsNoCounterAndRestartsAging) {
  L2Table t(64, 1000);
  t.learn(host(1), 4, 0);
  t.learn(host(1), 4, 900);
  t.learn(host(1), 4, 1800);
  EXPECT_EQ(t.lookup(host(1), 2700), std::optional<uint16_t>(4));  // 3x aging after first learn
  const L2Counters& c = t.counters();
  EXPECT_EQ(c.learned, 1u);
  EXPECT_EQ(c.moved, 0u);
  EXPECT_EQ(c.aged_out, 0u);
  EXPECT_EQ(t.size(2700), 1u);
}

TEST(L2Table, MacSeenOnAnotherPortMovesAndCountsMoved) {
  L2Table t(64, kAging);
  t.learn(host(1), 1, 0);
  t.learn(host(1), 2, 10);
  EXPECT_EQ(t.lookup(host(1), 20), std::optional<uint16_t>(2));
  EXPECT_EQ(t.counters().moved, 1u);
  EXPECT_EQ(t.counters().learned, 1u);
  EXPECT_EQ(t.size(20), 1u);
}

TEST(L2Table, EntryAgesOutOnceOlderThanAgingNs) {
  L2Table t(64, 1000);
  t.learn(host(1), 5, 100);
  EXPECT_EQ(t.lookup(host(1), 1100), std::optional<uint16_t>(5));  // exactly aging_ns old
  EXPECT_EQ(t.lookup(host(1), 1101), std::nullopt);
  EXPECT_EQ(t.size(1100), 1u);
  EXPECT_EQ(t.size(1101), 0u);
}

TEST(L2Table, ClockBehindTheEntryDoesNotAgeIt) {
  L2Table t(64, 1000);
  t.learn(host(1), 5, 10'000);
  EXPECT_EQ(t.lookup(host(1), 5'000), std::optional<uint16_t>(5));
}

TEST(L2Table, AgingZeroMeansEntriesNeverAge) {
  L2Table t(64, 0);
  t.learn(host(1), 5, 0);
  EXPECT_EQ(t.lookup(host(1), ~uint64_t{0}), std::optional<uint16_t>(5));
}

TEST(L2Table, AgedMacLearnedAgainCountsAgedOutAndLearned) {
  L2Table t(64, 1000);
  t.learn(host(1), 5, 0);
  t.learn(host(1), 6, 5000);
  EXPECT_EQ(t.lookup(host(1), 5000), std::optional<uint16_t>(6));
  EXPECT_EQ(t.counters().aged_out, 1u);
  EXPECT_EQ(t.counters().learned, 2u);
  EXPECT_EQ(t.counters().moved, 0u);  // the old entry was dead: not a move
}

TEST(L2Table, FullTableCountsTableFullAndKeepsWhatItHas) {
  L2Table t(8, kAging);  // a single bucket
  for (uint32_t i = 0; i < 8; ++i) t.learn(host(i + 1), static_cast<uint16_t>(i), 0);
  t.learn(host(100), 9, 1);
  t.learn(host(101), 9, 1);
  EXPECT_EQ(t.counters().table_full, 2u);
  EXPECT_EQ(t.counters().learned, 8u);
  EXPECT_EQ(t.lookup(host(100), 2), std::nullopt);
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(t.lookup(host(i + 1), 2), std::optional<uint16_t>(i)) << i;
  }
  // A known MAC still refreshes and moves in a full table.
  t.learn(host(3), 42, 3);
  EXPECT_EQ(t.lookup(host(3), 4), std::optional<uint16_t>(42));
  EXPECT_EQ(t.counters().table_full, 2u);
}

TEST(L2Table, ExpiredEntriesAreReusedWhenTheTableIsFull) {
  L2Table t(8, 1000);
  for (uint32_t i = 0; i < 8; ++i) t.learn(host(i + 1), 1, 0);
  t.learn(host(2), 1, 900);  // keep one alive
  t.learn(host(100), 2, 1500);
  EXPECT_EQ(t.counters().table_full, 0u);
  EXPECT_EQ(t.counters().aged_out, 1u);
  EXPECT_EQ(t.lookup(host(100), 1600), std::optional<uint16_t>(2));
  EXPECT_EQ(t.lookup(host(2), 1600), std::optional<uint16_t>(1));
  EXPECT_EQ(t.size(1600), 2u);
}

TEST(L2Table, FlushPortForgetsOnlyThatPort) {
  L2Table t(64, kAging);
  t.learn(host(1), 1, 0);
  t.learn(host(2), 2, 0);
  t.learn(host(3), 1, 0);
  t.flush_port(1);
  EXPECT_EQ(t.lookup(host(1), 1), std::nullopt);
  EXPECT_EQ(t.lookup(host(3), 1), std::nullopt);
  EXPECT_EQ(t.lookup(host(2), 1), std::optional<uint16_t>(2));
  EXPECT_EQ(t.counters().flushed, 2u);
  EXPECT_EQ(t.size(1), 1u);
  t.learn(host(1), 3, 2);  // relearned after the flush
  EXPECT_EQ(t.lookup(host(1), 2), std::optional<uint16_t>(3));
}

TEST(L2Table, TwoChoiceHashingFillsMostOfTheTableBeforeRefusing) {
  L2Table t(4096, kAging);
  std::mt19937_64 rng(7);
  std::vector<vocab::MacAddr> macs;
  for (int i = 0; i < 3686; ++i) {  // 90% load
    const uint64_t r = rng();
    vocab::MacAddr m{};
    for (int b = 0; b < 6; ++b) m[b] = static_cast<uint8_t>(r >> (8 * b));
    m[0] = static_cast<uint8_t>((m[0] & 0xFE) | 0x02);  // unicast, locally administered
    macs.push_back(m);
    t.learn(m, static_cast<uint16_t>(i % 48), 0);
  }
  EXPECT_LE(t.counters().table_full, 37u);  // at most 1% refused at 90% load
  size_t found = 0;
  for (size_t i = 0; i < macs.size(); ++i) {
    const auto p = t.lookup(macs[i], 1);
    if (p) {
      EXPECT_EQ(*p, i % 48);
      ++found;
    }
  }
  EXPECT_EQ(found, t.counters().learned);
  EXPECT_EQ(t.size(1), found);
}

}  // namespace
}  // namespace epic::switching
