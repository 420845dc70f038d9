// The exact partial one switch sends its parent switch for an exact sum (KULISCH_FIXED, a
// float type): the payload of the upward packet of a slot, in the AUTO wire policy — the
// narrowest of three forms that holds every element's exact partial sum and its sideband
// flags losslessly: kPlain when it can, else the shorter of kFixed64 and kWide that can. It is an
// EPIC-to-EPIC hop only: ranks always send and receive their plain dtype. docs/arithmetic.md "AUTO"
// describes the forms with examples.
//
//   header (8 bytes, little-endian)
//     u8  magic       kPartialMagic
//     u8  form        PartialForm
//     u8  dtype       the dtype's wire code
//     u8  flags       bit 0: a flags section follows the body
//     u16 elements    n, the elements of the packet (the ranks' payload / wire_bytes(dtype))
//     i16 scale       kFixed64: the exponent of every element's unit, see below; else 0
//   body
//     kPlain    n values of the dtype, each exactly the element's partial (NaN, +-inf and
//               +-0 in their own encodings: no flags section)
//     kFixed64  n int64 I_i: element i = I_i * 2^scale * q, q the dtype's smallest subnormal
//     kWide     n * D uint32 digits, element-major, least significant first: the element's
//               value / q as a two's complement integer of 32*D bits,
//               D = kulisch_wide_digits(dtype, R)
//   flags section (kFixed64, kWide, when header.flags bit 0): n bytes of PartialFlag
//
// A receiver refuses a partial whose header, length, dtype or element count does not match
// the slot (counted, the slot unchanged).
// Threading: constants and pure functions.
#pragma once

#include <cstdint>

#include "proto/vocab/arith.h"

namespace epic::vocab {

inline constexpr uint8_t kPartialMagic = 0xE5;
inline constexpr uint32_t kPartialHeaderBytes = 8;

enum class PartialForm : uint8_t { kPlain = 1, kFixed64 = 2, kWide = 3 };

// Sideband flags of one element (the Kulisch accumulator's flag byte has the same bits).
enum PartialFlag : uint8_t {
  kFlagNan = 1,         // a NaN was summed, or +inf and -inf were
  kFlagPosInf = 2,      // +inf was summed
  kFlagNegInf = 4,      // -inf was summed
  kFlagNotNegZero = 8,  // some contribution was not -0 (a zero result is -0 only without it)
};

// 32-bit digits of a kWide element: ceil(W / 32), W = exact_width_bits(t, R).
constexpr uint32_t kulisch_wide_digits(DType t, uint32_t contributors) {
  return (exact_width_bits(t, contributors) + 31) / 32;
}

// Payload bytes of each form for n elements (flags section included where it may appear).
constexpr uint32_t partial_bytes(PartialForm form, DType t, uint32_t n, uint32_t contributors,
                                 bool with_flags) {
  const uint32_t flags = with_flags ? n : 0;
  switch (form) {
    case PartialForm::kPlain:
      return kPartialHeaderBytes + n * static_cast<uint32_t>(wire_bytes(t));
    case PartialForm::kFixed64:
      return kPartialHeaderBytes + n * 8 + flags;
    case PartialForm::kWide:
      return kPartialHeaderBytes + n * 4 * kulisch_wide_digits(t, contributors) + flags;
  }
  return 0;
}

// The largest partial payload a packet of `pmtu` payload bytes of `t` can need: kWide with
// flags (kPlain is never longer, and AUTO takes kFixed64 only when it is shorter than kWide). A
// tree's switch-to-switch ports need an IP MTU of at least this plus kRoceOverheadBytes for an
// exact sum of `t` (context validation checks it).
constexpr uint32_t max_partial_bytes(uint32_t pmtu, DType t, uint32_t contributors) {
  const uint32_t n = pmtu / static_cast<uint32_t>(wire_bytes(t));
  return partial_bytes(PartialForm::kWide, t, n, contributors, true);
}

// The largest exact partial a group of `arith` can send up (0 unless it sums floats exactly):
// the largest max_partial_bytes over the float types whose exact sum fits its slots. What a
// non-root switch's partial buffer and its switch-to-switch ports' MTU must hold.
constexpr uint32_t max_group_partial_bytes(uint32_t pmtu, const GroupArith& arith,
                                           uint32_t contributors) {
  uint32_t most = 0;
  for (uint8_t code = 0; code < kNumDTypes; ++code) {
    const auto t = static_cast<DType>(code);
    if (uses_kulisch(arith.profile, t, ReduceOp::kSum) &&
        collective_fits(pmtu, arith, contributors, t, ReduceOp::kSum)) {
      const uint32_t b = max_partial_bytes(pmtu, t, contributors);
      most = b > most ? b : most;
    }
  }
  return most;
}

}  // namespace epic::vocab
