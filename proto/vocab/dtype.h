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
// fp8 types are the OCP 8-bit floating point formats (OCP FP8 v1.0, 2023): E4M3 is "E4M3FN"
// (bias 7, no infinities, S.1111.111 is NaN, largest finite 448), E5M2 is IEEE-like (bias 15,
// S.11111.00 is infinity, largest finite 57344).
enum class DType : uint8_t {
  kInt32 = 0,
  kFp32 = 1,
  kFp16 = 2,
  kBf16 = 3,
  kInt8 = 4,
  kFp8E4M3 = 5,
  kFp8E5M2 = 6,
};
enum class ReduceOp : uint8_t { kSum = 0, kMin = 1, kMax = 2 };

inline constexpr size_t kNumDTypes = 7;
inline constexpr size_t kNumReduceOps = 3;

// Bytes per element on the wire: int32/fp32 4, fp16/bf16 2, int8/fp8 1.
constexpr size_t wire_bytes(DType t) {
  switch (t) {
    case DType::kInt32:
    case DType::kFp32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kInt8:
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      return 1;
  }
  return 4;
}

// A binary floating-point type (an exact sum needs a Kulisch accumulator, proto/vocab/arith.h);
// int32 and int8 sums are exact in either profile.
constexpr bool is_float(DType t) { return t != DType::kInt32 && t != DType::kInt8; }

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

// "int32", "fp32", "fp16", "bf16", "int8", "fp8_e4m3", "fp8_e5m2"; "sum", "min", "max"; "invalid"
// otherwise.
std::string_view to_string(DType t);
std::string_view to_string(ReduceOp op);

// Inverse of to_string (exact, lower case); nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);

}  // namespace epic::vocab
