// AVX-512 (F + BW + VL) kernels: 16 elements per step in 512-bit registers
// (int8: 64), the ragged tail with masked loads and stores (no scalar loop,
// nothing touched past element n). fp16 converts with VCVTPH2PS / VCVTPS2PH
// (round to nearest even, exact on subnormals); bf16 widens by a 16-bit shift
// and narrows with an integer round-to-nearest-even, because VCVTNEPS2BF16
// flushes subnormals. fp8 as in kernels_avx2.cc: E5M2 widens as the upper byte
// of an fp16, E4M3 as an fp16 scaled by 2^-8; both narrow with one integer
// round-to-nearest-even from binary32 (FPU rounding for subnormals) and
// VPMOVDB. Compiled with function-level target attributes, so the
// rest of the build needs no -m flags; used only when the CPU reports all three
// extensions (avx512_kernels() below).
#include "datapath/arith/element.h"
#include "datapath/arith/kernels.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass `_mm512_undefined_*()` (a self-initialised
// variable) as the unused merge source and, once inlined, trip a false
// -Wmaybe-uninitialized (seen with GCC 12.2; clang is silent).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#define EPIC_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#define EPIC_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline

namespace epic::arith {
namespace {

// Accumulator vectors hold 16 elements as raw bits; the float operators cast.
using V = __m512i;

EPIC_AVX512_INLINE __m512 as_ps(V v) { return _mm512_castsi512_ps(v); }
EPIC_AVX512_INLINE V as_si(__m512 v) { return _mm512_castps_si512(v); }

// NaN lanes of v become the canonical fp32 NaN.
EPIC_AVX512_INLINE V canonical(V v) {
  const __mmask16 nan = _mm512_cmp_ps_mask(as_ps(v), as_ps(v), _CMP_UNORD_Q);
  return _mm512_mask_mov_epi32(v, nan, _mm512_set1_epi32(static_cast<int>(kCanonicalNanFp32)));
}

// --- wire formats: load 16 wire elements (all, or the lanes of a mask) and
// widen them to accumulator bits; narrow 16 accumulator elements and store.

struct Wire32 {
  static constexpr size_t kBytes = 4;
  EPIC_AVX512_INLINE static V read(const uint8_t* p) { return _mm512_loadu_si512(p); }
  EPIC_AVX512_INLINE static V read(const uint8_t* p, __mmask16 m) {
    return _mm512_maskz_loadu_epi32(m, p);
  }
  EPIC_AVX512_INLINE static void write(uint8_t* p, V v) { _mm512_storeu_si512(p, v); }
  EPIC_AVX512_INLINE static void write(uint8_t* p, V v, __mmask16 m) {
    _mm512_mask_storeu_epi32(p, m, v);
  }
};

struct Wire16 {
  static constexpr size_t kBytes = 2;
  using W = __m256i;
  EPIC_AVX512_INLINE static W read(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  EPIC_AVX512_INLINE static W read(const uint8_t* p, __mmask16 m) {
    return _mm256_maskz_loadu_epi16(m, p);
  }
  EPIC_AVX512_INLINE static void write(uint8_t* p, W v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  EPIC_AVX512_INLINE static void write(uint8_t* p, W v, __mmask16 m) {
    _mm256_mask_storeu_epi16(p, m, v);
  }
};

struct Wire8 {
  static constexpr size_t kBytes = 1;
  using W = __m128i;
  EPIC_AVX512_INLINE static W read(const uint8_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  EPIC_AVX512_INLINE static W read(const uint8_t* p, __mmask16 m) {
    return _mm_maskz_loadu_epi8(m, p);
  }
  EPIC_AVX512_INLINE static void write(uint8_t* p, W v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
  }
  EPIC_AVX512_INLINE static void write(uint8_t* p, W v, __mmask16 m) {
    _mm_mask_storeu_epi8(p, m, v);
  }
};

// `widen` may leave a non-canonical NaN (combine's operators canonicalise);
// `widen_canonical` is what load() writes.
struct Int32 : Wire32 {
  EPIC_AVX512_INLINE static V widen(V w) { return w; }
  EPIC_AVX512_INLINE static V widen_canonical(V w) { return w; }
  EPIC_AVX512_INLINE static V narrow(V a) { return a; }
};

struct Fp32 : Wire32 {
  EPIC_AVX512_INLINE static V widen(V w) { return w; }
  EPIC_AVX512_INLINE static V widen_canonical(V w) { return canonical(w); }
  EPIC_AVX512_INLINE static V narrow(V a) { return canonical(a); }
};

struct Fp16 : Wire16 {
  EPIC_AVX512_INLINE static V widen(W w) { return as_si(_mm512_cvtph_ps(w)); }
  EPIC_AVX512_INLINE static V widen_canonical(W w) { return canonical(widen(w)); }
  // The canonical fp32 NaN converts to the canonical fp16 NaN (0x7E00).
  EPIC_AVX512_INLINE static W narrow(V a) {
    return _mm512_cvtps_ph(as_ps(canonical(a)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
};

struct Bf16 : Wire16 {
  EPIC_AVX512_INLINE static V widen(W w) { return _mm512_slli_epi32(_mm512_cvtepu16_epi32(w), 16); }
  EPIC_AVX512_INLINE static V widen_canonical(W w) { return canonical(widen(w)); }
  // Round to nearest even on the bits: add 0x7FFF plus the lowest kept bit,
  // keep the high half. A carry out of the mantissa steps the exponent, and
  // past the largest finite value reaches inf, as IEEE rounding requires.
  // Cannot wrap: the largest non-NaN pattern, 0xFF800000, plus 0x8000 fits.
  EPIC_AVX512_INLINE static W narrow(V a) {
    const V lsb = _mm512_and_si512(_mm512_srli_epi32(a, 16), _mm512_set1_epi32(1));
    V r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(a, _mm512_set1_epi32(0x7FFF)), lsb),
                            16);
    const __mmask16 nan = _mm512_cmp_ps_mask(as_ps(a), as_ps(a), _CMP_UNORD_Q);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(kCanonicalNanBf16));
    return _mm512_cvtepi32_epi16(r);
  }
};

EPIC_AVX512_INLINE V set1(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
// Lanes where a > b, a < b as unsigned 32-bit integers.
EPIC_AVX512_INLINE __mmask16 greater(V a, uint32_t b) {
  return _mm512_cmpgt_epu32_mask(a, set1(b));
}
EPIC_AVX512_INLINE __mmask16 below(V a, uint32_t b) { return _mm512_cmplt_epu32_mask(a, set1(b)); }

// The fp8 types: the conversions of kernels_portable.cc, with lane masks.
struct Fp8E5M2 : Wire8 {
  // Each byte becomes the upper byte of an fp16 lane: exact.
  EPIC_AVX512_INLINE static V widen(W w) {
    return as_si(_mm512_cvtph_ps(_mm256_slli_epi16(_mm256_cvtepu8_epi16(w), 8)));
  }
  EPIC_AVX512_INLINE static V widen_canonical(W w) { return canonical(widen(w)); }
  EPIC_AVX512_INLINE static W narrow(V x) {
    const V a = _mm512_and_si512(x, set1(0x7FFFFFFF));
    const V sign = _mm512_and_si512(_mm512_srli_epi32(x, 24), set1(0x80));
    const V lsb = _mm512_and_si512(_mm512_srli_epi32(a, 21), set1(1));
    V r = _mm512_srli_epi32(
        _mm512_sub_epi32(_mm512_add_epi32(_mm512_add_epi32(a, set1(0xFFFFF)), lsb),
                         set1((127 - 15) << 23)),
        21);
    const V small =
        _mm512_sub_epi32(as_si(_mm512_add_ps(as_ps(a), _mm512_set1_ps(128.0f))), set1(0x43000000));
    r = _mm512_mask_mov_epi32(r, below(a, 0x38800000), small);         // < 2^-14: subnormal
    r = _mm512_mask_mov_epi32(r, greater(a, 0x476FFFFF), set1(0x7C));  // >= 61440: inf
    r = _mm512_or_si512(r, sign);
    r = _mm512_mask_mov_epi32(r, greater(a, 0x7F800000), set1(kCanonicalNanE5M2));
    return _mm512_cvtepi32_epi8(r);
  }
};

struct Fp8E4M3 : Wire8 {
  // S.EEEE.MMM becomes the fp16 S.0EEEE.MMM0000000, the same value times 2^-8
  // (subnormals stay subnormal: m * 2^-9 -> m * 2^-17); VCVTPH2PS and a
  // multiplication by 2^8 are exact. S.1111.111 (480 that way) is the NaN.
  EPIC_AVX512_INLINE static V widen(W w) {
    const __m256i t = _mm256_slli_epi16(_mm256_cvtepu8_epi16(w), 8);  // S.EEEE.MMM.00000000
    const __m256i h = _mm256_and_si256(_mm256_srai_epi16(t, 1),       // S.S.EEEE.MMM.0000000
                                       _mm256_set1_epi16(static_cast<int16_t>(0xBFFF)));
    const V r = as_si(_mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(256.0f)));
    const __m128i em = _mm_and_si128(w, _mm_set1_epi8(0x7F));
    return _mm512_mask_mov_epi32(r, _mm_cmpeq_epi8_mask(em, _mm_set1_epi8(0x7F)),
                                 set1(kCanonicalNanFp32));
  }
  EPIC_AVX512_INLINE static V widen_canonical(W w) { return widen(w); }  // NaN is canonical
  EPIC_AVX512_INLINE static W narrow(V x) {
    const V a = _mm512_and_si512(x, set1(0x7FFFFFFF));
    const V sign = _mm512_and_si512(_mm512_srli_epi32(x, 24), set1(0x80));
    const V lsb = _mm512_and_si512(_mm512_srli_epi32(a, 20), set1(1));
    V r = _mm512_srli_epi32(
        _mm512_sub_epi32(_mm512_add_epi32(_mm512_add_epi32(a, set1(0x7FFFF)), lsb),
                         set1((127 - 7) << 23)),
        20);
    const V small = _mm512_sub_epi32(as_si(_mm512_add_ps(as_ps(a), _mm512_set1_ps(16384.0f))),
                                     set1(0x46800000));
    r = _mm512_mask_mov_epi32(r, below(a, 0x3C800000), small);  // < 2^-6: subnormal
    r = _mm512_or_si512(r, sign);
    r = _mm512_mask_mov_epi32(r, greater(a, 0x43E80000), set1(kCanonicalNanE4M3));  // > 464
    return _mm512_cvtepi32_epi8(r);
  }
};

// --- operators on accumulator bits.

struct SumI32 {
  EPIC_AVX512_INLINE static V apply(V a, V x) { return _mm512_add_epi32(a, x); }
};
struct MinI32 {
  EPIC_AVX512_INLINE static V apply(V a, V x) { return _mm512_min_epi32(a, x); }
};
struct MaxI32 {
  EPIC_AVX512_INLINE static V apply(V a, V x) { return _mm512_max_epi32(a, x); }
};

struct SumF32 {
  EPIC_AVX512_INLINE static V apply(V a, V x) {
    return canonical(as_si(_mm512_add_ps(as_ps(a), as_ps(x))));
  }
};

// VMINPS/VMAXPS return the second operand when either is NaN or both are
// zero; equal lanes are fixed up with OR (min: -0 wins) or AND (max: +0
// wins) of the bits, unordered lanes with the canonical NaN.
struct MinF32 {
  EPIC_AVX512_INLINE static V apply(V a, V x) {
    V r = as_si(_mm512_min_ps(as_ps(a), as_ps(x)));
    const __mmask16 eq = _mm512_cmp_ps_mask(as_ps(a), as_ps(x), _CMP_EQ_OQ);
    r = _mm512_mask_or_epi32(r, eq, a, x);
    const __mmask16 nan = _mm512_cmp_ps_mask(as_ps(a), as_ps(x), _CMP_UNORD_Q);
    return _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(static_cast<int>(kCanonicalNanFp32)));
  }
};
struct MaxF32 {
  EPIC_AVX512_INLINE static V apply(V a, V x) {
    V r = as_si(_mm512_max_ps(as_ps(a), as_ps(x)));
    const __mmask16 eq = _mm512_cmp_ps_mask(as_ps(a), as_ps(x), _CMP_EQ_OQ);
    r = _mm512_mask_and_epi32(r, eq, a, x);
    const __mmask16 nan = _mm512_cmp_ps_mask(as_ps(a), as_ps(x), _CMP_UNORD_Q);
    return _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(static_cast<int>(kCanonicalNanFp32)));
  }
};

// int8 accumulates in one byte per element: 64 lanes per vector.
struct SumI8 {
  EPIC_AVX512_INLINE static V apply(V a, V x) { return _mm512_add_epi8(a, x); }  // wraps
};
struct MinI8 {
  EPIC_AVX512_INLINE static V apply(V a, V x) { return _mm512_min_epi8(a, x); }
};
struct MaxI8 {
  EPIC_AVX512_INLINE static V apply(V a, V x) { return _mm512_max_epi8(a, x); }
};

// --- kernels: full 16-element steps, then one masked step for the tail.

constexpr size_t kStep = 16;

EPIC_AVX512_INLINE __mmask16 tail_mask(size_t rem) {
  return static_cast<__mmask16>((1u << rem) - 1);
}

template <typename C>
EPIC_AVX512 void load_k(uint8_t* acc, const uint8_t* wire, size_t n) {
  size_t i = 0;
  for (; i + kStep <= n; i += kStep)
    Wire32::write(acc + 4 * i, C::widen_canonical(C::read(wire + C::kBytes * i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    Wire32::write(acc + 4 * i, C::widen_canonical(C::read(wire + C::kBytes * i, m)), m);
  }
}

// Four steps per iteration, loads first: acc and wire never overlap, so the
// loads need not wait for the stores (1 KB in L1: +9% to +21%; L2: none).
template <typename C, typename Op>
EPIC_AVX512 void combine_k(uint8_t* acc, const uint8_t* wire, size_t n) {
  size_t i = 0;
  for (; i + 4 * kStep <= n; i += 4 * kStep) {
    V a[4], x[4];
    for (size_t u = 0; u < 4; ++u) {
      a[u] = Wire32::read(acc + 4 * (i + u * kStep));
      x[u] = C::widen(C::read(wire + C::kBytes * (i + u * kStep)));
    }
    for (size_t u = 0; u < 4; ++u) Wire32::write(acc + 4 * (i + u * kStep), Op::apply(a[u], x[u]));
  }
  for (; i + kStep <= n; i += kStep) {
    const V a = Wire32::read(acc + 4 * i);
    Wire32::write(acc + 4 * i, Op::apply(a, C::widen(C::read(wire + C::kBytes * i))));
  }
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    const V a = Wire32::read(acc + 4 * i, m);
    Wire32::write(acc + 4 * i, Op::apply(a, C::widen(C::read(wire + C::kBytes * i, m))), m);
  }
}

template <typename C>
EPIC_AVX512 void store_k(uint8_t* wire, const uint8_t* acc, size_t n) {
  size_t i = 0;
  for (; i + kStep <= n; i += kStep)
    C::write(wire + C::kBytes * i, C::narrow(Wire32::read(acc + 4 * i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    C::write(wire + C::kBytes * i, C::narrow(Wire32::read(acc + 4 * i, m)), m);
  }
}

// int8: 64 one-byte elements per vector, four vectors per iteration (loads
// first), then one masked step for the tail.
template <typename Op>
EPIC_AVX512 void combine_i8(uint8_t* acc, const uint8_t* wire, size_t n) {
  constexpr size_t kBytes = 64;
  size_t i = 0;
  for (; i + 4 * kBytes <= n; i += 4 * kBytes) {
    V a[4], x[4];
    for (size_t u = 0; u < 4; ++u) {
      a[u] = _mm512_loadu_si512(acc + i + u * kBytes);
      x[u] = _mm512_loadu_si512(wire + i + u * kBytes);
    }
    for (size_t u = 0; u < 4; ++u) _mm512_storeu_si512(acc + i + u * kBytes, Op::apply(a[u], x[u]));
  }
  for (; i + kBytes <= n; i += kBytes)
    _mm512_storeu_si512(acc + i,
                        Op::apply(_mm512_loadu_si512(acc + i), _mm512_loadu_si512(wire + i)));
  if (i < n) {
    const __mmask64 m = (uint64_t{1} << (n - i)) - 1;  // n - i < 64
    const V a = _mm512_maskz_loadu_epi8(m, acc + i);
    _mm512_mask_storeu_epi8(acc + i, m, Op::apply(a, _mm512_maskz_loadu_epi8(m, wire + i)));
  }
}

// int8 load and store: the accumulator is the wire format.
void copy8(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n != 0) std::memcpy(dst, src, n);
}

// int32 load and store are plain copies; libc's memcpy beats the vector loop
// (1 KB load: 43 vs 36 GB/s, arith_bench).
void copy32(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n != 0) std::memcpy(dst, src, 4 * n);
}

constexpr Kernels kAvx512 = {
    .isa = Isa::kAvx512,
    .load = {copy32, load_k<Fp32>, load_k<Fp16>, load_k<Bf16>, copy8, load_k<Fp8E4M3>,
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
    .store = {copy32, store_k<Fp32>, store_k<Fp16>, store_k<Bf16>, copy8, store_k<Fp8E4M3>,
              store_k<Fp8E5M2>},
};

}  // namespace

const Kernels* detail::avx512_kernels() {
  static const bool supported = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f")) &&
                                __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vl");
  return supported ? &kAvx512 : nullptr;
}

}  // namespace epic::arith

#else  // not x86-64

const epic::arith::Kernels* epic::arith::detail::avx512_kernels() { return nullptr; }

#endif
