// KULISCH_FIXED deposits of the one-limb types (fp16, fp8 E5M2, fp8 E4M3) with AVX-512
// F/BW/VL, 16 elements per step, masked tail: the same accumulator bytes as the portable loop
// (kulisch_unit_tests compares them). Enabled per function (target attributes), chosen at run
// time with the arith kernels (active_kernels().isa == avx512, so EPIC_ARITH_ISA caps it too).
#include "datapath/arith/kernels.h"
#include "datapath/arith/kulisch_layout.h"
#include "proto/vocab/partial.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass `_mm512_undefined_*()` as the unused merge source and, once
// inlined, trip a false -Wmaybe-uninitialized (as in kernels_avx512.cc; clang is silent).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace epic::arith::kulisch::detail {

namespace {

#define EPIC_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

struct Fmt {
  uint32_t width, mbits, ebits;
  bool has_inf;
};

// Deposits up to 16 elements at `wire` (count `c`, the rest masked off).
template <bool Limb32>
EPIC_AVX512 inline void step(const Fmt& f, uint8_t* acc, uint8_t* flags, const uint8_t* wire,
                             size_t c) {
  const __mmask16 m16 = c >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << c) - 1);
  const __m512i x = f.width == 2 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m16, wire))
                                 : _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m16, wire));
  const __m512i top = _mm512_set1_epi32(static_cast<int>((1u << f.ebits) - 1));
  const __m512i mant_mask = _mm512_set1_epi32(static_cast<int>((1u << f.mbits) - 1));
  const __m512i field = _mm512_and_si512(_mm512_srli_epi32(x, static_cast<int>(f.mbits)), top);
  const __m512i mant = _mm512_and_si512(x, mant_mask);
  const __m512i sign = _mm512_and_si512(_mm512_srli_epi32(x, static_cast<int>(f.ebits + f.mbits)),
                                        _mm512_set1_epi32(1));
  const __mmask16 is_top = _mm512_cmpeq_epi32_mask(field, top);
  const __mmask16 mant_zero = _mm512_cmpeq_epi32_mask(mant, _mm512_setzero_si512());
  const __mmask16 mant_full = _mm512_cmpeq_epi32_mask(mant, mant_mask);
  const __mmask16 special = f.has_inf ? is_top : __mmask16(is_top & mant_full);
  const __mmask16 nan = f.has_inf ? __mmask16(is_top & ~mant_zero) : special;
  const __mmask16 inf = __mmask16(special & ~nan);
  const __mmask16 neg = _mm512_cmpneq_epi32_mask(sign, _mm512_setzero_si512());
  const __mmask16 normal = _mm512_cmpneq_epi32_mask(field, _mm512_setzero_si512());
  // m = mant | hidden bit for normals; shift = field - 1 for normals; specials deposit nothing.
  __m512i m = _mm512_mask_or_epi32(mant, normal, mant, _mm512_set1_epi32(1 << f.mbits));
  m = _mm512_maskz_mov_epi32(__mmask16(~special), m);
  const __m512i sh = _mm512_maskz_sub_epi32(normal, field, _mm512_set1_epi32(1));
  if constexpr (Limb32) {
    __m512i v = _mm512_sllv_epi32(m, sh);
    v = _mm512_mask_sub_epi32(v, neg, _mm512_setzero_si512(), v);
    const __m512i a = _mm512_maskz_loadu_epi32(m16, acc);
    _mm512_mask_storeu_epi32(acc, m16, _mm512_add_epi32(a, v));
  } else {
    for (int half = 0; half < 2; ++half) {
      const __mmask8 m8 = static_cast<__mmask8>(m16 >> (8 * half));
      const __mmask8 n8 = static_cast<__mmask8>(neg >> (8 * half));
      const __m512i m64 =
          _mm512_cvtepu32_epi64(half ? _mm512_extracti64x4_epi64(m, 1) : _mm512_castsi512_si256(m));
      const __m512i s64 = _mm512_cvtepu32_epi64(half ? _mm512_extracti64x4_epi64(sh, 1)
                                                     : _mm512_castsi512_si256(sh));
      __m512i v = _mm512_sllv_epi64(m64, s64);
      v = _mm512_mask_sub_epi64(v, n8, _mm512_setzero_si512(), v);
      uint8_t* p = acc + 64 * half;
      const __m512i a = _mm512_maskz_loadu_epi64(m8, p);
      _mm512_mask_storeu_epi64(p, m8, _mm512_add_epi64(a, v));
    }
  }
  // Flags: "not -0" unless the pattern is exactly -0; NaN; +inf / -inf.
  const __mmask16 neg_zero =
      _mm512_cmpeq_epi32_mask(x, _mm512_set1_epi32(static_cast<int>(1u << (f.ebits + f.mbits))));
  __m512i fl =
      _mm512_maskz_mov_epi32(__mmask16(~neg_zero), _mm512_set1_epi32(vocab::kFlagNotNegZero));
  fl = _mm512_mask_or_epi32(fl, nan, fl, _mm512_set1_epi32(vocab::kFlagNan));
  fl = _mm512_mask_or_epi32(fl, __mmask16(inf & ~neg), fl, _mm512_set1_epi32(vocab::kFlagPosInf));
  fl = _mm512_mask_or_epi32(fl, __mmask16(inf & neg), fl, _mm512_set1_epi32(vocab::kFlagNegInf));
  const __m128i old = _mm_maskz_loadu_epi8(m16, flags);
  _mm_mask_storeu_epi8(flags, m16, _mm_or_si128(old, _mm512_cvtepi32_epi8(fl)));
}

template <bool Limb32>
EPIC_AVX512 void run(const Fmt& f, uint8_t* acc, uint8_t* flags, const uint8_t* wire, size_t n) {
  const size_t limb = Limb32 ? 4 : 8;
  for (size_t i = 0; i < n; i += 16) {
    step<Limb32>(f, acc + i * limb, flags + i, wire + i * f.width, n - i);
  }
}

}  // namespace

bool avx512_deposits() {
  static const bool on =
      kernels_for(Isa::kAvx512) != nullptr && active_kernels().isa == Isa::kAvx512;
  return on;
}

bool deposit_one_limb_avx512(DType t, bool limb32, uint8_t* acc, uint8_t* flags,
                             const uint8_t* wire, size_t n) {
  Fmt f;
  switch (t) {
    case DType::kFp16:
      f = {2, 10, 5, true};
      break;
    case DType::kFp8E5M2:
      f = {1, 2, 5, true};
      break;
    case DType::kFp8E4M3:
      f = {1, 3, 4, false};
      break;
    default:
      return false;
  }
  if (limb32) {
    run<true>(f, acc, flags, wire, n);
  } else {
    run<false>(f, acc, flags, wire, n);
  }
  return true;
}

}  // namespace epic::arith::kulisch::detail

#else  // not x86-64: the portable deposits only

namespace epic::arith::kulisch::detail {
bool avx512_deposits() { return false; }
bool deposit_one_limb_avx512(DType, bool, uint8_t*, uint8_t*, const uint8_t*, size_t) {
  return false;
}
}  // namespace epic::arith::kulisch::detail

#endif
