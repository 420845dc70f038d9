// Buffer layout, deterministic exact inputs and expected results
// (host/collective/layout.h, inputs.h, expected.h): what every rank of a group
// computes locally to check its own result bit for bit.
#include "host/collective/expected.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "datapath/arith/accumulate.h"
#include "host/collective/inputs.h"
#include "host/collective/layout.h"

namespace epic::host {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;

std::vector<uint8_t> i32(std::initializer_list<int32_t> v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), std::data(v), out.size());
  return out;
}

TEST(Layout, BufferBytesPerPrimitiveAndRank) {
  struct Row {
    CollectiveType type;
    size_t send, recv_root, recv_other;
  };
  // 3 ranks, 5 fp16 elements (10 bytes), root 1.
  const Row table[] = {
      {CollectiveType::kAllReduce, 10, 10, 10}, {CollectiveType::kReduce, 10, 10, 0},
      {CollectiveType::kBroadcast, 10, 10, 10}, {CollectiveType::kReduceScatter, 30, 10, 10},
      {CollectiveType::kAllGather, 10, 30, 30}, {CollectiveType::kBarrier, 0, 0, 0},
  };
  for (const Row& row : table) {
    const CollectiveDescriptor d{row.type, DType::kFp16, ReduceOp::kSum, 1, 5};
    EXPECT_EQ(send_bytes(d, 3), row.send) << vocab::to_string(row.type);
    EXPECT_EQ(recv_bytes(d, 1, 3), row.recv_root) << vocab::to_string(row.type);
    EXPECT_EQ(recv_bytes(d, 2, 3), row.recv_other) << vocab::to_string(row.type);
  }
}

TEST(ExactInputs, SameSeedIndexAndRankGiveTheSameBytesAndAnyChangeOthers) {
  const CollectiveDescriptor d{CollectiveType::kReduceScatter, DType::kInt32, ReduceOp::kSum, 0,
                               64};
  const std::vector<uint8_t> a = exact_input(d, 4, 7, 3, 2);
  EXPECT_EQ(a.size(), 4u * 64 * 4);
  EXPECT_EQ(a, exact_input(d, 4, 7, 3, 2));
  EXPECT_NE(a, exact_input(d, 4, 8, 3, 2));
  EXPECT_NE(a, exact_input(d, 4, 7, 4, 2));
  EXPECT_NE(a, exact_input(d, 4, 7, 3, 1));
  const auto all = exact_inputs(d, 4, 7, 3);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[2], a);
}

// The switch adds contributions in arrival order and rounds partial sums to the wire type
// between tree levels: the inputs must make every such order give the same bits.
TEST(ExactInputs, FloatSumsAreExactInAnyOrderAndAcrossTreeLevels) {
  for (DType t : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kFp8E4M3, DType::kFp8E5M2}) {
    for (uint16_t ranks : {2, 16, 100, 300}) {
      const CollectiveDescriptor d{CollectiveType::kAllReduce, t, ReduceOp::kSum, 0, 512};
      auto in = exact_inputs(d, ranks, 1, 0);
      const std::vector<uint8_t> flat = reduce_reference(d, in, 0, d.count);
      std::reverse(in.begin(), in.end());
      EXPECT_EQ(reduce_reference(d, in, 0, d.count), flat)
          << vocab::to_string(t) << " ranks " << ranks;
      // Two levels: each half reduced (and stored in the wire type), then the halves.
      const auto half = static_cast<long>(in.size() / 2);
      const std::vector<std::vector<uint8_t>> lo(in.begin(), in.begin() + half);
      const std::vector<std::vector<uint8_t>> hi(in.begin() + half, in.end());
      const std::vector<std::vector<uint8_t>> partials = {reduce_reference(d, hi, 0, d.count),
                                                          reduce_reference(d, lo, 0, d.count)};
      EXPECT_EQ(reduce_reference(d, partials, 0, d.count), flat)
          << vocab::to_string(t) << " ranks " << ranks;
      // Not all zero: the values do exercise the sum.
      EXPECT_NE(std::count(flat.begin(), flat.end(), 0), static_cast<long>(flat.size()));
    }
  }
}

// One-byte types fill exactly their bytes, and float min/max inputs stay finite (E4M3 has no
// infinity: a value beyond 464 would become its NaN).
TEST(ExactInputs, OneByteTypesAreSizedAndFinite) {
  for (DType t : {DType::kInt8, DType::kFp8E4M3, DType::kFp8E5M2}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
      const CollectiveDescriptor d{CollectiveType::kAllReduce, t, op, 0, 333};
      const std::vector<uint8_t> in = exact_input(d, 4, 9, 1, 3);
      ASSERT_EQ(in.size(), 333u) << vocab::to_string(t);
      if (t == DType::kInt8) continue;
      const uint8_t exponent_ones = t == DType::kFp8E4M3 ? 0x78 : 0x7C;
      for (uint8_t x : in) {
        if (t == DType::kFp8E4M3) {
          ASSERT_NE(x & 0x7F, 0x7F) << "E4M3 NaN in " << vocab::to_string(op) << " inputs";
        } else {
          ASSERT_NE(x & exponent_ones, exponent_ones) << "E5M2 inf/NaN";
        }
      }
      EXPECT_NE(std::count(in.begin(), in.end(), 0), static_cast<long>(in.size()));
    }
  }
}

TEST(Expected, ResultOfEveryPrimitiveForTwoRanks) {
  // rank 0: {1, 2}, rank 1: {10, 20}; count 2 (ReduceScatter: chunks of 1).
  const std::vector<std::vector<uint8_t>> in = {i32({1, 2}), i32({10, 20})};
  const auto d = [](CollectiveType t, uint32_t count) {
    return CollectiveDescriptor{t, DType::kInt32, ReduceOp::kSum, 1, count};
  };
  EXPECT_EQ(expected_result(d(CollectiveType::kAllReduce, 2), 0, in), i32({11, 22}));
  EXPECT_EQ(expected_result(d(CollectiveType::kReduce, 2), 1, in), i32({11, 22}));
  EXPECT_EQ(expected_result(d(CollectiveType::kReduce, 2), 0, in), std::vector<uint8_t>{});
  EXPECT_EQ(expected_result(d(CollectiveType::kBroadcast, 2), 0, in), i32({10, 20}));
  EXPECT_EQ(expected_result(d(CollectiveType::kBroadcast, 2), 1, in), i32({10, 20}));
  EXPECT_EQ(expected_result(d(CollectiveType::kReduceScatter, 1), 0, in), i32({11}));
  EXPECT_EQ(expected_result(d(CollectiveType::kReduceScatter, 1), 1, in), i32({22}));
  EXPECT_EQ(expected_result(d(CollectiveType::kAllGather, 2), 0, in), i32({1, 2, 10, 20}));
  EXPECT_EQ(expected_result(d(CollectiveType::kBarrier, 0), 0, in), std::vector<uint8_t>{});
  CollectiveDescriptor mx = d(CollectiveType::kAllReduce, 2);
  mx.op = ReduceOp::kMin;
  EXPECT_EQ(expected_result(mx, 0, in), i32({1, 2}));
}

TEST(Expected, FirstDifferenceNamesTheByteOffset) {
  const std::vector<uint8_t> a = {1, 2, 3, 4}, b = {1, 2, 3, 5}, prefix = {1, 2};
  EXPECT_EQ(first_difference(a, a), std::nullopt);
  EXPECT_EQ(first_difference(a, b), 3u);
  EXPECT_EQ(first_difference(a, prefix), 2u);
  EXPECT_EQ(first_difference(prefix, a), 2u);
  EXPECT_EQ(first_difference({}, {}), std::nullopt);
}

}  // namespace
}  // namespace epic::host
