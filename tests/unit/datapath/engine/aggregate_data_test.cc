// AggregateData (aggregate_data.h) adds one child's contribution to the slot CheckDuplicate
// claimed for its PSN: the first loads the accumulator, the others combine into it (int32,
// fp32, fp16, bf16 × sum/min/max; a control message is copied, never summed), the child's bit
// and the degree are recorded, and when the degree reaches the fan-in the result is stored in
// wire format. A contribution whose opcode or length differs from the slot's is refused
// (kInconsistent) and changes nothing. store_parent_result takes a non-root switch's result
// from its parent (kSentUp → kComplete), copied as it came.
// The tables: each type × operator over three children, with results worked out by hand (int32
// wraps modulo 2^32; the half types accumulate in fp32 and round once, so fp16 2048 + 1 + 1 is
// 2050 and bf16 256 + 1 + 1 is 258, which rounding at each step would lose; min/max order −0
// below +0), the outcome, bitmap and degree after each contribution, no result before the
// fan-in, fan-in 1, a full-MTU payload in the last slot, control messages, every inconsistent
// contribution (slot, accumulator and result unchanged), and the parent's result.
#include "datapath/engine/aggregate_data.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "datapath/engine/group.h"
#include "datapath/wire/opcode.h"
#include "tests/unit/datapath/engine/engine_test_util.h"
#include "tests/unit/datapath/engine/slots_test_util.h"

namespace epic::engine {
namespace {

namespace op = wire::op;
using arith::DType;
using arith::ReduceOp;
using slots_test::describe;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kWindow = 4;  // 8 slots
constexpr uint16_t kPmtu = 256;
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();

// Wire payloads: elements in host byte order (datapath/arith/accumulate.h), the half types as
// their bit patterns.
template <typename T>
Bytes bytes_of(std::initializer_list<T> v) {
  Bytes b(v.size() * sizeof(T));
  size_t k = 0;
  for (const T x : v) std::memcpy(b.data() + sizeof(T) * k++, &x, sizeof(T));
  return b;
}
Bytes i32(std::initializer_list<int32_t> v) { return bytes_of(v); }
Bytes f32(std::initializer_list<float> v) { return bytes_of(v); }
Bytes h16(std::initializer_list<uint16_t> v) { return bytes_of(v); }
Bytes repeat(const Bytes& element, size_t n) {
  Bytes b;
  for (size_t k = 0; k < n; ++k) b.insert(b.end(), element.begin(), element.end());
  return b;
}

const char* name(Contribution c) {
  switch (c) {
    case Contribution::kInconsistent:
      return "inconsistent";
    case Contribution::kAdded:
      return "added";
    case Contribution::kCompleted:
      return "completed";
  }
  return "?";
}

// Slot `i` of `r` as check_duplicate() claims it for `psn`.
void claim(SlotRegion& r, uint32_t i, uint32_t psn, bool control, uint8_t opcode, uint16_t len,
           DType t, ReduceOp o) {
  Slot& s = r.meta[i];
  s = slots_test::slot(true, psn, SlotState::kAggregating);
  s.control = control;
  s.opcode = opcode;
  s.payload_len = len;
  s.immdt = control ? kControlImm : 0;
  s.dtype = t;
  s.op = o;
}

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    if (p[k] != 0) return false;
  }
  return true;
}

// Every slot but `i` as the region was made: unused, accumulator and result zero.
void expect_others_untouched(SlotRegion& r, uint32_t i) {
  for (uint32_t k = 0; k < r.nslots; ++k) {
    if (k == i) continue;
    EXPECT_EQ(describe(r.meta[k]), describe(Slot{})) << "slot " << k;
    EXPECT_TRUE(all_zero(r.accum_of(k), vocab::slot_accum_bytes(kPmtu))) << "slot " << k;
    EXPECT_TRUE(all_zero(r.result_of(k), vocab::slot_result_bytes(kPmtu))) << "slot " << k;
  }
}

// One slot, contributions from the children in `children` order (fan-in: as many as there are
// contributions), and the result each should leave.
struct ArithRow {
  const char* name;
  DType dtype;
  ReduceOp op;
  std::vector<Bytes> contributions;
  Bytes result;
  uint32_t gpsn = 101;  // slot 5
};

const std::vector<ArithRow> kArith = {
    // int32: two's complement, INT32_MAX + 1 wraps to INT32_MIN.
    {"int32 sum",
     DType::kInt32,
     ReduceOp::kSum,
     {i32({1, -2, kI32Max, 100}), i32({2, -3, 1, -100}), i32({3, 5, 0, 7})},
     i32({6, 0, kI32Min, 7})},
    {"int32 min",
     DType::kInt32,
     ReduceOp::kMin,
     {i32({5, -7, 0, kI32Max}), i32({3, -8, 0, kI32Min}), i32({4, 9, -1, 0})},
     i32({3, -8, -1, kI32Min})},
    {"int32 max",
     DType::kInt32,
     ReduceOp::kMax,
     {i32({5, -7, 0, kI32Max}), i32({3, -8, 0, kI32Min}), i32({4, 9, -1, 0})},
     i32({5, 9, 0, kI32Max})},
    // fp32, in arrival order: 1e30 + (−1e30) + 1 = 1 (in another order it would be 0).
    {"fp32 sum",
     DType::kFp32,
     ReduceOp::kSum,
     {f32({1.5f, -2.0f, 0.25f, 1e30f}), f32({2.25f, 0.5f, 0.25f, -1e30f}),
      f32({0.25f, 1.0f, -0.5f, 1.0f})},
     f32({4.0f, -0.5f, 0.0f, 1.0f})},
    {"fp32 min (-0 below +0)",
     DType::kFp32,
     ReduceOp::kMin,
     {f32({1.5f, -0.0f, 3.0f}), f32({-2.5f, 0.0f, 3.0f}), f32({0.5f, 0.0f, -3.0f})},
     f32({-2.5f, -0.0f, -3.0f})},
    {"fp32 max (+0 above -0)",
     DType::kFp32,
     ReduceOp::kMax,
     {f32({1.5f, -0.0f, 3.0f}), f32({-2.5f, 0.0f, 3.0f}), f32({0.5f, 0.0f, -3.0f})},
     f32({1.5f, 0.0f, 3.0f})},
    // fp16: 2048 (0x6800) + 1 + 1 = 2050 (0x6801) in fp32, rounded once; 1 + 2 + 0.5 = 3.5
    // (0x4300); 0.5 + 0.5 + 1 = 2 (0x4000); −1 + 1 + 2 = 2.
    {"fp16 sum (fp32 accumulator, one rounding)",
     DType::kFp16,
     ReduceOp::kSum,
     {h16({0x6800, 0x3C00, 0x3800, 0xBC00}), h16({0x3C00, 0x4000, 0x3800, 0x3C00}),
      h16({0x3C00, 0x3800, 0x3C00, 0x4000})},
     h16({0x6801, 0x4300, 0x4000, 0x4000})},
    // {1, −1, 2, −0}, {0.5, 2, −2, +0}, {3, −0.5, 1, +0}.
    {"fp16 min",
     DType::kFp16,
     ReduceOp::kMin,
     {h16({0x3C00, 0xBC00, 0x4000, 0x8000}), h16({0x3800, 0x4000, 0xC000, 0x0000}),
      h16({0x4200, 0xB800, 0x3C00, 0x0000})},
     h16({0x3800, 0xBC00, 0xC000, 0x8000})},
    {"fp16 max",
     DType::kFp16,
     ReduceOp::kMax,
     {h16({0x3C00, 0xBC00, 0x4000, 0x8000}), h16({0x3800, 0x4000, 0xC000, 0x0000}),
      h16({0x4200, 0xB800, 0x3C00, 0x0000})},
     h16({0x4200, 0x4000, 0x4000, 0x0000})},
    // bf16: 256 (0x4380) + 1 + 1 = 258 (0x4381); 1.5 + 2.5 + 0.5 = 4.5 (0x4090);
    // −1 + 1 + 0.5 = 0.5 (0x3F00).
    {"bf16 sum (fp32 accumulator, one rounding)",
     DType::kBf16,
     ReduceOp::kSum,
     {h16({0x4380, 0x3FC0, 0xBF80}), h16({0x3F80, 0x4020, 0x3F80}), h16({0x3F80, 0x3F00, 0x3F00})},
     h16({0x4381, 0x4090, 0x3F00})},
    // {1, −2, 3}, {0.5, 2, −3}, {2, −1, 1}.
    {"bf16 min",
     DType::kBf16,
     ReduceOp::kMin,
     {h16({0x3F80, 0xC000, 0x4040}), h16({0x3F00, 0x4000, 0xC040}), h16({0x4000, 0xBF80, 0x3F80})},
     h16({0x3F00, 0xC000, 0xC040})},
    {"bf16 max",
     DType::kBf16,
     ReduceOp::kMax,
     {h16({0x3F80, 0xC000, 0x4040}), h16({0x3F00, 0x4000, 0xC040}), h16({0x4000, 0xBF80, 0x3F80})},
     h16({0x4000, 0x4000, 0x4040})},
    // Fan-in 1 (one child below): the first contribution completes; fp16 through fp32 and back.
    {"fan-in 1, fp16: the contribution is the result",
     DType::kFp16,
     ReduceOp::kSum,
     {h16({0x3C00, 0xC200, 0x6801})},
     h16({0x3C00, 0xC200, 0x6801})},
    {"fan-in 2, int32 sum",
     DType::kInt32,
     ReduceOp::kSum,
     {i32({-1, 40}), i32({-1, 2})},
     i32({-2, 42})},
    // A full 256-byte packet (128 fp16 elements) in the last slot: 1 + 1 = 2 everywhere.
    {"full MTU in the last slot, fp16 sum",
     DType::kFp16,
     ReduceOp::kSum,
     {repeat(h16({0x3C00}), 128), repeat(h16({0x3C00}), 128)},
     repeat(h16({0x4000}), 128),
     107},
};

TEST(AggregateDataTable, EveryTypeAndOperator) {
  const int children[3] = {0, 2, 1};  // arrival order: a rank, the switch child, a rank
  for (const ArithRow& row : kArith) {
    SCOPED_TRACE(row.name);
    SlotRegion r(kWindow, kPmtu);
    const uint32_t i = r.index(row.gpsn);
    const auto len = static_cast<uint16_t>(row.result.size());
    const auto fan_in = static_cast<uint16_t>(row.contributions.size());
    claim(r, i, row.gpsn, false, op::kSendOnly, len, row.dtype, row.op);
    uint64_t bitmap = 0;
    for (uint16_t k = 0; k < fan_in; ++k) {
      const Bytes& c = row.contributions[k];
      ASSERT_EQ(c.size(), len);
      const Contribution got =
          aggregate_data(r, i, children[k], Source::kRank, op::kSendOnly, c.data(), len, fan_in);
      EXPECT_STREQ(name(got), k + 1 < fan_in ? "added" : "completed") << "contribution " << k;
      bitmap |= uint64_t{1} << children[k];
      EXPECT_EQ(r.meta[i].bitmap, bitmap) << "contribution " << k;
      EXPECT_EQ(r.meta[i].degree, k + 1) << "contribution " << k;
      // The result is written only at the fan-in.
      if (k + 1 < fan_in) {
        EXPECT_TRUE(all_zero(r.result_of(i), kPmtu)) << "contribution " << k;
      }
    }
    EXPECT_EQ(Bytes(r.result_of(i), r.result_of(i) + len), row.result);
    EXPECT_TRUE(all_zero(r.result_of(i) + len, kPmtu - len));  // nothing past the payload
    // The state is the caller's to move (kSentUp or kComplete).
    EXPECT_EQ(r.meta[i].state, SlotState::kAggregating);
    expect_others_untouched(r, i);
  }
}

// A control message is the same descriptor from every child: the result is the descriptor,
// copied, never summed (its slot carries the collective's dtype and op all the same).
TEST(AggregateDataTable, ControlMessageCopiedNotSummed) {
  const CollectiveDescriptor d{CollectiveType::kAllReduce, vocab::DType::kInt32,
                               vocab::ReduceOp::kSum, 0, 0x01020304};
  const Bytes desc = testing::control(d);
  for (const DType t : {DType::kInt32, DType::kFp32, DType::kFp16, DType::kBf16}) {
    for (const uint16_t fan_in : {uint16_t{1}, uint16_t{2}, uint16_t{3}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dtype " << int{static_cast<uint8_t>(t)} << " fan-in " << fan_in);
      SlotRegion r(kWindow, kPmtu);
      const uint32_t i = r.index(100);
      claim(r, i, 100, true, op::kSendOnlyImm, kControlPayloadBytes, t, ReduceOp::kSum);
      for (uint16_t k = 0; k < fan_in; ++k) {
        const Contribution got = aggregate_data(r, i, k, Source::kRank, op::kSendOnlyImm,
                                                desc.data(), kControlPayloadBytes, fan_in);
        EXPECT_STREQ(name(got), k + 1 < fan_in ? "added" : "completed") << k;
      }
      EXPECT_EQ(Bytes(r.result_of(i), r.result_of(i) + kControlPayloadBytes), desc);
      EXPECT_EQ(r.meta[i].degree, fan_in);
      EXPECT_EQ(r.meta[i].bitmap, (uint64_t{1} << fan_in) - 1);
      expect_others_untouched(r, i);
    }
  }
}

// Contributions that do not match the slot's opcode or length: refused, nothing changed — not
// the bitmap, degree, accumulator or result — and the slot can still complete afterwards.
struct BadRow {
  const char* name;
  bool control;     // the slot's: a control message (SEND_ONLY_WITH_IMM, 16 bytes)
  uint16_t before;  // contributions already added (child 0)
  uint8_t opcode;   // the contribution's
  uint16_t len;     // the contribution's
};

const std::vector<BadRow> kBad = {
    {"SEND_LAST into a SEND_ONLY slot, first contribution", false, 0, op::kSendLast, 16},
    {"SEND_ONLY_WITH_IMM into a SEND_ONLY slot, second contribution", false, 1, op::kSendOnlyImm,
     16},
    {"SEND_FIRST into a SEND_ONLY slot, completing contribution", false, 2, op::kSendFirst, 16},
    {"shorter (8 of 16 bytes), first contribution", false, 0, op::kSendOnly, 8},
    {"longer (20 of 16 bytes), second contribution", false, 1, op::kSendOnly, 20},
    {"empty (0 of 16 bytes), completing contribution", false, 2, op::kSendOnly, 0},
    {"SEND_ONLY into a control slot", true, 1, op::kSendOnly, 16},
    {"control message of 12 bytes", true, 0, op::kSendOnlyImm, 12},
};

TEST(AggregateDataTable, InconsistentContributionChangesNothing) {
  constexpr uint16_t kFanIn = 3;
  const Bytes ones = i32({1, 1, 1, 1});
  Bytes big(kPmtu, 0x55);
  for (const BadRow& row : kBad) {
    SCOPED_TRACE(row.name);
    SlotRegion r(kWindow, kPmtu);
    const uint32_t i = r.index(102);
    const uint8_t slot_op = row.control ? op::kSendOnlyImm : op::kSendOnly;
    claim(r, i, 102, row.control, slot_op, 16, DType::kInt32, ReduceOp::kSum);
    for (uint16_t k = 0; k < row.before; ++k) {
      ASSERT_STREQ(name(aggregate_data(r, i, k, Source::kRank, slot_op, ones.data(), 16, kFanIn)),
                   "added");
    }
    const std::string meta = describe(r.meta[i]);
    const Bytes accum(r.accum_of(i), r.accum_of(i) + vocab::slot_accum_bytes(kPmtu));
    const Bytes result(r.result_of(i), r.result_of(i) + kPmtu);
    EXPECT_STREQ(
        name(aggregate_data(r, i, 5, Source::kRank, row.opcode, big.data(), row.len, kFanIn)),
        "inconsistent");
    EXPECT_EQ(describe(r.meta[i]), meta);
    EXPECT_EQ(Bytes(r.accum_of(i), r.accum_of(i) + accum.size()), accum);
    EXPECT_EQ(Bytes(r.result_of(i), r.result_of(i) + kPmtu), result);
    expect_others_untouched(r, i);
    // The consistent contributions still complete it: the refused one left no trace.
    for (uint16_t k = row.before; k < kFanIn; ++k) {
      EXPECT_STREQ(name(aggregate_data(r, i, k, Source::kRank, slot_op, ones.data(), 16, kFanIn)),
                   k + 1 < kFanIn ? "added" : "completed");
    }
    EXPECT_EQ(r.meta[i].bitmap, 0x7u);
    EXPECT_EQ(Bytes(r.result_of(i), r.result_of(i) + 16), row.control ? ones : i32({3, 3, 3, 3}));
  }
}

// store_parent_result: the parent's result replaces the partial this switch sent up (copied,
// not combined with it) and completes the slot; a mismatched one changes nothing.
struct ParentRow {
  const char* name;
  bool control;
  uint8_t opcode;  // the parent's packet
  Bytes payload;
  bool stored;
};

const std::vector<ParentRow> kParent = {
    {"the result of a SEND_ONLY slot", false, op::kSendOnly, i32({10, -20, 30, 40}), true},
    {"the result of a control slot", true, op::kSendOnlyImm,
     testing::control(
         {CollectiveType::kBroadcast, vocab::DType::kFp16, vocab::ReduceOp::kMax, 3, 77}),
     true},
    {"SEND_LAST for a SEND_ONLY slot", false, op::kSendLast, i32({10, -20, 30, 40}), false},
    {"SEND_ONLY_WITH_IMM for a SEND_ONLY slot", false, op::kSendOnlyImm, i32({10, -20, 30, 40}),
     false},
    {"SEND_ONLY for a control slot", true, op::kSendOnly, i32({10, -20, 30, 40}), false},
    {"12 bytes for a 16-byte slot", false, op::kSendOnly, i32({10, -20, 30}), false},
    {"20 bytes for a 16-byte slot", false, op::kSendOnly, i32({10, -20, 30, 40, 50}), false},
};

TEST(AggregateDataTable, ParentResult) {
  const Bytes partial = i32({1, 2, 3, 4});
  for (const ParentRow& row : kParent) {
    SCOPED_TRACE(row.name);
    SlotRegion r(kWindow, kPmtu);
    const uint32_t i = r.index(103);
    const uint8_t slot_op = row.control ? op::kSendOnlyImm : op::kSendOnly;
    claim(r, i, 103, row.control, slot_op, 16, DType::kInt32, ReduceOp::kSum);
    // Two children contributed; the partial went up.
    ASSERT_STREQ(name(aggregate_data(r, i, 0, Source::kRank, slot_op, partial.data(), 16, 1)),
                 "completed");
    r.meta[i].state = SlotState::kSentUp;
    Slot after = r.meta[i];
    if (row.stored) after.state = SlotState::kComplete;
    const Bytes accum(r.accum_of(i), r.accum_of(i) + vocab::slot_accum_bytes(kPmtu));
    EXPECT_EQ(store_parent_result(r, i, row.opcode, row.payload.data(),
                                  static_cast<uint16_t>(row.payload.size())),
              row.stored);
    EXPECT_EQ(describe(r.meta[i]), describe(after));
    EXPECT_EQ(Bytes(r.result_of(i), r.result_of(i) + 16), row.stored ? row.payload : partial);
    EXPECT_TRUE(all_zero(r.result_of(i) + 16, kPmtu - 16));
    EXPECT_EQ(Bytes(r.accum_of(i), r.accum_of(i) + accum.size()), accum);
    expect_others_untouched(r, i);
  }
}

}  // namespace
}  // namespace epic::engine
