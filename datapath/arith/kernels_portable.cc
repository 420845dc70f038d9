// Portable kernels: plain C++ on the bit patterns, for any CPU without AVX2
// (ARM, old x86) — the fallback the dispatcher picks there. Same results as
// `reference::` bit for bit, at a fraction of its cost: the reference computes
// each conversion in exact double arithmetic; this file uses integer rounding
// and, for fp16 subnormals, the hardware's own round-to-nearest-even (adding
// 0.5f aligns the value to a quantum of 2^-24, the fp16 subnormal step).
// Simple loops over memcpy'd elements, which compilers vectorise for the
// baseline ISA where they can.
#include <algorithm>
#include <bit>
#include <cstring>

#include "datapath/arith/element.h"
#include "datapath/arith/kernels.h"

namespace epic::arith {
namespace {

template <typename T>
T read(const uint8_t* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void write(uint8_t* p, size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

constexpr uint32_t kAbs = 0x7FFFFFFF;
constexpr uint32_t kInf32 = 0x7F800000;

inline bool is_nan(uint32_t x) { return (x & kAbs) > kInf32; }
inline uint32_t canonical(uint32_t x) { return is_nan(x) ? kCanonicalNanFp32 : x; }

// Written as selects, without early returns, so that compilers can vectorise
// the loops (SSE2 on x86-64, NEON on AArch64); GCC also needs
// -fno-trapping-math for the float operations inside selects (CMakeLists.txt).
inline uint32_t widen_fp16(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t em = h & 0x7FFFu;                          // exponent and mantissa
  const uint32_t normal = (em << 13) + ((127 - 15) << 23);  // rebias the exponent
  // Zero or subnormal, em * 2^-24: read em as the mantissa of a number in
  // [2^-14, 2^-13) and subtract 2^-14 (exact, Sterbenz).
  const auto small =
      std::bit_cast<uint32_t>(std::bit_cast<float>((em << 13) + (113u << 23)) - 0x1p-14f);
  const uint32_t finite = sign | (em >= 0x0400 ? normal : small);
  const uint32_t special = em == 0x7C00 ? (sign | kInf32) : kCanonicalNanFp32;
  return em >= 0x7C00 ? special : finite;
}

inline uint16_t narrow_fp16(uint32_t x) {
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t a = x & kAbs;
  // >= 2^-14, an fp16 normal: round to nearest even at bit 13, rebias.
  const uint32_t normal = (a + 0xFFF + ((a >> 13) & 1) - ((127 - 15) << 23)) >> 13;
  // Below 2^-14: 0.5f + |v| is rounded by the FPU to a multiple of 2^-24; the
  // mantissa bits above 0.5 are the fp16 subnormal (or 0x400 when it rounds
  // up to the smallest normal).
  const uint32_t small = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 0.5f) - 0x3F000000;
  uint32_t r = a >= 0x38800000 ? normal : small;
  r = a >= 0x477FF000 ? 0x7C00 : r;  // >= 65520 (the tie above 65504) -> inf
  return static_cast<uint16_t>(a > kInf32 ? kCanonicalNanFp16 : (sign | r));
}

inline uint32_t widen_bf16(uint16_t b) { return canonical(uint32_t{b} << 16); }

inline uint16_t narrow_bf16(uint32_t x) {
  if (is_nan(x)) return kCanonicalNanBf16;
  return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);  // cannot wrap: not NaN
}

// Per DType: wire element type and the conversions, on bit patterns.
struct Int32 {
  using Wire = uint32_t;
  static uint32_t widen(uint32_t w) { return w; }
  static uint32_t narrow(uint32_t a) { return a; }
};
struct Fp32 {
  using Wire = uint32_t;
  static uint32_t widen(uint32_t w) { return canonical(w); }
  static uint32_t narrow(uint32_t a) { return canonical(a); }
};
struct Fp16 {
  using Wire = uint16_t;
  static uint32_t widen(uint16_t w) { return widen_fp16(w); }
  static uint16_t narrow(uint32_t a) { return narrow_fp16(a); }
};
struct Bf16 {
  using Wire = uint16_t;
  static uint32_t widen(uint16_t w) { return widen_bf16(w); }
  static uint16_t narrow(uint32_t a) { return narrow_bf16(a); }
};

inline float f32(uint32_t b) { return std::bit_cast<float>(b); }

struct SumI32 {
  static uint32_t apply(uint32_t a, uint32_t x) { return a + x; }  // wraps
};
struct MinI32 {
  static uint32_t apply(uint32_t a, uint32_t x) {
    return static_cast<int32_t>(x) < static_cast<int32_t>(a) ? x : a;
  }
};
struct MaxI32 {
  static uint32_t apply(uint32_t a, uint32_t x) {
    return static_cast<int32_t>(x) > static_cast<int32_t>(a) ? x : a;
  }
};
struct SumF32 {
  static uint32_t apply(uint32_t a, uint32_t x) {
    return canonical(std::bit_cast<uint32_t>(f32(a) + f32(x)));
  }
};
// Ordered as signed integers, these keys follow the numeric order of the
// non-NaN floats, with -0 below +0 (IEEE 754 totalOrder): min(-0, +0) = -0 and
// max(-0, +0) = +0 fall out, and integer compares vectorise.
inline int32_t order_key(uint32_t x) {
  return static_cast<int32_t>(x ^ (static_cast<uint32_t>(static_cast<int32_t>(x) >> 31) >> 1));
}
// One compare: a NaN has the largest magnitude bits.
inline bool either_nan(uint32_t a, uint32_t x) { return std::max(a & kAbs, x & kAbs) > kInf32; }

struct MinF32 {
  static uint32_t apply(uint32_t a, uint32_t x) {
    const uint32_t r = order_key(x) < order_key(a) ? x : a;
    return either_nan(a, x) ? kCanonicalNanFp32 : r;
  }
};
struct MaxF32 {
  static uint32_t apply(uint32_t a, uint32_t x) {
    const uint32_t r = order_key(x) > order_key(a) ? x : a;
    return either_nan(a, x) ? kCanonicalNanFp32 : r;
  }
};

template <typename C>
void load_k(uint8_t* acc, const uint8_t* wire, size_t n) {
  for (size_t i = 0; i < n; ++i) write<uint32_t>(acc, i, C::widen(read<typename C::Wire>(wire, i)));
}

template <typename C, typename Op>
void combine_k(uint8_t* acc, const uint8_t* wire, size_t n) {
  for (size_t i = 0; i < n; ++i)
    write<uint32_t>(acc, i,
                    Op::apply(read<uint32_t>(acc, i), C::widen(read<typename C::Wire>(wire, i))));
}

template <typename C>
void store_k(uint8_t* wire, const uint8_t* acc, size_t n) {
  for (size_t i = 0; i < n; ++i)
    write<typename C::Wire>(wire, i, C::narrow(read<uint32_t>(acc, i)));
}

constexpr Kernels kPortable = {
    .isa = Isa::kPortable,
    .load = {load_k<Int32>, load_k<Fp32>, load_k<Fp16>, load_k<Bf16>},
    .combine = {{combine_k<Int32, SumI32>, combine_k<Int32, MinI32>, combine_k<Int32, MaxI32>},
                {combine_k<Fp32, SumF32>, combine_k<Fp32, MinF32>, combine_k<Fp32, MaxF32>},
                {combine_k<Fp16, SumF32>, combine_k<Fp16, MinF32>, combine_k<Fp16, MaxF32>},
                {combine_k<Bf16, SumF32>, combine_k<Bf16, MinF32>, combine_k<Bf16, MaxF32>}},
    .store = {store_k<Int32>, store_k<Fp32>, store_k<Fp16>, store_k<Bf16>},
};

}  // namespace

const Kernels* detail::portable_kernels() { return &kPortable; }

}  // namespace epic::arith
