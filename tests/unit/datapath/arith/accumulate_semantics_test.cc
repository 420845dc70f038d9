// FP32_ARRIVAL semantics of a whole slot (load, combine in arrival order,
// store), checked on every implementation this CPU runs: reference, portable,
// AVX2, AVX-512. Expected values are fixed by IEEE 754 and the format definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kernels.h"
#include "tests/unit/datapath/arith/arith_test_util.h"

namespace epic::arith {
namespace {

using test::bits;
using Elements = std::vector<uint32_t>;  // element bit patterns (narrow types: low bits)

std::vector<uint8_t> to_wire(DType t, const Elements& e) {
  std::vector<uint8_t> out(e.size() * wire_bytes(t));
  for (size_t i = 0; i < e.size(); ++i) {
    if (wire_bytes(t) == 4) {
      std::memcpy(out.data() + 4 * i, &e[i], 4);
    } else if (wire_bytes(t) == 1) {
      out[i] = static_cast<uint8_t>(e[i]);
    } else {
      const auto h = static_cast<uint16_t>(e[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

Elements from_wire(DType t, const std::vector<uint8_t>& w) {
  Elements out(w.size() / wire_bytes(t));
  for (size_t i = 0; i < out.size(); ++i) {
    if (wire_bytes(t) == 4) {
      std::memcpy(&out[i], w.data() + 4 * i, 4);
    } else if (wire_bytes(t) == 1) {
      out[i] = w[i];
    } else {
      uint16_t h;
      std::memcpy(&h, w.data() + 2 * i, 2);
      out[i] = h;
    }
  }
  return out;
}

class Semantics : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    k_ = kernels_for(GetParam());
    if (k_ == nullptr) GTEST_SKIP() << "this CPU lacks " << to_string(GetParam());
  }

  // The result a slot sends on after these contributions, in arrival order.
  Elements reduce(DType t, ReduceOp op, const std::vector<Elements>& contributions) const {
    const size_t n = contributions.front().size();
    std::vector<uint8_t> acc(accum_bytes(t) * n), out(n * wire_bytes(t));
    load(*k_, t, acc.data(), to_wire(t, contributions[0]).data(), n);
    for (size_t c = 1; c < contributions.size(); ++c)
      combine(*k_, t, op, acc.data(), to_wire(t, contributions[c]).data(), n);
    store(*k_, t, out.data(), acc.data(), n);
    return from_wire(t, out);
  }

  const Kernels* k_ = nullptr;
};

constexpr uint32_t kInt32Max = 0x7FFFFFFF, kInt32Min = 0x80000000;

TEST_P(Semantics, Int32SumWrapsTwosComplement) {
  EXPECT_EQ(reduce(DType::kInt32, ReduceOp::kSum, {{kInt32Max, kInt32Min, 5}, {1, 0xFFFFFFFF, 7}}),
            (Elements{kInt32Min, kInt32Max, 12}));
  EXPECT_EQ(reduce(DType::kInt32, ReduceOp::kMin, {{kInt32Max, 3}, {kInt32Min, 0xFFFFFFFF}}),
            (Elements{kInt32Min, 0xFFFFFFFF}));
  EXPECT_EQ(reduce(DType::kInt32, ReduceOp::kMax, {{kInt32Max, 3}, {kInt32Min, 0xFFFFFFFF}}),
            (Elements{kInt32Max, 3}));
}

TEST_P(Semantics, Int8SumWrapsTwosComplement) {
  EXPECT_EQ(reduce(DType::kInt8, ReduceOp::kSum, {{0x7F, 0x80, 5, 0x80}, {1, 0xFF, 7, 0x80}}),
            (Elements{0x80, 0x7F, 12, 0}));  // 127 + 1 = -128, -128 - 1 = 127, -128 - 128 = 0
  EXPECT_EQ(reduce(DType::kInt8, ReduceOp::kSum, {{100}, {100}, {100}}),
            Elements{0x2C});  // 300 mod 256 = 44
  EXPECT_EQ(reduce(DType::kInt8, ReduceOp::kMin, {{0x7F, 3, 0xFF}, {0x80, 0xFF, 0x01}}),
            (Elements{0x80, 0xFF, 0xFF}));  // signed: -128 < 127, -1 < 3
  EXPECT_EQ(reduce(DType::kInt8, ReduceOp::kMax, {{0x7F, 3, 0xFF}, {0x80, 0xFF, 0x01}}),
            (Elements{0x7F, 3, 0x01}));
}

// 1e8 + 1 rounds back to 1e8 in binary32: the order of arrival shows.
TEST_P(Semantics, Fp32SumIsIeeeAdditionInArrivalOrder) {
  const uint32_t big = bits(1e8f), minus_big = bits(-1e8f), one = bits(1.0f);
  EXPECT_EQ(reduce(DType::kFp32, ReduceOp::kSum, {{big}, {one}, {minus_big}}), Elements{0});
  EXPECT_EQ(reduce(DType::kFp32, ReduceOp::kSum, {{big}, {minus_big}, {one}}), Elements{one});
}

// Rounded after every step, 2048 + 1 + 1 would stay 2048 in fp16 (2049 is a
// tie, to even 2048) and 256 + 1 + 1 would stay 256 in bf16.
TEST_P(Semantics, HalfTypesAccumulateInFp32AndRoundOnce) {
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0x6800}, {0x3C00}, {0x3C00}}),
            Elements{0x6801});  // 2050
  EXPECT_EQ(reduce(DType::kBf16, ReduceOp::kSum, {{0x4380}, {0x3F80}, {0x3F80}}),
            Elements{0x4381});  // 258
}

// Rounded after every step, E4M3 16 + 1 + 1 would stay 16 (17 is a tie between
// 16 and 18, to even 16) and E5M2 8 + 1 + 1 would stay 8 (9: tie, to 8).
TEST_P(Semantics, Fp8AccumulatesInFp32AndRoundsOnce) {
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x58}, {0x38}, {0x38}}),
            Elements{0x59});                                                             // 18
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x58}, {0x38}}), Elements{0x58});  // 17 -> 16
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0x48}, {0x3C}, {0x3C}}),
            Elements{0x49});                                                             // 10
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0x48}, {0x3C}}), Elements{0x48});  // 9 -> 8
}

// E4M3 has no infinity: a sum that rounds past 448 becomes its NaN; E5M2 overflows to inf.
TEST_P(Semantics, Fp8OverflowsOnlyWhenRounded) {
  // 448 + 448 - 448 and 57344 + 57344 - 57344 never leave fp32's range.
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x7E}, {0x7E}, {0xFE}}), Elements{0x7E});
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0x7B}, {0x7B}, {0xFB}}), Elements{0x7B});
  // 464 is the tie between 448 and the missing 480: to even, 448.
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x7E}, {0x58}}), Elements{0x7E});  // 464
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x7E}, {0x59}}), Elements{0x7F});  // 466
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0xFE}, {0xD8}}), Elements{0xFE});  // -464
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0xFE}, {0xE0}}), Elements{0x7F});  // -480
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0x7B}, {0x6C}}), Elements{0x7C});  // 61440
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0x7B}, {0x68}}), Elements{0x7B});  // 59392
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0xFB}, {0xEC}}), Elements{0xFC});
}

TEST_P(Semantics, Fp16OverflowsToInfOnlyWhenRounded) {
  // 65504 + 65504 - 65504 never leaves fp32's range: 65504.
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0x7BFF}, {0x7BFF}, {0xFBFF}}), Elements{0x7BFF});
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0x7BFF}, {0x4C00}}), Elements{0x7C00});  // 65520
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0x7BFF}, {0x4B80}}), Elements{0x7BFF});  // 65519
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0xFBFF}, {0xCC00}}), Elements{0xFC00});
  EXPECT_EQ(reduce(DType::kBf16, ReduceOp::kSum, {{0x7F7F}, {0x7F7F}}), Elements{0x7F80});
}

TEST_P(Semantics, SubnormalsAccumulateExactly) {
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0x0001}, {0x0001}, {0x0001}}), Elements{0x0003});
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0x03FF}, {0x0001}}), Elements{0x0400});
  EXPECT_EQ(reduce(DType::kFp16, ReduceOp::kSum, {{0x0001}, {0x8001}}), Elements{0x0000});
  EXPECT_EQ(reduce(DType::kBf16, ReduceOp::kSum, {{0x0001}, {0x0001}}), Elements{0x0002});
  EXPECT_EQ(reduce(DType::kFp32, ReduceOp::kSum, {{0x00000001}, {0x00000001}}),
            Elements{0x00000002});
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x01}, {0x01}, {0x01}}), Elements{0x03});
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x07}, {0x01}}), Elements{0x08});
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0x01}, {0x81}}), Elements{0x00});
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0x01}, {0x01}}), Elements{0x02});
  EXPECT_EQ(reduce(DType::kFp8E5M2, ReduceOp::kSum, {{0x03}, {0x01}}), Elements{0x04});
}

// E4M3 has no infinity: its `inf` and `neg_inf` are +-448, the extremes (has_inf false).
struct FloatType {
  DType t;
  uint32_t one, two, zero, neg_zero, inf, neg_inf, odd_nan, canonical_nan;
  bool has_inf = true;
};
constexpr FloatType kFloatTypes[] = {
    {DType::kFp32, 0x3F800000, 0x40000000, 0, 0x80000000, 0x7F800000, 0xFF800000, 0xFF812345,
     0x7FC00000},
    {DType::kFp16, 0x3C00, 0x4000, 0, 0x8000, 0x7C00, 0xFC00, 0xFD01, 0x7E00},
    {DType::kBf16, 0x3F80, 0x4000, 0, 0x8000, 0x7F80, 0xFF80, 0xFF81, 0x7FC0},
    {DType::kFp8E4M3, 0x38, 0x40, 0, 0x80, 0x7E, 0xFE, 0xFF, 0x7F, false},
    {DType::kFp8E5M2, 0x3C, 0x40, 0, 0x80, 0x7C, 0xFC, 0xFD, 0x7E},
};

TEST_P(Semantics, AnyNaNContributionMakesTheCanonicalNaN) {
  for (const auto& f : kFloatTypes)
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
      // NaN first, in the middle, last.
      EXPECT_EQ(
          reduce(f.t, op,
                 {{f.odd_nan, f.one, f.one}, {f.one, f.odd_nan, f.two}, {f.two, f.two, f.odd_nan}}),
          (Elements{f.canonical_nan, f.canonical_nan, f.canonical_nan}))
          << to_string(f.t) << " " << to_string(op);
    }
}

TEST_P(Semantics, InfMinusInfIsTheCanonicalNaN) {
  for (const auto& f : kFloatTypes) {
    if (!f.has_inf) continue;
    EXPECT_EQ(reduce(f.t, ReduceOp::kSum, {{f.inf, f.inf}, {f.neg_inf, f.one}}),
              (Elements{f.canonical_nan, f.inf}))
        << to_string(f.t);
  }
}

TEST_P(Semantics, MinPicksNegativeZeroAndMaxPositiveZeroInEitherOrder) {
  for (const auto& f : kFloatTypes) {
    EXPECT_EQ(reduce(f.t, ReduceOp::kMin, {{f.zero, f.neg_zero}, {f.neg_zero, f.zero}}),
              (Elements{f.neg_zero, f.neg_zero}))
        << to_string(f.t);
    EXPECT_EQ(reduce(f.t, ReduceOp::kMax, {{f.zero, f.neg_zero}, {f.neg_zero, f.zero}}),
              (Elements{f.zero, f.zero}))
        << to_string(f.t);
  }
}

// Min and max give the same bits for every arrival order of the contributions.
TEST_P(Semantics, MinMaxAreIndependentOfArrivalOrder) {
  for (const auto& f : kFloatTypes)
    for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kMax}) {
      std::vector<Elements> contributions = {
          {f.zero, f.one, f.odd_nan, f.inf, f.zero},
          {f.neg_zero, f.two, f.one, f.neg_inf, f.neg_zero},
          {f.zero, f.neg_zero, f.two, f.one, f.neg_zero},
          {f.neg_zero, f.one, f.zero, f.two, f.zero},
      };
      const Elements first = reduce(f.t, op, contributions);
      std::sort(contributions.begin(), contributions.end());
      do {
        ASSERT_EQ(reduce(f.t, op, contributions), first) << to_string(f.t) << to_string(op);
      } while (std::next_permutation(contributions.begin(), contributions.end()));
      EXPECT_EQ(first[0], op == ReduceOp::kMin ? f.neg_zero : f.zero);
      EXPECT_EQ(first[2], f.canonical_nan);
    }
}

// E4M3 has no infinity: +-448 are its extremes, and a NaN of either sign
// (S.1111.111) loads and stores as 0x7F.
TEST_P(Semantics, Fp8E4M3HasNoInfinity) {
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kMax, {{0x7E, 0xFE}, {0xFE, 0x7E}}),
            (Elements{0x7E, 0x7E}));
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kMin, {{0x7E, 0xFE}, {0xFE, 0x7F}}),
            (Elements{0xFE, 0x7F}));
  EXPECT_EQ(reduce(DType::kFp8E4M3, ReduceOp::kSum, {{0xFF, 0x7F}}), (Elements{0x7F, 0x7F}));
}

// load then store gives back every fp16/bf16 pattern, except that NaNs
// become the canonical NaN.
TEST_P(Semantics, HalfPatternsSurviveLoadThenStore) {
  for (DType t : {DType::kFp16, DType::kBf16}) {
    Elements all(65536);
    for (uint32_t h = 0; h < 65536; ++h) all[h] = h;
    const Elements out = reduce(t, ReduceOp::kSum, {all});
    for (uint32_t h = 0; h < 65536; ++h) {
      const bool nan = t == DType::kFp16 ? (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0
                                         : (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
      ASSERT_EQ(out[h], nan ? (t == DType::kFp16 ? 0x7E00u : 0x7FC0u) : h)
          << to_string(t) << " 0x" << std::hex << h;
    }
  }
}

// Every fp8 pattern survives load then store (NaNs become the canonical NaN);
// int8 load and store are copies.
TEST_P(Semantics, BytePatternsSurviveLoadThenStore) {
  Elements all(256);
  for (uint32_t b = 0; b < 256; ++b) all[b] = b;
  for (DType t : {DType::kInt8, DType::kFp8E4M3, DType::kFp8E5M2}) {
    const Elements out = reduce(t, ReduceOp::kSum, {all});
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t want = b;
      if (t == DType::kFp8E4M3 && (b & 0x7F) == 0x7F) want = 0x7F;
      if (t == DType::kFp8E5M2 && (b & 0x7C) == 0x7C && (b & 0x03) != 0) want = 0x7E;
      ASSERT_EQ(out[b], want) << to_string(t) << " 0x" << std::hex << b;
    }
  }
}

// int8 accumulates in one byte per element, fp8 in binary32.
TEST_P(Semantics, AccumulatorLayoutOfByteTypes) {
  EXPECT_EQ(accum_bytes(DType::kInt8), 1u);
  EXPECT_EQ(accum_bytes(DType::kFp8E4M3), 4u);
  EXPECT_EQ(accum_bytes(DType::kFp8E5M2), 4u);
  std::vector<uint8_t> acc(8, 0xEE);
  load(*k_, DType::kInt8, acc.data(), to_wire(DType::kInt8, {0xFF, 7}).data(), 2);
  EXPECT_EQ(acc, (std::vector<uint8_t>{0xFF, 7, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE}));
  load(*k_, DType::kFp8E4M3, acc.data(), to_wire(DType::kFp8E4M3, {0x38, 0xC0}).data(), 2);
  float f[2];
  std::memcpy(f, acc.data(), 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.0f);
  load(*k_, DType::kFp8E5M2, acc.data(), to_wire(DType::kFp8E5M2, {0x3C, 0xC0}).data(), 2);
  std::memcpy(f, acc.data(), 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.0f);
}

TEST_P(Semantics, AccumulatorLayoutIsInt32OrFloat) {
  std::vector<uint8_t> acc(8);
  load(*k_, DType::kFp16, acc.data(), to_wire(DType::kFp16, {0x3C00, 0xC000}).data(), 2);
  float f[2];
  std::memcpy(f, acc.data(), 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.0f);
  load(*k_, DType::kInt32, acc.data(), to_wire(DType::kInt32, {0xFFFFFFFF, 7}).data(), 2);
  int32_t i[2];
  std::memcpy(i, acc.data(), 8);
  EXPECT_EQ(i[0], -1);
  EXPECT_EQ(i[1], 7);
}

// A Barrier is an AllReduce of empty data: n == 0 writes nothing, and reads
// nothing either (null pointers are fine; ASan/UBSan builds check that).
TEST_P(Semantics, EmptyPayloadIsANoOp) {
  std::vector<uint8_t> acc(64, 0x5A), wire(64, 0x6B);
  for (DType t : {DType::kInt32, DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt8,
                  DType::kFp8E4M3, DType::kFp8E5M2}) {
    load(*k_, t, acc.data(), wire.data(), 0);
    combine(*k_, t, ReduceOp::kSum, acc.data(), wire.data(), 0);
    combine(*k_, t, ReduceOp::kMin, acc.data(), wire.data(), 0);
    store(*k_, t, wire.data(), acc.data(), 0);
    load(*k_, t, nullptr, nullptr, 0);
    combine(*k_, t, ReduceOp::kMax, nullptr, nullptr, 0);
    store(*k_, t, nullptr, nullptr, 0);
  }
  EXPECT_EQ(acc, std::vector<uint8_t>(64, 0x5A));
  EXPECT_EQ(wire, std::vector<uint8_t>(64, 0x6B));
}

INSTANTIATE_TEST_SUITE_P(Isas, Semantics,
                         ::testing::Values(Isa::kReference, Isa::kPortable, Isa::kAvx2,
                                           Isa::kAvx512),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Codes outside the enums (e.g. from a malformed control message) write nothing.
TEST(OutOfRangeCodes, DoNothing) {
  std::vector<uint8_t> acc(64, 0x11), wire(64, 0x22);
  const auto bad_type = static_cast<DType>(kNumDTypes);
  const auto bad_op = static_cast<ReduceOp>(3);
  load(bad_type, acc.data(), wire.data(), 16);
  combine(DType::kFp32, bad_op, acc.data(), wire.data(), 16);
  combine(bad_type, ReduceOp::kSum, acc.data(), wire.data(), 16);
  store(bad_type, wire.data(), acc.data(), 16);
  reference::load(bad_type, acc.data(), wire.data(), 16);
  reference::combine(DType::kFp32, bad_op, acc.data(), wire.data(), 16);
  reference::store(bad_type, wire.data(), acc.data(), 16);
  EXPECT_EQ(acc, std::vector<uint8_t>(64, 0x11));
  EXPECT_EQ(wire, std::vector<uint8_t>(64, 0x22));
}

}  // namespace
}  // namespace epic::arith
