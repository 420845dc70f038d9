// Internal to datapath/arith/kulisch*.cc: a float type's bit fields and the decoding of one
// element into an exact deposit (value / q = ±M · 2^shift, q the smallest subnormal) and its
// sideband flags (proto/vocab/partial.h PartialFlag), from vocab::float_format.
// Threading: pure functions and constants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/arith/dtype.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/partial.h"

namespace epic::arith::kulisch::detail {

// 128-bit integers for carries (a GCC/Clang extension; __extension__ keeps -Wpedantic quiet).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

struct Format {
  uint32_t width = 0;  // bytes on the wire
  uint32_t mbits = 0;  // stored mantissa bits (p - 1)
  uint32_t ebits = 0;
  uint32_t top = 0;     // all-ones exponent field
  bool has_inf = true;  // E4M3FN: no infinity, only S.1111.111 is NaN
  uint32_t nan = 0;     // canonical NaN
};

inline bool format_of(DType t, Format& f) {
  const auto ff = vocab::float_format(t);
  if (!ff) return false;
  f.width = static_cast<uint32_t>(vocab::wire_bytes(t));
  f.mbits = static_cast<uint32_t>(ff->precision - 1);
  f.ebits = static_cast<uint32_t>(ff->exponent_bits);
  f.top = (1u << f.ebits) - 1;
  f.has_inf = t != DType::kFp8E4M3;
  switch (t) {
    case DType::kFp32:
      f.nan = 0x7FC00000;
      break;
    case DType::kBf16:
      f.nan = 0x7FC0;
      break;
    case DType::kFp16:
      f.nan = 0x7E00;
      break;
    case DType::kFp8E5M2:
      f.nan = 0x7E;
      break;
    default:
      f.nan = 0x7F;
      break;
  }
  return true;
}

inline uint32_t read_bits(const Format& f, const uint8_t* p) {
  uint32_t x = 0;
  std::memcpy(&x, p, f.width);  // little-endian hosts (docs/arithmetic.md)
  return x;
}

inline void write_bits(const Format& f, uint8_t* p, uint32_t x) { std::memcpy(p, &x, f.width); }

// One element: a finite deposit (negative, m, shift) or only flags.
struct Deposit {
  bool negative = false;
  uint64_t m = 0;  // integer significand (0 for zeros and specials)
  uint32_t shift = 0;
  uint8_t flags = 0;
};

inline Deposit decode(const Format& f, uint32_t x) {
  Deposit d;
  const uint32_t sign = (x >> (f.ebits + f.mbits)) & 1;
  const uint32_t field = (x >> f.mbits) & f.top;
  const uint32_t mant = x & ((1u << f.mbits) - 1);
  if (f.has_inf && field == f.top) {
    d.flags = mant != 0 ? vocab::kFlagNan : (sign ? vocab::kFlagNegInf : vocab::kFlagPosInf);
    d.flags |= vocab::kFlagNotNegZero;
    return d;
  }
  if (!f.has_inf && field == f.top && mant == (1u << f.mbits) - 1) {
    d.flags = vocab::kFlagNan | vocab::kFlagNotNegZero;
    return d;
  }
  d.negative = sign != 0;
  d.m = field != 0 ? (mant | (1u << f.mbits)) : mant;
  d.shift = field != 0 ? field - 1 : 0;
  d.flags = (sign && field == 0 && mant == 0) ? 0 : vocab::kFlagNotNegZero;
  return d;
}

// The exact value of one element as a sign and a magnitude of 32-bit digits (least significant
// first): enough for every layout (319 bits) and every partial (W <= 295 bits).
inline constexpr size_t kDigits = 11;
struct Exact {
  bool negative = false;
  uint32_t mag[kDigits] = {};
  uint8_t flags = 0;
  bool zero() const {
    for (uint32_t d : mag)
      if (d) return false;
    return true;
  }
  // Bit length of the magnitude (0 for zero).
  uint32_t bits() const {
    for (size_t j = kDigits; j-- > 0;) {
      if (mag[j]) return static_cast<uint32_t>(32 * j + 32 - __builtin_clz(mag[j]));
    }
    return 0;
  }
  bool bit(uint32_t i) const { return i / 32 < kDigits && ((mag[i / 32] >> (i % 32)) & 1); }
  bool any_below(uint32_t i) const {  // a bit set below bit i
    for (uint32_t j = 0; j < i / 32 && j < kDigits; ++j)
      if (mag[j]) return true;
    if (i / 32 < kDigits && i % 32 && (mag[i / 32] & ((1u << (i % 32)) - 1))) return true;
    return false;
  }
  uint64_t bits_at(uint32_t from, uint32_t count) const {  // count <= 64 bits from bit `from`
    const uint32_t w = from / 32, sh = from % 32;
    Uint128 t = 0;
    for (uint32_t j = 0; j < 3; ++j) {
      if (w + j < kDigits) t |= static_cast<Uint128>(mag[w + j]) << (32 * j);
    }
    const uint64_t v = static_cast<uint64_t>(t >> sh);
    return count >= 64 ? v : v & ((uint64_t{1} << count) - 1);
  }
  uint32_t lowest_bit() const {  // of a nonzero magnitude
    for (uint32_t j = 0; j < kDigits; ++j)
      if (mag[j]) return 32 * j + static_cast<uint32_t>(__builtin_ctz(mag[j]));
    return 0;
  }
};

// A signed two's complement integer of 32-bit digits (least significant first) -> Exact.
inline void set_twos_complement(Exact& e, const uint32_t* digits, size_t count) {
  const bool negative = count > 0 && (digits[count - 1] >> 31) != 0;
  e.negative = negative;
  uint64_t carry = 1;
  for (size_t j = 0; j < kDigits; ++j) {
    uint32_t d = j < count ? digits[j] : (negative ? 0xFFFFFFFFu : 0);
    if (negative) {
      const uint64_t t = uint64_t{static_cast<uint32_t>(~d)} + carry;
      d = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    e.mag[j] = d;
  }
}

// A finite magnitude mag·2^ex (+ something below 2^ex when `sticky`), with its sign, rounded
// once to nearest even into the type (subnormals exact, overflow -> inf or E4M3's NaN).
// `lossless` (may be null) is set to whether nothing was rounded away or overflowed.
inline uint32_t round_magnitude(const Format& f, bool negative, uint64_t mag, uint32_t ex,
                                bool sticky, bool* lossless) {
  const uint32_t sign_bit = negative ? 1u << (f.ebits + f.mbits) : 0;
  const uint32_t p = f.mbits + 1;
  const uint32_t nb = 64 - static_cast<uint32_t>(__builtin_clzll(mag));
  const uint32_t total = nb + ex;
  uint64_t m = mag;
  uint32_t sh = 0;
  bool exact = !sticky;
  if (total > p) {
    sh = total - p;
    const uint32_t local = sh - ex;  // >= 1: callers pass ex > 0 only with a 64-bit window
    m = mag >> local;
    const uint64_t rem = mag & ((uint64_t{1} << local) - 1);
    const uint64_t half = uint64_t{1} << (local - 1);
    exact = exact && rem == 0;
    if (rem > half || (rem == half && (sticky || (m & 1)))) ++m;
    if (m == (uint64_t{1} << p)) {
      m >>= 1;
      ++sh;
    }
  }
  uint32_t field, mant;
  if (m < (uint64_t{1} << f.mbits)) {  // subnormal (only without a shift)
    field = 0;
    mant = static_cast<uint32_t>(m);
  } else {
    field = sh + 1;
    mant = static_cast<uint32_t>(m - (uint64_t{1} << f.mbits));
  }
  const bool overflow = f.has_inf
                            ? field >= f.top
                            : (field > f.top || (field == f.top && mant == (1u << f.mbits) - 1));
  if (lossless) *lossless = exact && !overflow;
  if (overflow) return f.has_inf ? ((f.top << f.mbits) | sign_bit) : f.nan;
  return sign_bit | field << f.mbits | mant;
}

// The sideband first (kulisch.h): NaN, infinities; then zero's sign; else nullopt-like false.
inline bool special_result(const Format& f, uint8_t flags, bool zero, uint32_t& out) {
  const uint32_t sign_bit = 1u << (f.ebits + f.mbits);
  const uint32_t inf = f.has_inf ? f.top << f.mbits : f.nan;
  if ((flags & vocab::kFlagNan) || ((flags & vocab::kFlagPosInf) && (flags & vocab::kFlagNegInf))) {
    out = f.nan;
  } else if (flags & vocab::kFlagPosInf) {
    out = inf;
  } else if (flags & vocab::kFlagNegInf) {
    out = f.has_inf ? (inf | sign_bit) : f.nan;
  } else if (zero) {
    out = (flags & vocab::kFlagNotNegZero) ? 0 : sign_bit;
  } else {
    return false;
  }
  return true;
}

// Exact -> the type's bits, rounded once to nearest even, canonicalised (kulisch.h). `lossless`
// (may be null) is set to whether no rounding or overflow happened (finite, exact value).
inline uint32_t round_once(const Format& f, const Exact& e, bool* lossless) {
  if (lossless) *lossless = true;
  uint32_t out;
  if (special_result(f, e.flags, e.zero(), out)) return out;
  const uint32_t nb = e.bits();
  if (nb <= 64) return round_magnitude(f, e.negative, e.bits_at(0, 64), 0, false, lossless);
  return round_magnitude(f, e.negative, e.bits_at(nb - 64, 64), nb - 64, e.any_below(nb - 64),
                         lossless);
}

}  // namespace epic::arith::kulisch::detail
