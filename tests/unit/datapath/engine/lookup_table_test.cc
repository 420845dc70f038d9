// LookupTable: the flat (IPv4, QPN) -> route table. Fixed cases from the interface, then a
// seeded random sequence of inserts and erases in a table small enough to collide constantly,
// checked step by step against std::map (erase's backward shift must never lose an entry).
#include "datapath/engine/lookup_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

namespace epic::engine {
namespace {

GroupState* tag(uintptr_t n) { return reinterpret_cast<GroupState*>(n * 16); }

TEST(LookupTable, InsertFindErase) {
  LookupTable t(4);
  EXPECT_EQ(t.find(0x0A000001, 0x100), nullptr);
  EXPECT_TRUE(t.insert(0x0A000001, 0x100, {tag(1), 0}));
  EXPECT_TRUE(t.insert(0x0A000001, 0x101, {tag(1), -1}));
  ASSERT_NE(t.find(0x0A000001, 0x100), nullptr);
  EXPECT_EQ(t.find(0x0A000001, 0x100)->group, tag(1));
  EXPECT_EQ(t.find(0x0A000001, 0x101)->child, -1);
  EXPECT_EQ(t.find(0x0A000002, 0x100), nullptr);  // another address, same QPN
  EXPECT_EQ(t.size(), 2u);
  EXPECT_TRUE(t.erase(0x0A000001, 0x100));
  EXPECT_FALSE(t.erase(0x0A000001, 0x100));
  EXPECT_EQ(t.find(0x0A000001, 0x100), nullptr);
  EXPECT_NE(t.find(0x0A000001, 0x101), nullptr);
  EXPECT_EQ(t.size(), 1u);
}

TEST(LookupTable, RefusesDuplicatesTheEmptyKeyAndMoreThanItsCapacity) {
  LookupTable t(2);
  EXPECT_FALSE(t.insert(0, 0, {tag(1), 0}));  // (0.0.0.0, 0) marks an empty entry
  EXPECT_TRUE(t.insert(1, 1, {tag(1), 0}));
  EXPECT_FALSE(t.insert(1, 1, {tag(2), 1}));  // already an edge: unchanged
  EXPECT_EQ(t.find(1, 1)->group, tag(1));
  EXPECT_TRUE(t.insert(1, 2, {tag(1), 1}));
  EXPECT_FALSE(t.insert(1, 3, {tag(1), 2}));  // full
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.max_edges(), 2u);
}

TEST(LookupTable, QpnIsItsLow24Bits) {
  LookupTable t(4);
  EXPECT_TRUE(t.insert(7, 0x123456, {tag(1), 0}));
  EXPECT_NE(t.find(7, 0xFF123456), nullptr);  // the BTH carries 24 bits
}

TEST(LookupTable, RandomInsertsAndErasesMatchAMap) {
  for (size_t cap : {1u, 3u, 8u, 64u}) {
    LookupTable t(cap);
    std::map<std::pair<uint32_t, uint32_t>, Route> model;
    std::mt19937 rng(42 + static_cast<unsigned>(cap));
    for (int step = 0; step < 20000; ++step) {
      const uint32_t ip = 0x0A000000 + rng() % 4;
      const uint32_t qpn = 0x100 + rng() % 24;
      const auto k = std::make_pair(ip, qpn);
      if (rng() % 2 == 0) {
        const Route r{tag(1 + rng() % 50), static_cast<int16_t>(rng() % 64)};
        const bool want = model.count(k) == 0 && model.size() < cap;
        ASSERT_EQ(t.insert(ip, qpn, r), want) << "step " << step;
        if (want) model[k] = r;
      } else {
        ASSERT_EQ(t.erase(ip, qpn), model.erase(k) == 1) << "step " << step;
      }
      ASSERT_EQ(t.size(), model.size());
      if (step % 97 == 0) {
        for (uint32_t a = 0; a < 4; ++a) {
          for (uint32_t q = 0x100; q < 0x100 + 24; ++q) {
            const auto it = model.find({0x0A000000 + a, q});
            const Route* got = t.find(0x0A000000 + a, q);
            ASSERT_EQ(got != nullptr, it != model.end()) << "step " << step;
            if (got) {
              EXPECT_EQ(got->group, it->second.group);
              EXPECT_EQ(got->child, it->second.child);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace epic::engine
