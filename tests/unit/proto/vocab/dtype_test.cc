#include "proto/vocab/dtype.h"

#include <gtest/gtest.h>

namespace epic::vocab {
namespace {

TEST(DType, ElementWidths) {
  EXPECT_EQ(wire_bytes(DType::kInt32), 4u);
  EXPECT_EQ(wire_bytes(DType::kFp32), 4u);
  EXPECT_EQ(wire_bytes(DType::kFp16), 2u);
  EXPECT_EQ(wire_bytes(DType::kBf16), 2u);
  EXPECT_EQ(wire_bytes(DType::kInt8), 1u);
  EXPECT_EQ(wire_bytes(DType::kFp8E4M3), 1u);
  EXPECT_EQ(wire_bytes(DType::kFp8E5M2), 1u);
  static_assert(wire_bytes(DType::kFp16) == 2 && wire_bytes(DType::kFp32) == 4);
}

TEST(DType, WireCodesAreStable) {
  EXPECT_EQ(static_cast<int>(DType::kInt32), 0);
  EXPECT_EQ(static_cast<int>(DType::kFp32), 1);
  EXPECT_EQ(static_cast<int>(DType::kFp16), 2);
  EXPECT_EQ(static_cast<int>(DType::kBf16), 3);
  EXPECT_EQ(static_cast<int>(ReduceOp::kSum), 0);
  EXPECT_EQ(static_cast<int>(ReduceOp::kMin), 1);
  EXPECT_EQ(static_cast<int>(ReduceOp::kMax), 2);
  EXPECT_EQ(static_cast<int>(DType::kInt8), 4);
  EXPECT_EQ(static_cast<int>(DType::kFp8E4M3), 5);
  EXPECT_EQ(static_cast<int>(DType::kFp8E5M2), 6);
  EXPECT_EQ(dtype_from_code(3), DType::kBf16);
  EXPECT_EQ(dtype_from_code(6), DType::kFp8E5M2);
  EXPECT_EQ(dtype_from_code(7), std::nullopt);
  EXPECT_EQ(dtype_from_code(255), std::nullopt);
  EXPECT_EQ(reduce_op_from_code(2), ReduceOp::kMax);
  EXPECT_EQ(reduce_op_from_code(3), std::nullopt);
}

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::kInt32, DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt8,
                  DType::kFp8E4M3, DType::kFp8E5M2})
    EXPECT_EQ(parse_dtype(to_string(t)), t);
  EXPECT_EQ(to_string(DType::kFp8E4M3), "fp8_e4m3");
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax})
    EXPECT_EQ(parse_reduce_op(to_string(op)), op);
  EXPECT_EQ(to_string(DType::kBf16), "bf16");
  EXPECT_EQ(to_string(ReduceOp::kMin), "min");
}

TEST(DType, RejectsUnknownNames) {
  EXPECT_EQ(parse_dtype("float32"), std::nullopt);
  EXPECT_EQ(parse_dtype("FP16"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
  EXPECT_EQ(parse_reduce_op("prod"), std::nullopt);
  EXPECT_EQ(to_string(static_cast<DType>(9)), "invalid");
  EXPECT_EQ(to_string(static_cast<ReduceOp>(9)), "invalid");
}

}  // namespace
}  // namespace epic::vocab
