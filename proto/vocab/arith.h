// A group's arithmetic: its accumulator profile (PRISM, docs/arithmetic.md) and, optionally,
// the element type it was created for — and what follows from them for every process: the
// exact-sum width W of a type over R contributors, the bytes of one accumulator element, the
// bytes of one slot's accumulator, and whether a collective (dtype, op) fits a group's slots.
// inc-manager admits and grants with these figures, the engine sizes its slots and refuses
// collectives with them, libinc checks a call with them before sending: one definition.
//
//   FP32_ARRIVAL   int32 in int32_t, int8 in int8_t (both wrap), every float type in binary32,
//                  added in arrival order: fastest, order-dependent for float sums.
//   KULISCH_FIXED  a float sum deposits every finite input exactly into a fixed-point
//                  accumulator whose LSB is the type's smallest subnormal and rounds once at the
//                  end (round to nearest even): bitwise identical for any arrival order, tree
//                  shape and retransmission pattern. min/max and integer sums are exact in both
//                  profiles and use the FP32_ARRIVAL accumulators.
//
// Kulisch layouts (datapath/arith/kulisch.h implements them, this header sizes them):
//   fp8 E4M3   one int32 when W <= 32 (R <= 8192), else one int64
//   fp8 E5M2   one int64 (W = 33 + ceil(log2 R))
//   fp16       one int64 (W = 41 + ceil(log2 R))
//   bf16, fp32 nine int64 limbs, limb j holding 32-bit digit j of the value in carry-save form
//              (a deposit adds < 2^32 to two limbs, so 2^31 deposits never overflow); the
//              normalised value has 32*8 + 63 = 319 bits
// plus one byte of sideband flags per element (NaN, +inf, -inf, a contribution other than -0).
// Threading: constants and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "proto/vocab/dtype.h"

namespace epic::vocab {

// Wire/config codes: never renumber.
enum class AccumProfile : uint8_t { kFp32Arrival = 0, kKulischFixed = 1 };
inline constexpr size_t kNumAccumProfiles = 2;

// "fp32_arrival", "kulisch_fixed"; "invalid" otherwise. parse_profile is the exact inverse.
std::string_view to_string(AccumProfile p);
std::optional<AccumProfile> parse_profile(std::string_view name);

// A float type's parameters: significand precision p (with the hidden bit), the minimum and
// maximum normal exponents, the exponent bias, and the width of its exponent field.
struct FloatFormat {
  int precision;
  int emin;
  int emax;
  int bias;
  int exponent_bits;
};
// nullopt for int32 and int8.
constexpr std::optional<FloatFormat> float_format(DType t) {
  switch (t) {
    case DType::kFp32:
      return FloatFormat{24, -126, 127, 127, 8};
    case DType::kBf16:
      return FloatFormat{8, -126, 127, 127, 8};
    case DType::kFp16:
      return FloatFormat{11, -14, 15, 15, 5};
    case DType::kFp8E5M2:
      return FloatFormat{3, -14, 15, 15, 5};
    case DType::kFp8E4M3:  // E4M3FN: exponent field 1111 is normal except S.1111.111 (NaN)
      return FloatFormat{4, -6, 8, 7, 4};
    case DType::kInt32:
    case DType::kInt8:
      return std::nullopt;
  }
  return std::nullopt;
}

// ceil(log2 r) for r >= 1 (0 for r <= 1).
constexpr uint32_t ceil_log2(uint32_t r) {
  uint32_t bits = 0;
  while (bits < 32 && (uint64_t{1} << bits) < r) ++bits;
  return bits;
}

// PRISM's exact scalar-sum width in signed bits: W = (Emax - Emin + p) + ceil(log2 R) + 1
// (fp32 278+, bf16 262+, fp16 41+, E5M2 33+, E4M3 19+ ceil(log2 R)); 0 for integer types.
constexpr uint32_t exact_width_bits(DType t, uint32_t contributors) {
  const auto f = float_format(t);
  if (!f) return 0;
  return static_cast<uint32_t>(f->emax - f->emin + f->precision) + ceil_log2(contributors) + 1;
}

// The Kulisch accumulator of one element of float type `t` summed over `contributors`.
struct KulischLayout {
  uint8_t limbs = 0;       // 1, or 9 (carry-save 32-bit digits)
  uint8_t limb_bytes = 0;  // 4 or 8
  // Signed bits the layout holds exactly (32, 64, or 319 for nine carry-save limbs).
  uint32_t capacity_bits() const { return limbs == 1 ? limb_bytes * 8u : 32u * (limbs - 1u) + 63u; }
};
inline constexpr uint8_t kKulischWideLimbs = 9;
inline constexpr uint32_t kKulischFlagBytes = 1;  // sideband flags per element

constexpr KulischLayout kulisch_layout(DType t, uint32_t contributors) {
  switch (t) {
    case DType::kFp8E4M3:
      return exact_width_bits(t, contributors) <= 32 ? KulischLayout{1, 4} : KulischLayout{1, 8};
    case DType::kFp8E5M2:
    case DType::kFp16:
      return KulischLayout{1, 8};
    case DType::kFp32:
    case DType::kBf16:
      return KulischLayout{kKulischWideLimbs, 8};
    case DType::kInt32:
    case DType::kInt8:
      return KulischLayout{};
  }
  return KulischLayout{};
}

// True when `op` over `t` runs in a Kulisch accumulator under `profile`: a float sum under
// KULISCH_FIXED. Everything else uses the FP32_ARRIVAL accumulator.
constexpr bool uses_kulisch(AccumProfile profile, DType t, ReduceOp op) {
  return profile == AccumProfile::kKulischFixed && op == ReduceOp::kSum && is_float(t);
}

// Bytes of one element's accumulator for (t, op) under `profile` with `contributors` original
// contributions per element: FP32_ARRIVAL 1 for int8, else 4; Kulisch limbs*limb_bytes + 1.
constexpr uint32_t accum_element_bytes(AccumProfile profile, DType t, ReduceOp op,
                                       uint32_t contributors) {
  if (uses_kulisch(profile, t, op)) {
    const KulischLayout l = kulisch_layout(t, contributors);
    return uint32_t{l.limbs} * l.limb_bytes + kKulischFlagBytes;
  }
  return t == DType::kInt8 ? 1 : 4;
}

// Bytes of a slot's accumulator for one packet of (t, op): pmtu / wire_bytes(t) elements.
constexpr uint64_t packet_accum_bytes(uint32_t pmtu, AccumProfile profile, DType t, ReduceOp op,
                                      uint32_t contributors) {
  return uint64_t{pmtu} / wire_bytes(t) * accum_element_bytes(profile, t, op, contributors);
}

// What a group was created for. `dtype` unset: FP32_ARRIVAL sized for int32, fp32, fp16, bf16
// and int8 (2·pmtu bytes of accumulator per slot, as before fp8 existed; fp8 needs 4·pmtu, so
// a group that reduces fp8 names it). KULISCH_FIXED needs a dtype (admission refuses without).
struct GroupArith {
  AccumProfile profile = AccumProfile::kFp32Arrival;
  std::optional<DType> dtype{};
  friend bool operator==(const GroupArith&, const GroupArith&) = default;
};

// Bytes of one slot's accumulator for a group of `arith` with `contributors` ranks at path MTU
// `pmtu`: the largest packet_accum_bytes over sum/min/max of its dtype (and, unset, of the
// FP32_ARRIVAL types above). A collective of any (t, op) whose packet_accum_bytes fits runs.
constexpr uint64_t slot_accum_bytes(uint32_t pmtu, const GroupArith& arith, uint32_t contributors) {
  if (!arith.dtype) return uint64_t{pmtu} / 2 * 4;  // fp16/bf16 in binary32
  uint64_t most = 0;
  for (uint8_t op = 0; op < kNumReduceOps; ++op) {
    const uint64_t b = packet_accum_bytes(pmtu, arith.profile, *arith.dtype,
                                          static_cast<ReduceOp>(op), contributors);
    most = b > most ? b : most;
  }
  return most;
}

// Whether a collective reducing (t, op) fits the slots of a group (engine and libinc refuse it
// otherwise, with the same figures).
constexpr bool collective_fits(uint32_t pmtu, const GroupArith& arith, uint32_t contributors,
                               DType t, ReduceOp op) {
  return packet_accum_bytes(pmtu, arith.profile, t, op, contributors) <=
         slot_accum_bytes(pmtu, arith, contributors);
}

}  // namespace epic::vocab
