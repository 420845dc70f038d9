// CheckDuplicate (check_duplicate.h) decides, for one child's contribution to group PSN g, what
// the slot g mod 2·MW says of it: aggregate it (kFresh), answer a retransmission (kDuplicate), or
// drop it because the slot belongs to another PSN (kStale: a newer PSN holds or held it, or g
// itself was already recycled there; kBusy: an older PSN still lives in it). An empty slot is
// claimed for g (reset, then filled from the claim) unless it last held g or a later PSN.
// The table: a slot as it stands, one contribution, the verdict and the whole slot after — an
// unused slot, a recycled one of an older PSN, one already claimed for g by another child (the
// claim's fields not rewritten), every slot state for duplicates, newer and older PSNs live and
// recycled, the zombie of g itself, the bitmap's top child, and 24-bit PSN wrap-around (MW = 4:
// PSNs 8 apart share a slot; 0xFFFFFC and 4 do too, 2^24 being a multiple of 8).
#include "datapath/engine/check_duplicate.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "datapath/engine/group.h"
#include "datapath/wire/opcode.h"
#include "tests/unit/datapath/engine/slots_test_util.h"

namespace epic::engine {
namespace {

namespace op = wire::op;
using arith::DType;
using arith::ReduceOp;
using slots_test::describe;
using slots_test::slot;
using S = SlotState;
using V = SlotVerdict;

const char* name(SlotVerdict v) {
  switch (v) {
    case V::kFresh:
      return "fresh";
    case V::kDuplicate:
      return "duplicate";
    case V::kStale:
      return "stale";
    case V::kBusy:
      return "busy";
  }
  return "?";
}

// A data packet's claim (fp16 max, a full 256-byte packet), a control message's, and a claim
// unlike both (to show a slot already claimed is not rewritten by a later contribution).
const SlotClaim kData{false, op::kSendOnly, 256, 0, DType::kFp16, ReduceOp::kMax};
const SlotClaim kCtrl{true, op::kSendOnlyImm, 16, kControlImm, DType::kInt32, ReduceOp::kSum};
const SlotClaim kOther{false, op::kSendLast, 64, 0, DType::kFp32, ReduceOp::kMin};

// A slot claimed with `c` for `psn`, in `state`, with `bitmap`/`degree` contributions.
Slot claimed(uint32_t psn, SlotState state, uint64_t bitmap, uint16_t degree, const SlotClaim& c) {
  Slot s = slot(true, psn, state, bitmap, degree);
  s.control = c.control;
  s.opcode = c.opcode;
  s.payload_len = c.payload_len;
  s.immdt = c.immdt;
  s.dtype = c.dtype;
  s.op = c.op;
  return s;
}

struct Row {
  const char* name;
  Slot before;
  uint32_t gpsn;
  int child;
  SlotClaim claim;
  SlotVerdict verdict;
  Slot after;
};

constexpr uint64_t kTop = uint64_t{1} << 63;

const std::vector<Row> kRows = {
    // Fresh, and the slot claimed: state aggregating, no contribution yet, the claim's fields.
    {"unused slot: claimed for a data packet", Slot{}, 100, 0, kData, V::kFresh,
     claimed(100, S::kAggregating, 0, 0, kData)},
    {"unused slot: claimed for a control message (kControlImm kept)", Slot{}, 100, 1, kCtrl,
     V::kFresh, claimed(100, S::kAggregating, 0, 0, kCtrl)},
    {"unused slot whose psn field reads newer: claimed all the same", slot(false, 108, S::kEmpty),
     100, 0, kData, V::kFresh, claimed(100, S::kAggregating, 0, 0, kData)},
    {"empty slot that last held an older PSN (92): reset and claimed",
     claimed(92, S::kEmpty, 0x5, 2, kOther), 100, 2, kData, V::kFresh,
     claimed(100, S::kAggregating, 0, 0, kData)},
    {"empty slot that last held an older control message: reset and claimed for data",
     claimed(92, S::kEmpty, 0x7, 3, kCtrl), 100, 0, kData, V::kFresh,
     claimed(100, S::kAggregating, 0, 0, kData)},
    {"claimed for 100 by child 0: child 1 is fresh, the claim's fields not rewritten",
     claimed(100, S::kAggregating, 0x1, 1, kData), 100, 1, kOther, V::kFresh,
     claimed(100, S::kAggregating, 0x1, 1, kData)},
    {"claimed for 100 by the switch child 2: rank child 0 is fresh",
     claimed(100, S::kAggregating, 0x4, 1, kData), 100, 0, kData, V::kFresh,
     claimed(100, S::kAggregating, 0x4, 1, kData)},
    {"child 62 while only child 63 contributed: fresh",
     claimed(100, S::kAggregating, kTop, 1, kData), 100, 62, kData, V::kFresh,
     claimed(100, S::kAggregating, kTop, 1, kData)},

    // Duplicates: the child's bit is set, whatever the slot's state; nothing changes.
    {"child 0 again while aggregating: duplicate", claimed(100, S::kAggregating, 0x1, 1, kData),
     100, 0, kData, V::kDuplicate, claimed(100, S::kAggregating, 0x1, 1, kData)},
    {"child 1 again after the partial went up: duplicate", claimed(100, S::kSentUp, 0x3, 2, kData),
     100, 1, kData, V::kDuplicate, claimed(100, S::kSentUp, 0x3, 2, kData)},
    {"switch child 2 again after completion: duplicate", claimed(100, S::kComplete, 0x7, 3, kData),
     100, 2, kData, V::kDuplicate, claimed(100, S::kComplete, 0x7, 3, kData)},
    {"control message again: duplicate", claimed(100, S::kComplete, 0x3, 2, kCtrl), 100, 0, kCtrl,
     V::kDuplicate, claimed(100, S::kComplete, 0x3, 2, kCtrl)},
    {"child 63, the bitmap's top bit, again: duplicate",
     claimed(100, S::kAggregating, kTop, 1, kData), 100, 63, kData, V::kDuplicate,
     claimed(100, S::kAggregating, kTop, 1, kData)},

    // Stale: an older PSN than the slot holds or held, or a recycled zombie of the same PSN.
    {"a newer PSN (108) aggregating: stale", claimed(108, S::kAggregating, 0x1, 1, kData), 100, 1,
     kData, V::kStale, claimed(108, S::kAggregating, 0x1, 1, kData)},
    {"a newer PSN sent up: stale", claimed(108, S::kSentUp, 0x3, 2, kData), 100, 0, kData,
     V::kStale, claimed(108, S::kSentUp, 0x3, 2, kData)},
    {"a newer PSN complete: stale", claimed(108, S::kComplete, 0x3, 2, kData), 100, 0, kData,
     V::kStale, claimed(108, S::kComplete, 0x3, 2, kData)},
    {"empty slot that last held a newer PSN (108): stale, not claimed",
     claimed(108, S::kEmpty, 0x3, 2, kData), 100, 0, kData, V::kStale,
     claimed(108, S::kEmpty, 0x3, 2, kData)},
    {"zombie: 100 recycled, a late duplicate of child 0: stale, not claimed",
     claimed(100, S::kEmpty, 0x3, 2, kData), 100, 0, kData, V::kStale,
     claimed(100, S::kEmpty, 0x3, 2, kData)},
    {"zombie: 100 recycled, child 2 (never contributed here): stale, not claimed",
     claimed(100, S::kEmpty, 0x3, 2, kData), 100, 2, kData, V::kStale,
     claimed(100, S::kEmpty, 0x3, 2, kData)},

    // Busy: an older PSN still lives in the slot.
    {"an older PSN (92) aggregating: busy", claimed(92, S::kAggregating, 0x1, 1, kData), 100, 1,
     kData, V::kBusy, claimed(92, S::kAggregating, 0x1, 1, kData)},
    {"an older PSN sent up: busy", claimed(92, S::kSentUp, 0x3, 2, kData), 100, 0, kData, V::kBusy,
     claimed(92, S::kSentUp, 0x3, 2, kData)},
    {"an older PSN complete, not yet recycled: busy", claimed(92, S::kComplete, 0x3, 2, kData), 100,
     0, kData, V::kBusy, claimed(92, S::kComplete, 0x3, 2, kData)},

    // 24-bit wrap-around: 4 is newer than 0xFFFFFC (8 apart modulo 2^24).
    {"wrap: empty slot that held 0xFFFFFC, PSN 4 claims it",
     claimed(0xFFFFFC, S::kEmpty, 0x3, 2, kData), 4, 0, kData, V::kFresh,
     claimed(4, S::kAggregating, 0, 0, kData)},
    {"wrap: 0xFFFFFC still live, PSN 4: busy", claimed(0xFFFFFC, S::kComplete, 0x3, 2, kData), 4, 0,
     kData, V::kBusy, claimed(0xFFFFFC, S::kComplete, 0x3, 2, kData)},
    {"wrap: 4 live, a late 0xFFFFFC: stale", claimed(4, S::kAggregating, 0x1, 1, kData), 0xFFFFFC,
     1, kData, V::kStale, claimed(4, S::kAggregating, 0x1, 1, kData)},
    {"wrap: 4 recycled, a late 0xFFFFFC: stale", claimed(4, S::kEmpty, 0x3, 2, kData), 0xFFFFFC, 0,
     kData, V::kStale, claimed(4, S::kEmpty, 0x3, 2, kData)},
    {"wrap: the highest PSN 0xFFFFFF again: duplicate",
     claimed(0xFFFFFF, S::kAggregating, 0x1, 1, kData), 0xFFFFFF, 0, kData, V::kDuplicate,
     claimed(0xFFFFFF, S::kAggregating, 0x1, 1, kData)},
    {"wrap: empty slot that held 0xFFFFF8, PSN 0 claims it",
     claimed(0xFFFFF8, S::kEmpty, 0x1, 1, kData), 0, 1, kData, V::kFresh,
     claimed(0, S::kAggregating, 0, 0, kData)},
    // The half-space window (IBA 9.7.1): 2^23 - 8 ahead is newer, 2^23 ahead is not.
    {"2^23 - 8 ahead of the recycled PSN: newer, claimed", claimed(0, S::kEmpty, 0x1, 1, kData),
     0x7FFFF8, 0, kData, V::kFresh, claimed(0x7FFFF8, S::kAggregating, 0, 0, kData)},
    {"2^23 ahead of the recycled PSN: not newer, stale", claimed(0, S::kEmpty, 0x1, 1, kData),
     0x800000, 0, kData, V::kStale, claimed(0, S::kEmpty, 0x1, 1, kData)},
};

TEST(CheckDuplicateTable, VerdictAndSlotAfter) {
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    Slot s = r.before;
    EXPECT_STREQ(name(check_duplicate(s, r.gpsn, r.child, r.claim)), name(r.verdict));
    EXPECT_EQ(describe(s), describe(r.after));
  }
}

// The zombie the harness found, in order: PSN 100 completes and is recycled, a late duplicate
// of it must not claim the slot again, so the slot's next PSN (108) can.
TEST(CheckDuplicateTable, RecycledPsnLeavesTheSlotToTheNextOne) {
  Slot s;
  EXPECT_STREQ(name(check_duplicate(s, 100, 0, kData)), "fresh");
  s.bitmap |= 0x1;  // AggregateData's part
  s.degree = 1;
  EXPECT_STREQ(name(check_duplicate(s, 100, 1, kData)), "fresh");
  s.bitmap |= 0x2;
  s.degree = 2;
  s.state = SlotState::kComplete;
  EXPECT_STREQ(name(check_duplicate(s, 100, 1, kData)), "duplicate");
  EXPECT_STREQ(name(check_duplicate(s, 108, 0, kData)), "busy");
  s.state = SlotState::kEmpty;  // RecycleBuffer's part
  EXPECT_STREQ(name(check_duplicate(s, 100, 0, kData)), "stale");
  EXPECT_STREQ(name(check_duplicate(s, 100, 1, kData)), "stale");
  EXPECT_EQ(describe(s), describe(claimed(100, S::kEmpty, 0x3, 2, kData)));
  EXPECT_STREQ(name(check_duplicate(s, 108, 1, kCtrl)), "fresh");
  EXPECT_EQ(describe(s), describe(claimed(108, S::kAggregating, 0, 0, kCtrl)));
}

}  // namespace
}  // namespace epic::engine
