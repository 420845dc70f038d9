// RecycleBuffer (recycle_buffer.h) frees a group's slots for the PSNs that reuse them, by two
// rules (docs/mode2.md). EPIC's: when PSN p completes, slot (p + MW) mod 2·MW — the one that held
// p − MW — is freed; not while a one-source packet (Broadcast, AllGather) lies at or after p − MW
// (GroupState::one_source_until), and that guard is forgotten once it is more than 2^22 behind,
// before the 24-bit comparison could wrap. The ACK frontier's: when the group's frontier moves
// from f0 to f1, every slot of a PSN in (f0, f1] that holds a PSN up to f1 is freed, at most
// 2·MW slots touched. A freed slot keeps its PSN and the rest of its fields: only its state
// becomes empty.
// The tables (a two-rank group, MW = 4, 8 slots; PSN p uses slot p mod 8): the slot of p − MW in
// every state, already free, unused, or holding another PSN; the one-source guard before, at
// and after p − MW, across the wrap, and its reset at exactly 2^22 (kept) and 2^22 + 1
// (forgotten); frontier spans of 0, 1, 2, 2·MW and more than 2·MW, slots of newer and older
// PSNs in the span, slots outside it, and spans across the 24-bit wrap.
#include "datapath/engine/recycle_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datapath/engine/group_instance.h"
#include "tests/unit/datapath/engine/engine_test_util.h"
#include "tests/unit/datapath/engine/slots_test_util.h"

namespace epic::engine {
namespace {

using slots_test::describe;
using slots_test::slot;
using S = SlotState;

constexpr uint32_t kWindow = 4;
constexpr uint32_t kSlots = 8;
constexpr uint32_t k2p22 = uint32_t{1} << 22;

struct Placed {
  uint32_t index;
  Slot slot;
};

// A slot holding `psn` in `state`, contributed to by two children: the fields a recycled slot
// must keep.
Slot held(uint32_t psn, SlotState state) { return slot(true, psn, state, 0x3, 2); }

struct Fixture {
  SlotRegion region{kWindow, 256};
  std::unique_ptr<GroupInstance> group;
  explicit Fixture(const std::vector<Placed>& slots) {
    std::string error;
    group = prepare_group(testing::two_rank_group(7, 0x3000, kWindow), &region, error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(region.nslots, kSlots);
    for (const Placed& p : slots) region.meta[p.index] = p.slot;
  }
  GroupState& g() { return group->state; }
  // Every slot against `expected` (the listed ones; the others as made).
  void expect_slots(const std::vector<Placed>& expected) {
    std::vector<Slot> want(kSlots);
    for (const Placed& p : expected) want[p.index] = p.slot;
    for (uint32_t k = 0; k < kSlots; ++k) {
      EXPECT_EQ(describe(region.meta[k]), describe(want[k])) << "slot " << k;
    }
  }
};

struct CompletedRow {
  const char* name;
  std::vector<Placed> before;
  std::optional<uint32_t> one_source_until;
  uint32_t completed;
  bool freed;
  std::vector<Placed> after;
  std::optional<uint32_t> one_source_until_after;
};

const std::vector<CompletedRow> kCompleted = {
    // p = 108: p − MW = 104, slot 0.
    {"108 completes: 104's slot (complete) is freed, its PSN and bitmap kept",
     {{0, held(104, S::kComplete)}},
     std::nullopt,
     108,
     true,
     {{0, held(104, S::kEmpty)}},
     std::nullopt},
    {"108 completes: 104's slot (sent up) is freed",
     {{0, held(104, S::kSentUp)}},
     std::nullopt,
     108,
     true,
     {{0, held(104, S::kEmpty)}},
     std::nullopt},
    {"108 completes: 104's slot (aggregating) is freed",
     {{0, held(104, S::kAggregating)}},
     std::nullopt,
     108,
     true,
     {{0, held(104, S::kEmpty)}},
     std::nullopt},
    {"104's slot already free: nothing freed",
     {{0, held(104, S::kEmpty)}},
     std::nullopt,
     108,
     false,
     {{0, held(104, S::kEmpty)}},
     std::nullopt},
    {"104's slot never used: nothing freed", {}, std::nullopt, 108, false, {}, std::nullopt},
    {"slot 0 holds an older PSN (96), not 104: kept",
     {{0, held(96, S::kComplete)}},
     std::nullopt,
     108,
     false,
     {{0, held(96, S::kComplete)}},
     std::nullopt},
    {"slot 0 already holds the newer 112: kept",
     {{0, held(112, S::kAggregating)}},
     std::nullopt,
     108,
     false,
     {{0, held(112, S::kAggregating)}},
     std::nullopt},
    {"only 104's slot: the slots of 100, 105 and 107 are not touched",
     {{4, held(100, S::kComplete)},
      {0, held(104, S::kComplete)},
      {1, held(105, S::kComplete)},
      {3, held(107, S::kComplete)}},
     std::nullopt,
     108,
     true,
     {{4, held(100, S::kComplete)},
      {0, held(104, S::kEmpty)},
      {1, held(105, S::kComplete)},
      {3, held(107, S::kComplete)}},
     std::nullopt},
    {"the first PSN (100) completes: 96 was never used",
     {{4, held(100, S::kComplete)}},
     std::nullopt,
     100,
     false,
     {{4, held(100, S::kComplete)}},
     std::nullopt},
    // Across the 24-bit wrap: 2 − 4 = 0xFFFFFE (slot 6), 3 − 4 = 0xFFFFFF (slot 7).
    {"wrap: 2 completes, 0xFFFFFE's slot is freed",
     {{6, held(0xFFFFFE, S::kComplete)}},
     std::nullopt,
     2,
     true,
     {{6, held(0xFFFFFE, S::kEmpty)}},
     std::nullopt},
    {"wrap: 3 completes, 0xFFFFFF's slot is freed",
     {{7, held(0xFFFFFF, S::kComplete)}, {6, held(0xFFFFFE, S::kComplete)}},
     std::nullopt,
     3,
     true,
     {{7, held(0xFFFFFF, S::kEmpty)}, {6, held(0xFFFFFE, S::kComplete)}},
     std::nullopt},
    {"wrap: 4 completes, 0's slot is freed",
     {{0, held(0, S::kComplete)}},
     std::nullopt,
     4,
     true,
     {{0, held(0, S::kEmpty)}},
     std::nullopt},

    // A one-source packet at or after p − MW: the frontier frees the slot, not this rule.
    {"one source until 105 (after 104): kept",
     {{0, held(104, S::kComplete)}},
     105,
     108,
     false,
     {{0, held(104, S::kComplete)}},
     105},
    {"one source until 104 (= p − MW): kept",
     {{0, held(104, S::kComplete)}},
     104,
     108,
     false,
     {{0, held(104, S::kComplete)}},
     104},
    {"one source until 200 (announced, far ahead): kept",
     {{0, held(104, S::kComplete)}},
     200,
     108,
     false,
     {{0, held(104, S::kComplete)}},
     200},
    {"one source until 103 (before 104): freed, the guard stays",
     {{0, held(104, S::kComplete)}},
     103,
     108,
     true,
     {{0, held(104, S::kEmpty)}},
     103},
    {"wrap: one source until 0xFFFFFF, 4 completes (0 is after it): freed",
     {{0, held(0, S::kComplete)}},
     0xFFFFFF,
     4,
     true,
     {{0, held(0, S::kEmpty)}},
     0xFFFFFF},
    {"wrap: one source until 2, 2 completes (0xFFFFFE is before it): kept",
     {{6, held(0xFFFFFE, S::kComplete)}},
     2,
     2,
     false,
     {{6, held(0xFFFFFE, S::kComplete)}},
     2},
    // The guard's reset: 104 − 2^22 = 0xC00068 (mod 2^24) is exactly 2^22 behind: kept (and 104
    // is after it, so freed); 0xC00067 is 2^22 + 1 behind: forgotten.
    {"one source until exactly 2^22 before p − MW: freed, the guard stays",
     {{0, held(104, S::kComplete)}},
     0xC00068,
     108,
     true,
     {{0, held(104, S::kEmpty)}},
     0xC00068},
    {"one source until 2^22 + 1 before p − MW: forgotten, freed",
     {{0, held(104, S::kComplete)}},
     0xC00067,
     108,
     true,
     {{0, held(104, S::kEmpty)}},
     std::nullopt},
    {"one source until 2^22 + 1 before, nothing to free: forgotten all the same",
     {},
     0xC00067,
     108,
     false,
     {},
     std::nullopt},
    {"wrap: one source until 2^22 + 1 before 0 (0xBFFFFF), 4 completes: forgotten, freed",
     {{0, held(0, S::kComplete)}},
     0xBFFFFF,
     4,
     true,
     {{0, held(0, S::kEmpty)}},
     std::nullopt},
};

TEST(RecycleBufferTable, EpicRuleAfterCompletion) {
  ASSERT_EQ(0xC00068u, (104u + (1u << 24) - k2p22));  // the hand-computed guards above
  ASSERT_EQ(0xBFFFFFu, ((1u << 24) - k2p22 - 1));
  for (const CompletedRow& r : kCompleted) {
    SCOPED_TRACE(r.name);
    Fixture f(r.before);
    f.g().one_source_until = r.one_source_until;
    EXPECT_EQ(recycle_completed(f.g(), r.completed), r.freed);
    f.expect_slots(r.after);
    EXPECT_EQ(f.g().one_source_until, r.one_source_until_after);
  }
}

struct AckedRow {
  const char* name;
  std::vector<Placed> before;
  uint32_t old_frontier;
  uint32_t frontier;
  uint32_t freed;
  std::vector<Placed> after;
};

// Slots 0..7 holding `first` … `first` + 7 in `state` (at index psn mod 8).
std::vector<Placed> run(uint32_t first, SlotState state) {
  std::vector<Placed> v;
  for (uint32_t k = 0; k < kSlots; ++k) {
    const uint32_t psn = (first + k) & 0xFFFFFF;
    v.push_back({psn % kSlots, held(psn, state)});
  }
  return v;
}
std::vector<Placed> with(std::vector<Placed> v, Placed p) {
  for (Placed& q : v) {
    if (q.index == p.index) q = p;
  }
  return v;
}

const std::vector<AckedRow> kAcked = {
    {"99 → 101: the slots of 100 and 101 are freed, 102's kept",
     {{4, held(100, S::kComplete)}, {5, held(101, S::kComplete)}, {6, held(102, S::kComplete)}},
     99,
     101,
     2,
     {{4, held(100, S::kEmpty)}, {5, held(101, S::kEmpty)}, {6, held(102, S::kComplete)}}},
    {"99 → 100: 100's slot, sent up, freed",
     {{4, held(100, S::kSentUp)}},
     99,
     100,
     1,
     {{4, held(100, S::kEmpty)}}},
    {"99 → 100: 100's slot, aggregating, freed",
     {{4, held(100, S::kAggregating)}},
     99,
     100,
     1,
     {{4, held(100, S::kEmpty)}}},
    {"101 → 101 (no move): nothing",
     {{4, held(100, S::kComplete)}, {5, held(101, S::kComplete)}},
     101,
     101,
     0,
     {{4, held(100, S::kComplete)}, {5, held(101, S::kComplete)}}},
    {"in the span, a slot already holding a newer PSN (109): kept",
     {{4, held(100, S::kComplete)}, {5, held(109, S::kAggregating)}},
     99,
     101,
     1,
     {{4, held(100, S::kEmpty)}, {5, held(109, S::kAggregating)}}},
    {"in the span, a slot still holding an older PSN (93): freed",
     {{4, held(100, S::kComplete)}, {5, held(93, S::kComplete)}},
     99,
     101,
     2,
     {{4, held(100, S::kEmpty)}, {5, held(93, S::kEmpty)}}},
    {"in the span, a slot already free: not counted",
     {{4, held(100, S::kEmpty)}, {5, held(101, S::kComplete)}},
     99,
     101,
     1,
     {{4, held(100, S::kEmpty)}, {5, held(101, S::kEmpty)}}},
    {"in the span, a slot never used: not counted",
     {{5, held(101, S::kComplete)}},
     99,
     101,
     1,
     {{5, held(101, S::kEmpty)}}},
    {"outside the span (slots of 98 and 99, at or before the old frontier): not visited",
     {{2, held(98, S::kComplete)}, {3, held(99, S::kComplete)}, {4, held(100, S::kComplete)}},
     99,
     100,
     1,
     {{2, held(98, S::kComplete)}, {3, held(99, S::kComplete)}, {4, held(100, S::kEmpty)}}},
    {"99 → 107 (span 2·MW): all 8 freed", run(100, S::kComplete), 99, 107, 8, run(100, S::kEmpty)},
    {"99 → 108 (span 2·MW + 1): every slot once, all 8 (101 … 108) freed", run(101, S::kComplete),
     99, 108, 8, run(101, S::kEmpty)},
    {"99 → 119 (span 20): every slot once, 112 … 119 freed", run(112, S::kComplete), 99, 119, 8,
     run(112, S::kEmpty)},
    {"99 → 119: slot 0 holding 120 (newer) kept, 7 freed",
     with(run(112, S::kComplete), {0, held(120, S::kAggregating)}), 99, 119, 7,
     with(run(112, S::kEmpty), {0, held(120, S::kAggregating)})},
    // Across the 24-bit wrap: 0xFFFFFE (slot 6), 0xFFFFFF (7), 0 (0), 1 (1).
    {"wrap: 0xFFFFFD → 1 frees 0xFFFFFE, 0xFFFFFF, 0 and 1",
     {{6, held(0xFFFFFE, S::kComplete)},
      {7, held(0xFFFFFF, S::kComplete)},
      {0, held(0, S::kComplete)},
      {1, held(1, S::kComplete)},
      {2, held(2, S::kAggregating)}},
     0xFFFFFD,
     1,
     4,
     {{6, held(0xFFFFFE, S::kEmpty)},
      {7, held(0xFFFFFF, S::kEmpty)},
      {0, held(0, S::kEmpty)},
      {1, held(1, S::kEmpty)},
      {2, held(2, S::kAggregating)}}},
    {"wrap: 0xFFFFFD → 1, slot 1 holding 9 (newer) kept",
     {{6, held(0xFFFFFE, S::kComplete)},
      {7, held(0xFFFFFF, S::kComplete)},
      {0, held(0, S::kComplete)},
      {1, held(9, S::kAggregating)}},
     0xFFFFFD,
     1,
     3,
     {{6, held(0xFFFFFE, S::kEmpty)},
      {7, held(0xFFFFFF, S::kEmpty)},
      {0, held(0, S::kEmpty)},
      {1, held(9, S::kAggregating)}}},
    {"wrap: 0xFFFFF0 → 0x10 (span 32): every slot once, 9 … 0x10 freed", run(9, S::kComplete),
     0xFFFFF0, 0x10, 8, run(9, S::kEmpty)},
};

TEST(RecycleBufferTable, FrontierRule) {
  for (const AckedRow& r : kAcked) {
    SCOPED_TRACE(r.name);
    Fixture f(r.before);
    f.g().one_source_until = 0;  // the frontier's rule does not look at the guard
    EXPECT_EQ(recycle_acknowledged(f.g(), r.old_frontier, r.frontier), r.freed);
    f.expect_slots(r.after);
    EXPECT_EQ(f.g().one_source_until, std::optional<uint32_t>(0));
  }
}

}  // namespace
}  // namespace epic::engine
