// Portable kernels: plain C++ on the bit patterns, for any CPU without AVX2
// (ARM, old x86) — the fallback the dispatcher picks there. Same results as
// `reference::` bit for bit, at a fraction of its cost: the reference computes
// each conversion in exact double arithmetic; this file uses integer rounding
// and, for fp16 and fp8 subnormals, the hardware's own round-to-nearest-even
// (adding 0.5f aligns the value to a quantum of 2^-24, the fp16 subnormal
// step; 128.0f to 2^-16 for E5M2, 16384.0f to 2^-9 for E4M3).
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

// fp8 E5M2 is the upper byte of an fp16: widening is fp16's.
inline uint32_t widen_e5m2(uint8_t b) { return widen_fp16(static_cast<uint16_t>(b << 8)); }

// Rounded once from the binary32 bits (not through fp16, which would round
// twice): bit 21 is E5M2's last mantissa bit at normal magnitudes.
inline uint8_t narrow_e5m2(uint32_t x) {
  const uint32_t sign = (x >> 24) & 0x80;
  const uint32_t a = x & kAbs;
  // >= 2^-14, an E5M2 normal: round to nearest even at bit 21, rebias.
  const uint32_t normal = (a + 0xFFFFF + ((a >> 21) & 1) - ((127 - 15) << 23)) >> 21;
  // Below 2^-14: 128 + |v| is rounded by the FPU to a multiple of 2^-16, the
  // E5M2 subnormal step; the low bits count the steps (4: the smallest normal).
  const uint32_t small = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 128.0f) - 0x43000000;
  uint32_t r = a >= 0x38800000 ? normal : small;
  r = a >= 0x47700000 ? 0x7C : r;  // >= 61440 (the tie above 57344) -> inf
  return static_cast<uint8_t>(a > kInf32 ? kCanonicalNanE5M2 : (sign | r));
}

// E4M3: exponent and mantissa move into binary32's fields (rebias 7 -> 127);
// subnormals m * 2^-9 are m converted to float and scaled (both exact).
inline uint32_t widen_e4m3(uint8_t b) {
  const uint32_t sign = uint32_t{b & 0x80u} << 24;
  const uint32_t em = b & 0x7Fu;
  const uint32_t normal = (em << 20) + ((127 - 7) << 23);
  const auto small =
      std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-9f);
  const uint32_t finite = sign | (em >= 0x08 ? normal : small);
  return em == 0x7F ? kCanonicalNanFp32 : finite;
}

// Rounded once from the binary32 bits; no infinity: anything above 464 (the
// tie between 448 and the missing 480, which goes to 448) is the NaN 0x7F.
inline uint8_t narrow_e4m3(uint32_t x) {
  const uint32_t sign = (x >> 24) & 0x80;
  const uint32_t a = x & kAbs;
  // >= 2^-6, an E4M3 normal: round to nearest even at bit 20, rebias.
  const uint32_t normal = (a + 0x7FFFF + ((a >> 20) & 1) - ((127 - 7) << 23)) >> 20;
  // Below 2^-6: 16384 + |v| is rounded to a multiple of 2^-9 (the subnormal
  // step); the low bits count the steps (8: the smallest normal).
  const uint32_t small = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 16384.0f) - 0x46800000;
  const uint32_t r = a >= 0x3C800000 ? normal : small;
  return static_cast<uint8_t>(a > 0x43E80000 ? kCanonicalNanE4M3 : (sign | r));  // > 464, inf, NaN
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

struct Fp8E4M3 {
  using Wire = uint8_t;
  static uint32_t widen(uint8_t w) { return widen_e4m3(w); }
  static uint8_t narrow(uint32_t a) { return narrow_e4m3(a); }
};
struct Fp8E5M2 {
  using Wire = uint8_t;
  static uint32_t widen(uint8_t w) { return widen_e5m2(w); }
  static uint8_t narrow(uint32_t a) { return narrow_e5m2(a); }
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

// int8: one-byte accumulators, wrapping sum, signed min/max.
struct SumI8 {
  static uint8_t apply(uint8_t a, uint8_t x) { return static_cast<uint8_t>(a + x); }  // wraps
};
struct MinI8 {
  static uint8_t apply(uint8_t a, uint8_t x) {
    return static_cast<int8_t>(x) < static_cast<int8_t>(a) ? x : a;
  }
};
struct MaxI8 {
  static uint8_t apply(uint8_t a, uint8_t x) {
    return static_cast<int8_t>(x) > static_cast<int8_t>(a) ? x : a;
  }
};

template <typename Op>
void combine_i8(uint8_t* acc, const uint8_t* wire, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] = Op::apply(acc[i], wire[i]);
}

// int8 load and store: the accumulator is the wire format.
void copy8(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n != 0) std::memcpy(dst, src, n);
}

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
    .load = {load_k<Int32>, load_k<Fp32>, load_k<Fp16>, load_k<Bf16>, copy8, load_k<Fp8E4M3>,
             load_k<Fp8E5M2>},
    .combine = {{combine_k<Int32, SumI32>, combine_k<Int32, MinI32>, combine_k<Int32, MaxI32>},
                {combine_k<Fp32, SumF32>, combine_k<Fp32, MinF32>, combine_k<Fp32, MaxF32>},
                {combine_k<Fp16, SumF32>, combine_k<Fp16, MinF32>, combine_k<Fp16, MaxF32>},
                {combine_k<Bf16, SumF32>, combine_k<Bf16, MinF32>, combine_k<Bf16, MaxF32>},
                {combine_i8<SumI8>, combine_i8<MinI8>, combine_i8<MaxI8>},
                {combine_k<Fp8E4M3, SumF32>, combine_k<Fp8E4M3, MinF32>,
                 combine_k<Fp8E4M3, MaxF32>},
                {combine_k<Fp8E5M2, SumF32>, combine_k<Fp8E5M2, MinF32>,
                 combine_k<Fp8E5M2, MaxF32>}},
    .store = {store_k<Int32>, store_k<Fp32>, store_k<Fp16>, store_k<Bf16>, copy8, store_k<Fp8E4M3>,
              store_k<Fp8E5M2>},
};

}  // namespace

const Kernels* detail::portable_kernels() { return &kPortable; }

}  // namespace epic::arith
