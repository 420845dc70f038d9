// Element types and reduction operators of a collective: their wire codes (the
// collective control message carries them), how wide an element is on the
// wire, and their stable names (config files, CLI, counters). How they
// accumulate is the switch's business (datapath/arith).
// Threading: pure functions over constants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace epic::vocab {

// The numeric values are wire codes (collective control messages carry them):
// never renumber.
enum class DType : uint8_t { kInt32 = 0, kFp32 = 1, kFp16 = 2, kBf16 = 3 };
enum class ReduceOp : uint8_t { kSum = 0, kMin = 1, kMax = 2 };

inline constexpr size_t kNumDTypes = 4;
inline constexpr size_t kNumReduceOps = 3;

// Bytes per element on the wire: 4, 4, 2, 2.
constexpr size_t wire_bytes(DType t) { return t == DType::kFp16 || t == DType::kBf16 ? 2 : 4; }

// Wire code -> enum; nullopt for a code outside the enum (validate any value
// that came from a packet before it reaches load/combine/store).
constexpr std::optional<DType> dtype_from_code(uint8_t code) {
  if (code >= kNumDTypes) return std::nullopt;
  return static_cast<DType>(code);
}
constexpr std::optional<ReduceOp> reduce_op_from_code(uint8_t code) {
  if (code >= kNumReduceOps) return std::nullopt;
  return static_cast<ReduceOp>(code);
}

// "int32", "fp32", "fp16", "bf16"; "sum", "min", "max"; "invalid" otherwise.
std::string_view to_string(DType t);
std::string_view to_string(ReduceOp op);

// Inverse of to_string (exact, lower case); nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);

}  // namespace epic::vocab
