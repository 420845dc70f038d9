// AVX2 + F16C kernels: 8 elements per step in 256-bit registers; the ragged
// tail (< 8 elements) goes through the same vector step on a zero-padded stack
// copy, so no memory past element n is read or written. fp16 converts with
// VCVTPH2PS / VCVTPS2PH (round to nearest even, exact on subnormals); bf16
// widens by a 16-bit shift and narrows with an integer round-to-nearest-even.
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

// int32 load and store are plain copies; libc's memcpy beats the vector loop
// (1 KB load: 43 vs 36 GB/s, arith_bench).
void copy32(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n != 0) std::memcpy(dst, src, 4 * n);
}

constexpr Kernels kAvx2 = {
    .isa = Isa::kAvx2,
    .load = {copy32, load_k<Fp32>, load_k<Fp16>, load_k<Bf16>},
    .combine = {{combine_k<Int32, SumI32>, combine_k<Int32, MinI32>, combine_k<Int32, MaxI32>},
                {combine_k<Fp32, SumF32>, combine_k<Fp32, MinF32>, combine_k<Fp32, MaxF32>},
                {combine_k<Fp16, SumF32>, combine_k<Fp16, MinF32>, combine_k<Fp16, MaxF32>},
                {combine_k<Bf16, SumF32>, combine_k<Bf16, MinF32>, combine_k<Bf16, MaxF32>}},
    .store = {copy32, store_k<Fp32>, store_k<Fp16>, store_k<Bf16>},
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
