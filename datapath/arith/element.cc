#include "datapath/arith/element.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace epic::arith::reference {
namespace {

// A binary interchange format narrower than binary32, by its field widths.
struct Format {
  int exp_bits;
  int man_bits;
  uint16_t canonical_nan;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int emin() const { return 1 - bias(); }
  int emax() const { return bias(); }
  uint16_t inf() const { return static_cast<uint16_t>(((1u << exp_bits) - 1) << man_bits); }
};

constexpr Format kFp16{5, 10, kCanonicalNanFp16};
constexpr Format kBf16{8, 7, kCanonicalNanBf16};

float decode(const Format& f, uint16_t bits) {
  const uint32_t man = bits & ((1u << f.man_bits) - 1);
  const uint32_t exp = (bits >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const bool negative = (bits & 0x8000) != 0;
  double magnitude;
  if (exp == (1u << f.exp_bits) - 1) {
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

uint16_t encode(const Format& f, float value) {
  if (std::isnan(value)) return f.canonical_nan;
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(value));
  if (std::isinf(a)) return sign | f.inf();
  if (a == 0) return sign;
  // The quantum of the target format at a: 2^(e - man_bits), where e is a's
  // binade exponent, or emin for the subnormal range.
  int x;
  std::frexp(a, &x);  // a = m * 2^x, m in [0.5, 1)
  int e = std::max(x - 1, f.emin());
  double r = round_half_even(std::ldexp(a, f.man_bits - e));  // a / quantum, exact
  const double one = std::ldexp(1.0, f.man_bits);             // the implicit bit
  if (r == 2 * one) {                                         // rounded up into the next binade
    r = one;
    ++e;
  }
  if (e > f.emax()) return sign | f.inf();
  const auto m = static_cast<uint32_t>(r);
  if (r < one) return static_cast<uint16_t>(sign | m);  // subnormal (e == emin)
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(e + f.bias()) << f.man_bits) |
                               (m - (1u << f.man_bits)));
}

}  // namespace

float widen_fp16(uint16_t bits) { return decode(kFp16, bits); }
float widen_bf16(uint16_t bits) { return decode(kBf16, bits); }
uint16_t narrow_fp16(float value) { return encode(kFp16, value); }
uint16_t narrow_bf16(float value) { return encode(kBf16, value); }

float canonical(float value) {
  return std::isnan(value) ? std::bit_cast<float>(kCanonicalNanFp32) : value;
}

int32_t sum(int32_t acc, int32_t x) {
  // Unsigned addition wraps; the conversion back is modular since C++20.
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(x));
}
int32_t min(int32_t acc, int32_t x) { return x < acc ? x : acc; }
int32_t max(int32_t acc, int32_t x) { return x > acc ? x : acc; }

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
