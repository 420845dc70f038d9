#include "proto/vocab/dtype.h"

#include <array>

namespace epic::vocab {
namespace {

constexpr std::array<std::string_view, kNumDTypes> kDTypeNames = {
    "int32", "fp32", "fp16", "bf16", "int8", "fp8_e4m3", "fp8_e5m2"};
constexpr std::array<std::string_view, kNumReduceOps> kOpNames = {"sum", "min", "max"};

}  // namespace

std::string_view to_string(DType t) {
  const auto i = static_cast<size_t>(t);
  return i < kDTypeNames.size() ? kDTypeNames[i] : "invalid";
}

std::string_view to_string(ReduceOp op) {
  const auto i = static_cast<size_t>(op);
  return i < kOpNames.size() ? kOpNames[i] : "invalid";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (size_t i = 0; i < kDTypeNames.size(); ++i)
    if (kDTypeNames[i] == name) return static_cast<DType>(i);
  return std::nullopt;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (kOpNames[i] == name) return static_cast<ReduceOp>(i);
  return std::nullopt;
}

}  // namespace epic::vocab
