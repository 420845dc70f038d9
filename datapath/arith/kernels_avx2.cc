// AVX2 + F16C kernels: 8 elements per step in 256-bit registers (int8: 32);
// the ragged tail goes through the same vector step on a zero-padded stack
// copy, so no memory past element n is read or written. fp16 converts with
// VCVTPH2PS / VCVTPS2PH (round to nearest even, exact on subnormals); bf16
// widens by a 16-bit shift and narrows with an integer round-to-nearest-even.
// fp8 E5M2 widens as the upper byte of an fp16 (VCVTPH2PS), E4M3 as an fp16
// scaled by 2^-8 (VCVTPH2PS, then x 2^8); both narrow with one integer round-to-nearest-even
// from the binary32 bits (never through fp16: that would round twice) and, for
// subnormals, the FPU's own rounding (see kernels_portable.cc).
// Compiled with function-level target attributes, so the rest of the build
// needs no -m flags; used only when the CPU reports AVX2 and F16C.
#include "datapath/arith/element.h"
#include "datapath/arith/kernels.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

#define EPIC_AVX2 __attribute__((target("avx2,f16c")))
#define EPIC_AVX2_INLINE __attribute__((target("avx2,f16c"), always_inline)) inline

namespace epic::arith {
namespace {

// Accumulator vectors hold 8 elements as raw bits; the float operators cast.
using V = __m256i;

EPIC_AVX2_INLINE __m256 as_ps(V v) { return _mm256_castsi256_ps(v); }
EPIC_AVX2_INLINE V as_si(__m256 v) { return _mm256_castps_si256(v); }
EPIC_AVX2_INLINE V canonical_nan() {
  return _mm256_set1_epi32(static_cast<int>(kCanonicalNanFp32));
}
// All-ones in the lanes where a or b is NaN.
EPIC_AVX2_INLINE V unordered(V a, V b) {
  return as_si(_mm256_cmp_ps(as_ps(a), as_ps(b), _CMP_UNORD_Q));
}
// Lanes where `mask` is all-ones take `b`.
EPIC_AVX2_INLINE V select(V mask, V a, V b) { return _mm256_blendv_epi8(a, b, mask); }
EPIC_AVX2_INLINE V canonical(V v) { return select(unordered(v, v), v, canonical_nan()); }

EPIC_AVX2_INLINE V read32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
EPIC_AVX2_INLINE void write32(uint8_t* p, V v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}

// --- wire formats: read 8 wire elements and widen them to accumulator bits;
// narrow 8 accumulator elements and write them.

struct Wire32 {
  static constexpr size_t kBytes = 4;
  using W = __m256i;
  EPIC_AVX2_INLINE static W read(const uint8_t* p) { return read32(p); }
  EPIC_AVX2_INLINE static void write(uint8_t* p, W v) { write32(p, v); }
};

struct Wire16 {
  static constexpr size_t kBytes = 2;
  using W = __m128i;
  EPIC_AVX2_INLINE static W read(const uint8_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  EPIC_AVX2_INLINE static void write(uint8_t* p, W v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
  }
};

struct Wire8 {
  static constexpr size_t kBytes = 1;
  using W = __m128i;  // the low 8 bytes
  EPIC_AVX2_INLINE static W read(const uint8_t* p) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  }
  EPIC_AVX2_INLINE static void write(uint8_t* p, W v) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v);
  }
};

// `widen` may leave a non-canonical NaN (combine's operators canonicalise);
// `widen_canonical` is what load() writes.
struct Int32 : Wire32 {
  EPIC_AVX2_INLINE static V widen(W w) { return w; }
  EPIC_AVX2_INLINE static V widen_canonical(W w) { return w; }
  EPIC_AVX2_INLINE static W narrow(V a) { return a; }
};

struct Fp32 : Wire32 {
  EPIC_AVX2_INLINE static V widen(W w) { return w; }
  EPIC_AVX2_INLINE static V widen_canonical(W w) { return canonical(w); }
  EPIC_AVX2_INLINE static W narrow(V a) { return canonical(a); }
};

struct Fp16 : Wire16 {
  EPIC_AVX2_INLINE static V widen(W w) { return as_si(_mm256_cvtph_ps(w)); }
  EPIC_AVX2_INLINE static V widen_canonical(W w) { return canonical(widen(w)); }
  // The canonical fp32 NaN converts to the canonical fp16 NaN (0x7E00).
  EPIC_AVX2_INLINE static W narrow(V a) {
    return _mm256_cvtps_ph(as_ps(canonical(a)), _MM_FROUND_TO_NEAREST_INT);
  }
};

struct Bf16 : Wire16 {
  EPIC_AVX2_INLINE static V widen(W w) { return _mm256_slli_epi32(_mm256_cvtepu16_epi32(w), 16); }
  EPIC_AVX2_INLINE static V widen_canonical(W w) { return canonical(widen(w)); }
  // Round to nearest even on the bits (see kernels_avx512.cc), then pack the
  // high halves, which are < 2^16, so unsigned saturation never engages.
  EPIC_AVX2_INLINE static W narrow(V a) {
    const V lsb = _mm256_and_si256(_mm256_srli_epi32(a, 16), _mm256_set1_epi32(1));
    V r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(a, _mm256_set1_epi32(0x7FFF)), lsb),
                            16);
    r = select(unordered(a, a), r, _mm256_set1_epi32(kCanonicalNanBf16));
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  }
};

EPIC_AVX2_INLINE V set1(uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
// Lanes where a > b as signed 32-bit integers (all magnitudes here are < 2^31).
EPIC_AVX2_INLINE V greater(V a, uint32_t b) { return _mm256_cmpgt_epi32(a, set1(b)); }
// The low byte of each 32-bit lane (all < 256), packed into the low 8 bytes.
EPIC_AVX2_INLINE __m128i pack_bytes(V r) {
  const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  return _mm_packus_epi16(w, w);
}

// The fp8 types: the conversions of kernels_portable.cc, as selects on lanes.
struct Fp8E5M2 : Wire8 {
  // Each byte becomes the upper byte of an fp16 lane: exact.
  EPIC_AVX2_INLINE static V widen(W w) {
    return as_si(_mm256_cvtph_ps(_mm_unpacklo_epi8(_mm_setzero_si128(), w)));
  }
  EPIC_AVX2_INLINE static V widen_canonical(W w) { return canonical(widen(w)); }
  EPIC_AVX2_INLINE static W narrow(V x) {
    const V a = _mm256_and_si256(x, set1(0x7FFFFFFF));
    const V sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), set1(0x80));
    const V lsb = _mm256_and_si256(_mm256_srli_epi32(a, 21), set1(1));
    const V normal = _mm256_srli_epi32(
        _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(a, set1(0xFFFFF)), lsb),
                         set1((127 - 15) << 23)),
        21);
    const V small =
        _mm256_sub_epi32(as_si(_mm256_add_ps(as_ps(a), _mm256_set1_ps(128.0f))), set1(0x43000000));
    V r = select(greater(a, 0x387FFFFF), small, normal);  // >= 2^-14: normal
    r = select(greater(a, 0x476FFFFF), r, set1(0x7C));    // >= 61440: inf
    r = _mm256_or_si256(r, sign);
    r = select(greater(a, 0x7F800000), r, set1(kCanonicalNanE5M2));
    return pack_bytes(r);
  }
};

struct Fp8E4M3 : Wire8 {
  // S.EEEE.MMM becomes the fp16 S.0EEEE.MMM0000000, the same value times 2^-8
  // (subnormals stay subnormal: m * 2^-9 -> m * 2^-17); VCVTPH2PS and a
  // multiplication by 2^8 are exact. S.1111.111 gives +-480 that way, which no
  // E4M3 value is: those lanes are the NaN.
  EPIC_AVX2_INLINE static V widen(W w) {
    const __m128i t = _mm_slli_epi16(_mm_cvtepu8_epi16(w), 8);  // S.EEEE.MMM.00000000
    const __m128i h = _mm_and_si128(_mm_srai_epi16(t, 1),       // S.S.EEEE.MMM.0000000
                                    _mm_set1_epi16(static_cast<int16_t>(0xBFFF)));
    const V r = as_si(_mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0f)));
    const V nan = _mm256_cmpeq_epi32(_mm256_and_si256(r, set1(0x7FFFFFFF)), set1(0x43F00000));
    return select(nan, r, canonical_nan());
  }
  EPIC_AVX2_INLINE static V widen_canonical(W w) { return widen(w); }  // NaN is canonical
  EPIC_AVX2_INLINE static W narrow(V x) {
    const V a = _mm256_and_si256(x, set1(0x7FFFFFFF));
    const V sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), set1(0x80));
    const V lsb = _mm256_and_si256(_mm256_srli_epi32(a, 20), set1(1));
    const V normal = _mm256_srli_epi32(
        _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(a, set1(0x7FFFF)), lsb),
                         set1((127 - 7) << 23)),
        20);
    const V small = _mm256_sub_epi32(as_si(_mm256_add_ps(as_ps(a), _mm256_set1_ps(16384.0f))),
                                     set1(0x46800000));
    V r = select(greater(a, 0x3C7FFFFF), small, normal);  // >= 2^-6: normal
    r = _mm256_or_si256(r, sign);
    r = select(greater(a, 0x43E80000), r, set1(kCanonicalNanE4M3));  // > 464, inf, NaN
    return pack_bytes(r);
  }
};

// --- operators on accumulator bits.

struct SumI32 {
  EPIC_AVX2_INLINE static V apply(V a, V x) { return _mm256_add_epi32(a, x); }
};
struct MinI32 {
  EPIC_AVX2_INLINE static V apply(V a, V x) { return _mm256_min_epi32(a, x); }
};
struct MaxI32 {
  EPIC_AVX2_INLINE static V apply(V a, V x) { return _mm256_max_epi32(a, x); }
};

struct SumF32 {
  EPIC_AVX2_INLINE static V apply(V a, V x) {
    return canonical(as_si(_mm256_add_ps(as_ps(a), as_ps(x))));
  }
};

// VMINPS/VMAXPS return the second operand when either is NaN or both are
// zero; equal lanes are fixed up with OR (min: -0 wins) or AND (max: +0
// wins) of the bits, unordered lanes with the canonical NaN.
struct MinF32 {
  EPIC_AVX2_INLINE static V apply(V a, V x) {
    const V r = as_si(_mm256_min_ps(as_ps(a), as_ps(x)));
    const V eq = as_si(_mm256_cmp_ps(as_ps(a), as_ps(x), _CMP_EQ_OQ));
    return select(unordered(a, x), select(eq, r, _mm256_or_si256(a, x)), canonical_nan());
  }
};
struct MaxF32 {
  EPIC_AVX2_INLINE static V apply(V a, V x) {
    const V r = as_si(_mm256_max_ps(as_ps(a), as_ps(x)));
    const V eq = as_si(_mm256_cmp_ps(as_ps(a), as_ps(x), _CMP_EQ_OQ));
    return select(unordered(a, x), select(eq, r, _mm256_and_si256(a, x)), canonical_nan());
  }
};

// int8 accumulates in one byte per element: 32 lanes per vector.
struct SumI8 {
  EPIC_AVX2_INLINE static V apply(V a, V x) { return _mm256_add_epi8(a, x); }  // wraps
};
struct MinI8 {
  EPIC_AVX2_INLINE static V apply(V a, V x) { return _mm256_min_epi8(a, x); }
};
struct MaxI8 {
  EPIC_AVX2_INLINE static V apply(V a, V x) { return _mm256_max_epi8(a, x); }
};

// --- kernels: full 8-element steps; the tail runs one step on stack copies.

constexpr size_t kStep = 8;

template <typename C>
EPIC_AVX2_INLINE void load_step(uint8_t* acc, const uint8_t* wire) {
  write32(acc, C::widen_canonical(C::read(wire)));
}
template <typename C, typename Op>
EPIC_AVX2_INLINE void combine_step(uint8_t* acc, const uint8_t* wire) {
  write32(acc, Op::apply(read32(acc), C::widen(C::read(wire))));
}
template <typename C>
EPIC_AVX2_INLINE void store_step(uint8_t* wire, const uint8_t* acc) {
  C::write(wire, C::narrow(read32(acc)));
}

template <typename C>
EPIC_AVX2 void load_k(uint8_t* acc, const uint8_t* wire, size_t n) {
  size_t i = 0;
  for (; i + kStep <= n; i += kStep) load_step<C>(acc + 4 * i, wire + C::kBytes * i);
  if (const size_t rem = n - i; rem != 0) {
    alignas(32) uint8_t a[kStep * 4];
    alignas(32) uint8_t w[kStep * 4] = {};
    std::memcpy(w, wire + C::kBytes * i, C::kBytes * rem);
    load_step<C>(a, w);
    std::memcpy(acc + 4 * i, a, 4 * rem);
  }
}

// Four steps per iteration, loads first: acc and wire never overlap, so the
// loads need not wait for the stores.
template <typename C, typename Op>
EPIC_AVX2 void combine_k(uint8_t* acc, const uint8_t* wire, size_t n) {
  size_t i = 0;
  for (; i + 4 * kStep <= n; i += 4 * kStep) {
    V a[4], x[4];
    for (size_t u = 0; u < 4; ++u) {
      a[u] = read32(acc + 4 * (i + u * kStep));
      x[u] = C::widen(C::read(wire + C::kBytes * (i + u * kStep)));
    }
    for (size_t u = 0; u < 4; ++u) write32(acc + 4 * (i + u * kStep), Op::apply(a[u], x[u]));
  }
  for (; i + kStep <= n; i += kStep) combine_step<C, Op>(acc + 4 * i, wire + C::kBytes * i);
  if (const size_t rem = n - i; rem != 0) {
    alignas(32) uint8_t a[kStep * 4] = {};
    alignas(32) uint8_t w[kStep * 4] = {};
    std::memcpy(a, acc + 4 * i, 4 * rem);
    std::memcpy(w, wire + C::kBytes * i, C::kBytes * rem);
    combine_step<C, Op>(a, w);
    std::memcpy(acc + 4 * i, a, 4 * rem);
  }
}

template <typename C>
EPIC_AVX2 void store_k(uint8_t* wire, const uint8_t* acc, size_t n) {
  size_t i = 0;
  for (; i + kStep <= n; i += kStep) store_step<C>(wire + C::kBytes * i, acc + 4 * i);
  if (const size_t rem = n - i; rem != 0) {
    alignas(32) uint8_t a[kStep * 4] = {};
    alignas(32) uint8_t w[kStep * 4];
    std::memcpy(a, acc + 4 * i, 4 * rem);
    store_step<C>(w, a);
    std::memcpy(wire + C::kBytes * i, w, C::kBytes * rem);
  }
}

// int8: 32 one-byte elements per vector, four vectors per iteration, loads first.
template <typename Op>
EPIC_AVX2 void combine_i8(uint8_t* acc, const uint8_t* wire, size_t n) {
  constexpr size_t kBytes = 32;
  size_t i = 0;
  for (; i + 4 * kBytes <= n; i += 4 * kBytes) {
    V a[4], x[4];
    for (size_t u = 0; u < 4; ++u) {
      a[u] = read32(acc + i + u * kBytes);
      x[u] = read32(wire + i + u * kBytes);
    }
    for (size_t u = 0; u < 4; ++u) write32(acc + i + u * kBytes, Op::apply(a[u], x[u]));
  }
  for (; i + kBytes <= n; i += kBytes)
    write32(acc + i, Op::apply(read32(acc + i), read32(wire + i)));
  if (const size_t rem = n - i; rem != 0) {
    alignas(32) uint8_t a[kBytes] = {};
    alignas(32) uint8_t w[kBytes] = {};
    std::memcpy(a, acc + i, rem);
    std::memcpy(w, wire + i, rem);
    write32(a, Op::apply(read32(a), read32(w)));
    std::memcpy(acc + i, a, rem);
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

constexpr Kernels kAvx2 = {
    .isa = Isa::kAvx2,
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

namespace {
// clang 14's __builtin_cpu_supports does not know "f16c": ask CPUID leaf 1.
// (The AVX2 check already covers the OS saving YMM state, which F16C needs.)
bool cpu_has_f16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
}  // namespace

const Kernels* detail::avx2_kernels() {
  static const bool supported =
      (__builtin_cpu_init(), __builtin_cpu_supports("avx2")) && cpu_has_f16c();
  return supported ? &kAvx2 : nullptr;
}

}  // namespace epic::arith

#else  // not x86-64

const epic::arith::Kernels* epic::arith::detail::avx2_kernels() { return nullptr; }

#endif
