#include "datapath/arith/element.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace epic::arith::reference {
namespace {

// A binary floating-point format narrower than binary32, by its field widths.
// IEEE-like formats (fp16, bf16, fp8 E5M2) reserve the all-ones exponent for
// +-inf (mantissa 0) and NaN; "finite-only" formats (fp8 E4M3FN) use it for
// normal values except the all-ones mantissa, their only NaN, and have no inf.
struct Format {
  int exp_bits = 0;
  int man_bits = 0;
  uint32_t canonical_nan = 0;
  bool finite_only = false;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int emin() const { return 1 - bias(); }
  int emax() const { return finite_only ? bias() + 1 : bias(); }
  uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  uint32_t man_mask() const { return (1u << man_bits) - 1; }
  uint32_t exp_ones() const { return (1u << exp_bits) - 1; }
  uint32_t inf() const { return exp_ones() << man_bits; }  // IEEE-like formats only
};

constexpr Format kFp16{5, 10, kCanonicalNanFp16};
constexpr Format kBf16{8, 7, kCanonicalNanBf16};
constexpr Format kE5M2{5, 2, kCanonicalNanE5M2};
constexpr Format kE4M3{4, 3, kCanonicalNanE4M3, true};

float decode(const Format& f, uint32_t bits) {
  const uint32_t man = bits & f.man_mask();
  const uint32_t exp = (bits >> f.man_bits) & f.exp_ones();
  const bool negative = (bits & f.sign_bit()) != 0;
  double magnitude;
  if (f.finite_only && exp == f.exp_ones() && man == f.man_mask()) {
    return std::bit_cast<float>(kCanonicalNanFp32);
  }
  if (!f.finite_only && exp == f.exp_ones()) {
    if (man != 0) return std::bit_cast<float>(kCanonicalNanFp32);
    magnitude = std::numeric_limits<double>::infinity();
  } else if (exp == 0) {  // zero or subnormal: man * 2^(emin - man_bits)
    magnitude = std::ldexp(static_cast<double>(man), f.emin() - f.man_bits);
  } else {  // normal: (2^man_bits + man) * 2^(exp - bias - man_bits)
    magnitude = std::ldexp(static_cast<double>((1u << f.man_bits) + man),
                           static_cast<int>(exp) - f.bias() - f.man_bits);
  }
  // Exact: every value of the narrow format is a binary32 value.
  return static_cast<float>(negative ? -magnitude : magnitude);
}

// Nearest integer to q >= 0, ties to the even one (does not depend on the
// current rounding mode).
double round_half_even(double q) {
  const double floor = std::floor(q);
  const double fraction = q - floor;  // exact
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return std::fmod(floor, 2.0) == 0 ? floor : floor + 1;
}

uint32_t encode(const Format& f, float value) {
  if (std::isnan(value)) return f.canonical_nan;
  const uint32_t sign = std::signbit(value) ? f.sign_bit() : 0;
  // What a value beyond the largest finite one becomes: +-inf, or NaN in a
  // format without infinities (OCP's non-saturating conversion).
  const uint32_t overflow = f.finite_only ? f.canonical_nan : (sign | f.inf());
  const double a = std::fabs(static_cast<double>(value));
  if (std::isinf(a)) return overflow;
  if (a == 0) return sign;
  // The quantum of the target format at a: 2^(e - man_bits), where e is a's
  // binade exponent, or emin for the subnormal range. Rounding happens on this
  // grid as if the exponent range were unbounded above; a result past the
  // largest finite value overflows.
  int x;
  std::frexp(a, &x);  // a = m * 2^x, m in [0.5, 1)
  int e = std::max(x - 1, f.emin());
  double r = round_half_even(std::ldexp(a, f.man_bits - e));  // a / quantum, exact
  const double one = std::ldexp(1.0, f.man_bits);             // the implicit bit
  if (r == 2 * one) {                                         // rounded up into the next binade
    r = one;
    ++e;
  }
  if (e > f.emax()) return overflow;
  const auto m = static_cast<uint32_t>(r);
  if (r < one) return sign | m;  // subnormal (e == emin)
  const uint32_t pattern =
      (static_cast<uint32_t>(e + f.bias()) << f.man_bits) | (m - (1u << f.man_bits));
  // E4M3FN: the all-ones pattern (S.1111.111, 480) is NaN, not a value.
  if (f.finite_only && pattern == (f.sign_bit() - 1)) return overflow;
  return sign | pattern;
}

}  // namespace

float widen_fp16(uint16_t bits) { return decode(kFp16, bits); }
float widen_bf16(uint16_t bits) { return decode(kBf16, bits); }
uint16_t narrow_fp16(float value) { return static_cast<uint16_t>(encode(kFp16, value)); }
uint16_t narrow_bf16(float value) { return static_cast<uint16_t>(encode(kBf16, value)); }
float widen_e4m3(uint8_t bits) { return decode(kE4M3, bits); }
float widen_e5m2(uint8_t bits) { return decode(kE5M2, bits); }
uint8_t narrow_e4m3(float value) { return static_cast<uint8_t>(encode(kE4M3, value)); }
uint8_t narrow_e5m2(float value) { return static_cast<uint8_t>(encode(kE5M2, value)); }

float canonical(float value) {
  return std::isnan(value) ? std::bit_cast<float>(kCanonicalNanFp32) : value;
}

int32_t sum(int32_t acc, int32_t x) {
  // Unsigned addition wraps; the conversion back is modular since C++20.
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(x));
}
int32_t min(int32_t acc, int32_t x) { return x < acc ? x : acc; }
int32_t max(int32_t acc, int32_t x) { return x > acc ? x : acc; }

int8_t sum(int8_t acc, int8_t x) {
  // Added as int (no overflow), reduced modulo 2^8 by the conversions (modular since C++20).
  return static_cast<int8_t>(static_cast<uint8_t>(acc + x));
}
int8_t min(int8_t acc, int8_t x) { return x < acc ? x : acc; }
int8_t max(int8_t acc, int8_t x) { return x > acc ? x : acc; }

float sum(float acc, float x) { return canonical(acc + x); }

// Equal operands differ at most in the sign of zero: OR of the bits picks -0
// (min), AND picks +0 (max).
float min(float acc, float x) {
  if (std::isnan(acc) || std::isnan(x)) return std::bit_cast<float>(kCanonicalNanFp32);
  if (x < acc) return x;
  if (acc < x) return acc;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(acc) | std::bit_cast<uint32_t>(x));
}

float max(float acc, float x) {
  if (std::isnan(acc) || std::isnan(x)) return std::bit_cast<float>(kCanonicalNanFp32);
  if (x > acc) return x;
  if (acc > x) return acc;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(acc) & std::bit_cast<uint32_t>(x));
}

}  // namespace epic::arith::reference
