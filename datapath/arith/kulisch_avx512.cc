// KULISCH_FIXED with AVX-512 (F/BW/VL/DQ/CD): load, deposit and store for every float type,
// byte-identical to the portable loops of kulisch.cc (kulisch_unit_tests compares them for
// every length, misaligned pointers, guard bytes). Enabled per function (target attributes)
// and chosen at run time with the arith kernels (active_kernels().isa == avx512, so
// EPIC_ARITH_ISA caps it too).
//
// One-limb types (fp16, E5M2, E4M3): a finite input times 2^K (K = -log2 q) is an integer of at
// most 41 bits, so it is converted exactly — fp16 with VCVTPH2PS, E5M2 as the upper byte of an
// fp16, E4M3 as an fp16 scaled by 2^-8 — multiplied by 2^K (exact) and truncated to int64
// (int32 for E4M3's narrow layout): a signed, exact deposit without any shift or negation.
// NaN/inf lanes are masked off and only set flags. 16 elements per step.
//
// Nine-limb types (fp32, bf16): 16 elements are decoded in 32-bit lanes, permuted so that 64-bit
// lane j holds elements j (low half) and j + 8 (high half); the low 32 bits of M << (s mod 32)
// and the rest are then split into the two 8-lane int64 halves with one AND / shift each. When
// every nonzero lane of the 16 has the same s / 32 (the common case: values within a factor of
// 2^32 of each other), exactly two limb planes are read and written; otherwise every plane a
// lane touches, with masked adds.
//
// Stores: 8 elements per step in int64 lanes; nine limbs are normalised (a carry chain over
// the planes, negated by re-running it on the negated limbs), the 64-bit window under the
// leading digit chosen with blends, and rounded once to nearest even with VPLZCNTQ; one limb is
// the same rounding on the int64.
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

#define EPIC_KAVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512cd")))
#define EPIC_KAVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512cd"), always_inline)) inline

namespace epic::arith::kulisch::detail {

namespace {

using vocab::kFlagNan;
using vocab::kFlagNegInf;
using vocab::kFlagNotNegZero;
using vocab::kFlagPosInf;

EPIC_KAVX512_INLINE __mmask16 mask16(size_t c) {
  return c >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << c) - 1);
}
EPIC_KAVX512_INLINE __mmask8 mask8(size_t c) {
  return c >= 8 ? __mmask8(0xFF) : static_cast<__mmask8>((1u << c) - 1);
}

// flags[0..16) (lanes of m) |= (Load: =) the flag bytes of 16 lanes given as 32-bit lanes.
template <bool Load>
EPIC_KAVX512_INLINE void put_flags(uint8_t* flags, __mmask16 m, __m128i fl) {
  if constexpr (!Load) fl = _mm_or_si128(fl, _mm_maskz_loadu_epi8(m, flags));
  _mm_mask_storeu_epi8(flags, m, fl);
}

// The flag bytes of 16 lanes from masks of the lanes that are -0, NaN, +inf, -inf.
EPIC_KAVX512_INLINE __m128i flag_bytes(__mmask16 neg_zero, __mmask16 nan, __mmask16 pos_inf,
                                       __mmask16 neg_inf) {
  __m512i fl =
      _mm512_maskz_mov_epi32(static_cast<__mmask16>(~neg_zero), _mm512_set1_epi32(kFlagNotNegZero));
  fl = _mm512_mask_or_epi32(fl, nan, fl, _mm512_set1_epi32(kFlagNan));
  fl = _mm512_mask_or_epi32(fl, pos_inf, fl, _mm512_set1_epi32(kFlagPosInf));
  fl = _mm512_mask_or_epi32(fl, neg_inf, fl, _mm512_set1_epi32(kFlagNegInf));
  return _mm512_cvtepi32_epi8(fl);
}

// ---------------------------------------------------------------------------------------------
// One limb: exact conversion through binary32.

// 16 wire elements (lanes of m) as binary32 values times 2^K, exactly; `nan` gets the lanes
// that are NaN although their binary32 image is not (E4M3's S.1111.111).
template <DType T>
EPIC_KAVX512_INLINE __m512 scaled(const uint8_t* wire, __mmask16 m, __mmask16& nan) {
  if constexpr (T == DType::kFp16) {
    nan = 0;
    const __m512 v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, wire));
    return _mm512_mul_ps(v, _mm512_set1_ps(16777216.0f));  // q = 2^-24
  } else if constexpr (T == DType::kFp8E5M2) {
    nan = 0;
    const __m256i h = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, wire)), 8);
    return _mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(65536.0f));  // q = 2^-16
  } else {  // E4M3: S.EEEE.MMM -> fp16 S.0EEEE.MMM0000000 = value * 2^-8; q = 2^-9
    const __m128i b = _mm_maskz_loadu_epi8(m, wire);
    nan = _mm_mask_cmpeq_epi8_mask(m, _mm_and_si128(b, _mm_set1_epi8(0x7F)), _mm_set1_epi8(0x7F));
    const __m256i w = _mm256_cvtepu8_epi16(b);
    const __m256i h =
        _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x80)), 8),
                        _mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x7F)), 7));
    return _mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(131072.0f));  // 2^8 * 2^9
  }
}

// plane[0..8) (lanes of m) += v (Load: = v), unmasked for full vectors.
template <bool Load>
EPIC_KAVX512_INLINE void add_plane(uint8_t* p, __mmask8 m, bool full, __m512i v) {
  if constexpr (Load) {
    if (full) {
      _mm512_storeu_si512(p, v);
    } else {
      _mm512_mask_storeu_epi64(p, m, v);
    }
  } else if (full) {
    _mm512_storeu_si512(p, _mm512_add_epi64(_mm512_loadu_si512(p), v));
  } else {
    _mm512_mask_storeu_epi64(p, m, _mm512_add_epi64(_mm512_maskz_loadu_epi64(m, p), v));
  }
}

// The accumulator lanes of m += (Load: =) the 16 exact integers of v (lanes of `finite`; the
// others add 0). `full`: all 16 lanes, unmasked memory operations.
template <bool Limb32, bool Load>
EPIC_KAVX512_INLINE void add_lanes(uint8_t* acc, size_t i, __mmask16 m, __mmask16 finite, bool full,
                                   __m512 v) {
  if constexpr (Limb32) {
    const __m512i x = _mm512_maskz_cvttps_epi32(finite, v);
    uint8_t* p = acc + i * 4;
    if constexpr (Load) {
      if (full) {
        _mm512_storeu_si512(p, x);
      } else {
        _mm512_mask_storeu_epi32(p, m, x);
      }
    } else if (full) {
      _mm512_storeu_si512(p, _mm512_add_epi32(_mm512_loadu_si512(p), x));
    } else {
      _mm512_mask_storeu_epi32(p, m, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, p), x));
    }
  } else {
    const __m512i x0 =
        _mm512_maskz_cvttps_epi64(static_cast<__mmask8>(finite), _mm512_castps512_ps256(v));
    const __m512i x1 =
        _mm512_maskz_cvttps_epi64(static_cast<__mmask8>(finite >> 8), _mm512_extractf32x8_ps(v, 1));
    uint8_t* p = acc + i * 8;
    add_plane<Load>(p, static_cast<__mmask8>(m), full, x0);
    add_plane<Load>(p + 64, static_cast<__mmask8>(m >> 8), full, x1);
  }
}

template <DType T, bool Limb32, bool Load>
EPIC_KAVX512 void one_limb(uint8_t* acc, uint8_t* flags, const uint8_t* wire, size_t n) {
  constexpr size_t kWidth = T == DType::kFp16 ? 2 : 1;
  const __m128i not_neg_zero = _mm_set1_epi8(kFlagNotNegZero);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = mask16(n - i);
    const bool full = n - i >= 16;
    __mmask16 nan_extra;
    const __m512 v = scaled<T>(wire + i * kWidth, m, nan_extra);
    // fpclass: 0x01 QNaN, 0x80 SNaN, 0x08 +inf, 0x10 -inf, 0x04 -0.
    const auto special = static_cast<__mmask16>((_mm512_fpclass_ps_mask(v, 0x9D) | nan_extra) & m);
    if (special == 0) {  // every lane finite and not -0: the common case
      add_lanes<Limb32, Load>(acc, i, m, m, full, v);
      if constexpr (Load) {
        _mm_mask_storeu_epi8(flags + i, m, not_neg_zero);
      } else {
        // The flag is already set after the first contribution that is not -0: store only
        // when some lane lacks it.
        const __m128i fl = _mm_maskz_loadu_epi8(m, flags + i);
        const __mmask16 lacking = _mm_mask_testn_epi8_mask(m, fl, not_neg_zero);
        if (lacking != 0) _mm_mask_storeu_epi8(flags + i, m, _mm_or_si128(fl, not_neg_zero));
      }
      continue;
    }
    const auto nan = static_cast<__mmask16>(_mm512_fpclass_ps_mask(v, 0x81) | nan_extra);
    const __mmask16 inf = _mm512_fpclass_ps_mask(v, 0x18);
    const auto finite = static_cast<__mmask16>(~(nan | inf) & m);
    add_lanes<Limb32, Load>(acc, i, m, finite, full, v);
    const __mmask16 neg_zero = _mm512_fpclass_ps_mask(v, 0x04);
    const __mmask16 neg_inf = _mm512_fpclass_ps_mask(v, 0x10);
    put_flags<Load>(flags + i, m,
                    flag_bytes(neg_zero, nan, static_cast<__mmask16>(inf & ~neg_inf), neg_inf));
  }
}

// ---------------------------------------------------------------------------------------------
// Nine limbs: 32-bit digits in carry-save form.

template <uint32_t MBits, uint32_t EBits>
struct WideFields {
  static constexpr uint32_t kMBits = MBits, kEBits = EBits;
  static constexpr uint32_t kWidth = (1 + MBits + EBits) / 8;
  static constexpr uint32_t kTop = (1u << EBits) - 1;
  static constexpr uint32_t kSign = 1u << (MBits + EBits);
};
using Fp32Wide = WideFields<23, 8>;
using Bf16Wide = WideFields<7, 8>;

template <typename F, bool Load>
EPIC_KAVX512 void wide(uint8_t* acc, uint8_t* flags, const uint8_t* wire, size_t n) {
  // dword 2j <- element j, dword 2j + 1 <- element j + 8, and back.
  const __m512i perm = _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  const __m512i unperm = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  const size_t plane_bytes = n * 8;
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = mask16(n - i);
    const bool full = n - i >= 16;
    __m512i x;
    if constexpr (F::kWidth == 4) {
      x = _mm512_maskz_loadu_epi32(m, wire + i * 4);
    } else {
      x = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, wire + i * 2));
    }
    x = _mm512_permutexvar_epi32(perm, x);
    const __m512i field = _mm512_and_si512(_mm512_srli_epi32(x, F::kMBits),
                                           _mm512_set1_epi32(static_cast<int>(F::kTop)));
    const __m512i mant = _mm512_and_si512(x, _mm512_set1_epi32((1 << F::kMBits) - 1));
    const __mmask16 normal =
        _mm512_test_epi32_mask(x, _mm512_set1_epi32(static_cast<int>(F::kTop << F::kMBits)));
    const __mmask16 special =
        _mm512_cmpeq_epi32_mask(field, _mm512_set1_epi32(static_cast<int>(F::kTop)));
    __m512i mm = _mm512_mask_or_epi32(mant, normal, mant, _mm512_set1_epi32(1 << F::kMBits));
    if (special) mm = _mm512_maskz_mov_epi32(static_cast<__mmask16>(~special), mm);
    const __m512i sh = _mm512_maskz_sub_epi32(normal, field, _mm512_set1_epi32(1));
    const __m512i k = _mm512_srli_epi32(sh, 5);
    const __m512i s = _mm512_and_si512(sh, _mm512_set1_epi32(31));
    const __m512i lo32 = _mm512_sllv_epi32(mm, s);
    const __m512i hi32 = _mm512_srlv_epi32(mm, _mm512_sub_epi32(_mm512_set1_epi32(32), s));
    // Elements i..i+7 (a) and i+8..i+15 (b) as int64 lanes, negated where the sign is set.
    const __mmask8 neg_a = _mm512_test_epi64_mask(x, _mm512_set1_epi64(F::kSign));
    const __mmask8 neg_b = _mm512_test_epi64_mask(x, _mm512_set1_epi64(uint64_t{F::kSign} << 32));
    const __m512i zero = _mm512_setzero_si512();
    __m512i lo_a = _mm512_and_si512(lo32, low32), lo_b = _mm512_srli_epi64(lo32, 32);
    __m512i hi_a = _mm512_and_si512(hi32, low32), hi_b = _mm512_srli_epi64(hi32, 32);
    lo_a = _mm512_mask_sub_epi64(lo_a, neg_a, zero, lo_a);
    hi_a = _mm512_mask_sub_epi64(hi_a, neg_a, zero, hi_a);
    lo_b = _mm512_mask_sub_epi64(lo_b, neg_b, zero, lo_b);
    hi_b = _mm512_mask_sub_epi64(hi_b, neg_b, zero, hi_b);
    const auto m_a = static_cast<__mmask8>(m), m_b = static_cast<__mmask8>(m >> 8);
    uint8_t* base = acc + i * 8;
    const __mmask16 nz = _mm512_test_epi32_mask(mm, mm);
    bool uniform = nz == 0;
    size_t k0 = 0;
    if (nz != 0) {
      const auto first = static_cast<int>(__builtin_ctz(nz));
      const __m512i kb = _mm512_permutexvar_epi32(_mm512_set1_epi32(first), k);
      uniform = _mm512_mask_cmpneq_epi32_mask(nz, k, kb) == 0;
      k0 = static_cast<size_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(kb)));
    }
    if (uniform) {  // two planes (all zero lanes: none), or, loading, every plane
      if constexpr (Load) {
        for (size_t j = 0; j < 9; ++j) {
          uint8_t* p = base + j * plane_bytes;
          const bool l = nz != 0 && j == k0, h = nz != 0 && j == k0 + 1;
          add_plane<true>(p, m_a, full, l ? lo_a : h ? hi_a : zero);
          add_plane<true>(p + 64, m_b, full, l ? lo_b : h ? hi_b : zero);
        }
      } else if (nz != 0) {
        uint8_t* p = base + k0 * plane_bytes;
        add_plane<false>(p, m_a, full, lo_a);
        add_plane<false>(p + 64, m_b, full, lo_b);
        add_plane<false>(p + plane_bytes, m_a, full, hi_a);
        add_plane<false>(p + plane_bytes + 64, m_b, full, hi_b);
      }
    } else {
      const __m512i k_a = _mm512_and_si512(k, low32), k_b = _mm512_srli_epi64(k, 32);
      const __mmask8 nz_a = _mm512_test_epi64_mask(mm, low32);
      const __mmask8 nz_b = _mm512_test_epi64_mask(mm, _mm512_set1_epi64(~0xFFFFFFFFull));
      for (int j = 0; j < 9; ++j) {
        const __m512i jv = _mm512_set1_epi64(j), jm = _mm512_set1_epi64(j - 1);
        const __mmask8 la = _mm512_mask_cmpeq_epi64_mask(nz_a, k_a, jv);
        const __mmask8 ha = _mm512_mask_cmpeq_epi64_mask(nz_a, k_a, jm);
        const __mmask8 lb = _mm512_mask_cmpeq_epi64_mask(nz_b, k_b, jv);
        const __mmask8 hb = _mm512_mask_cmpeq_epi64_mask(nz_b, k_b, jm);
        uint8_t* p = base + static_cast<size_t>(j) * plane_bytes;
        if (Load || (la | ha) != 0) {
          add_plane<Load>(p, m_a, full,
                          _mm512_mask_mov_epi64(_mm512_maskz_mov_epi64(la, lo_a), ha, hi_a));
        }
        if (Load || (lb | hb) != 0) {
          add_plane<Load>(p + 64, m_b, full,
                          _mm512_mask_mov_epi64(_mm512_maskz_mov_epi64(lb, lo_b), hb, hi_b));
        }
      }
    }
    const __mmask16 neg_zero = _mm512_cmpeq_epi32_mask(x, _mm512_set1_epi32(F::kSign));
    if ((special | neg_zero) == 0) {
      put_flags<Load>(flags + i, m, _mm_set1_epi8(kFlagNotNegZero));
    } else {
      // Lanes back in element order.
      const __m512i xo = _mm512_permutexvar_epi32(unperm, x);
      const __mmask16 sp =
          _mm512_cmpeq_epi32_mask(_mm512_and_si512(xo, _mm512_set1_epi32(F::kTop << F::kMBits)),
                                  _mm512_set1_epi32(F::kTop << F::kMBits));
      const __mmask16 mant0 = _mm512_testn_epi32_mask(xo, _mm512_set1_epi32((1 << F::kMBits) - 1));
      const __mmask16 negative = _mm512_test_epi32_mask(xo, _mm512_set1_epi32(F::kSign));
      const __mmask16 inf = sp & mant0;
      put_flags<Load>(
          flags + i, m,
          flag_bytes(_mm512_cmpeq_epi32_mask(xo, _mm512_set1_epi32(F::kSign)),
                     static_cast<__mmask16>(sp & ~mant0), static_cast<__mmask16>(inf & ~negative),
                     static_cast<__mmask16>(inf & negative)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Stores.

// The target format as constants (so nothing is reloaded inside the loops).
template <uint32_t MBits, uint32_t EBits, bool HasInf, uint32_t Nan>
struct Out {
  static constexpr uint32_t kMBits = MBits, kEBits = EBits, kNan = Nan;
  static constexpr bool kHasInf = HasInf;
};
using Fp32Out = Out<23, 8, true, 0x7FC00000>;
using Bf16Out = Out<7, 8, true, 0x7FC0>;
using Fp16Out = Out<10, 5, true, 0x7E00>;
using E5M2Out = Out<2, 5, true, 0x7E>;
using E4M3Out = Out<3, 4, false, 0x7F>;

// 8 magnitudes window * 2^ex (+ something below when sticky) rounded once to nearest even:
// kulisch_format.h round_magnitude in int64 lanes (window may be 0 in lanes that the caller
// replaces). Returns the bits, sign included, overflow resolved. A carry out of the rounded
// significand (q = 2^p) moves into the exponent by itself in bits = q + (r << mbits).
template <typename O>
EPIC_KAVX512_INLINE __m512i round_lanes(__mmask8 negative, __m512i window, __m512i ex,
                                        __mmask8 sticky) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i nb = _mm512_sub_epi64(_mm512_set1_epi64(64), _mm512_lzcnt_epi64(window));
  const __m512i r =
      _mm512_max_epi64(_mm512_sub_epi64(_mm512_add_epi64(nb, ex), _mm512_set1_epi64(O::kMBits + 1)),
                       _mm512_setzero_si512());
  const __m512i rs = _mm512_sub_epi64(r, ex);  // >= 0: ex > 0 only with a window of >= 33 bits
  // Nearest even: the kept bits plus the carry out of rem + 2^(rs-1) - 1 + (odd or sticky), rem
  // the rs bits shifted out; nothing where rs = 0. The bias goes on the remainder (rem + bias <
  // 2^rs + 2^(rs-1), no wrap for rs <= 63), not on the window: a window of two full digits (up
  // to 2^64 - 1, as in 2^256 - 1) would wrap.
  const __m512i kept = _mm512_srlv_epi64(window, rs);
  const __m512i odd = _mm512_and_si512(kept, one);
  const __m512i up = _mm512_mask_or_epi64(odd, sticky, odd, one);
  const __m512i unit = _mm512_sllv_epi64(one, rs);
  const __m512i rem = _mm512_and_si512(window, _mm512_sub_epi64(unit, one));
  const __m512i bias = _mm512_maskz_add_epi64(
      _mm512_test_epi64_mask(rs, rs), _mm512_sub_epi64(_mm512_srli_epi64(unit, 1), one), up);
  const __m512i q = _mm512_add_epi64(kept, _mm512_srlv_epi64(_mm512_add_epi64(rem, bias), rs));
  __m512i bits = _mm512_add_epi64(q, _mm512_slli_epi64(r, O::kMBits));
  const uint64_t inf = ((uint64_t{1} << O::kEBits) - 1) << O::kMBits;
  const __mmask8 overflow = _mm512_cmpgt_epu64_mask(
      bits, _mm512_set1_epi64(O::kHasInf ? inf - 1 : uint64_t{O::kNan} - 1));
  const __m512i sign = _mm512_set1_epi64(uint64_t{1} << (O::kMBits + O::kEBits));
  if (overflow)
    bits = _mm512_mask_mov_epi64(bits, overflow, _mm512_set1_epi64(O::kHasInf ? inf : O::kNan));
  // E4M3's overflow is its NaN, unsigned.
  const auto signed_lanes = O::kHasInf ? negative : static_cast<__mmask8>(negative & ~overflow);
  bits = _mm512_mask_or_epi64(bits, signed_lanes, bits, sign);
  return bits;
}

// The sideband (kulisch.h): NaN / infinities / the sign of an exact zero, over `bits`.
template <typename O>
EPIC_KAVX512_INLINE __m512i apply_flags(__m512i bits, __m512i fl, __mmask8 zero) {
  const __m512i sign = _mm512_set1_epi64(uint64_t{1} << (O::kMBits + O::kEBits));
  const __mmask8 nan = _mm512_test_epi64_mask(fl, _mm512_set1_epi64(kFlagNan));
  const __mmask8 pos = _mm512_test_epi64_mask(fl, _mm512_set1_epi64(kFlagPosInf));
  const __mmask8 neg = _mm512_test_epi64_mask(fl, _mm512_set1_epi64(kFlagNegInf));
  const __mmask8 not_neg_zero = _mm512_test_epi64_mask(fl, _mm512_set1_epi64(kFlagNotNegZero));
  if ((nan | pos | neg | zero) == 0) return bits;
  const uint64_t inf = ((uint64_t{1} << O::kEBits) - 1) << O::kMBits;
  bits = _mm512_mask_mov_epi64(bits, zero,
                               _mm512_maskz_mov_epi64(static_cast<__mmask8>(~not_neg_zero), sign));
  const __m512i pos_v = _mm512_set1_epi64(O::kHasInf ? inf : O::kNan);
  const __m512i neg_v =
      _mm512_set1_epi64(O::kHasInf ? (inf | (uint64_t{1} << (O::kMBits + O::kEBits))) : O::kNan);
  bits = _mm512_mask_mov_epi64(bits, neg, neg_v);
  bits = _mm512_mask_mov_epi64(bits, pos, pos_v);
  const auto canonical = static_cast<__mmask8>(nan | (pos & neg));
  return _mm512_mask_mov_epi64(bits, canonical, _mm512_set1_epi64(O::kNan));
}

template <size_t Width>
EPIC_KAVX512_INLINE void put_bits(uint8_t* wire, __mmask8 m, __m512i bits) {
  if constexpr (Width == 4) {
    _mm512_mask_cvtepi64_storeu_epi32(wire, m, bits);
  } else if constexpr (Width == 2) {
    _mm512_mask_cvtepi64_storeu_epi16(wire, m, bits);
  } else {
    _mm512_mask_cvtepi64_storeu_epi8(wire, m, bits);
  }
}

template <typename O, size_t Width, bool Limb32>
EPIC_KAVX512 void store_one_limb(uint8_t* wire, const uint8_t* acc, const uint8_t* flags,
                                 size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    const __mmask8 m = mask8(n - i);
    const __m512i v = Limb32 ? _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(m, acc + i * 4))
                             : _mm512_maskz_loadu_epi64(m, acc + i * 8);
    const __mmask8 negative = _mm512_movepi64_mask(v);
    const __m512i mag = _mm512_abs_epi64(v);
    __m512i bits = round_lanes<O>(negative, mag, _mm512_setzero_si512(), 0);
    const __m512i fl = _mm512_cvtepu8_epi64(_mm_maskz_loadu_epi8(m, flags + i));
    bits = apply_flags<O>(bits, fl, _mm512_testn_epi64_mask(v, v));
    put_bits<Width>(wire + i * Width, m, bits);
  }
}

// Limb planes a..b hold every nonzero limb of the slot (b < a: none), so the carry chain runs
// over them only; the carry out of plane b is the digit at b + 1 (|carry| < 2^31).
template <typename O, size_t Width>
EPIC_KAVX512 void store_wide(uint8_t* wire, const uint8_t* acc, const uint8_t* flags, size_t n) {
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  const __m512i zero = _mm512_setzero_si512();
  unsigned planes = 0;
  for (size_t j = 0; j < 9; ++j) {
    const uint8_t* p = acc + j * n * 8;
    __m512i o = zero;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) o = _mm512_or_si512(o, _mm512_loadu_si512(p + i * 8));
    if (i < n) o = _mm512_or_si512(o, _mm512_maskz_loadu_epi64(mask8(n - i), p + i * 8));
    if (_mm512_test_epi64_mask(o, o) != 0) planes |= 1u << j;
  }
  const size_t a = planes ? static_cast<size_t>(__builtin_ctz(planes)) : 0;
  const size_t b = planes ? static_cast<size_t>(31 - __builtin_clz(planes)) : 0;
  for (size_t i = 0; i < n; i += 8) {
    const __mmask8 m = mask8(n - i);
    __m512i d[10];
    __m512i carry = zero;
    for (size_t j = a; j <= b; ++j) {
      const __m512i t = _mm512_add_epi64(_mm512_maskz_loadu_epi64(m, acc + (j * n + i) * 8), carry);
      d[j] = _mm512_and_si512(t, low32);
      carry = _mm512_srai_epi64(t, 32);
    }
    const __mmask8 negative = _mm512_movepi64_mask(carry);
    if (negative != 0) {  // the digits of -value: the same chain over the negated limbs
      carry = zero;
      for (size_t j = a; j <= b; ++j) {
        const __m512i l = _mm512_maskz_loadu_epi64(m, acc + (j * n + i) * 8);
        const __m512i t = _mm512_add_epi64(_mm512_mask_sub_epi64(l, negative, zero, l), carry);
        d[j] = _mm512_and_si512(t, low32);
        carry = _mm512_srai_epi64(t, 32);
      }
    }
    d[b + 1] = carry;
    // The window under the leading digit (at least 33 bits unless the value is below 2^32),
    // its exponent, and whether anything is below it.
    __m512i window = a == 0 ? d[0] : _mm512_slli_epi64(d[a], 32);
    __m512i ex = _mm512_set1_epi64(a == 0 ? 0 : static_cast<int64_t>(32 * (a - 1)));
    __m512i below = zero, prefix = zero;  // prefix: OR of d[a..j-2]
    for (size_t j = a + 1; j <= b + 1; ++j) {
      const __mmask8 lead = _mm512_test_epi64_mask(d[j], d[j]);
      window = _mm512_mask_mov_epi64(window, lead,
                                     _mm512_or_si512(_mm512_slli_epi64(d[j], 32), d[j - 1]));
      ex = _mm512_mask_mov_epi64(ex, lead, _mm512_set1_epi64(static_cast<int64_t>(32 * (j - 1))));
      below = _mm512_mask_mov_epi64(below, lead, prefix);
      prefix = _mm512_or_si512(prefix, d[j - 1]);
    }
    const __mmask8 sticky = _mm512_test_epi64_mask(below, below);
    __m512i bits = round_lanes<O>(negative, window, ex, sticky);
    const __m512i fl = _mm512_cvtepu8_epi64(_mm_maskz_loadu_epi8(m, flags + i));
    bits = apply_flags<O>(bits, fl, _mm512_testn_epi64_mask(window, window));
    put_bits<Width>(wire + i * Width, m, bits);
  }
}

// Asked once (every load, deposit and store checks it).
bool cpu_has_extensions() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512cd");
  }();
  return has;
}

template <bool Load>
bool run(DType t, const vocab::KulischLayout& l, uint8_t* acc, const uint8_t* wire, size_t n) {
  if (!cpu_has_extensions()) return false;
  uint8_t* flags = acc + size_t{l.limbs} * n * l.limb_bytes;
  switch (t) {
    case DType::kFp32:
    case DType::kBf16:
      if (t == DType::kFp32) {
        wide<Fp32Wide, Load>(acc, flags, wire, n);
      } else {
        wide<Bf16Wide, Load>(acc, flags, wire, n);
      }
      return true;
    case DType::kFp16:
      one_limb<DType::kFp16, false, Load>(acc, flags, wire, n);
      return true;
    case DType::kFp8E5M2:
      one_limb<DType::kFp8E5M2, false, Load>(acc, flags, wire, n);
      return true;
    case DType::kFp8E4M3:
      if (l.limb_bytes == 4) {
        one_limb<DType::kFp8E4M3, true, Load>(acc, flags, wire, n);
      } else {
        one_limb<DType::kFp8E4M3, false, Load>(acc, flags, wire, n);
      }
      return true;
    default:
      return false;
  }
}

}  // namespace

bool avx512_deposits() {
  static const bool on = cpu_has_extensions() && kernels_for(Isa::kAvx512) != nullptr &&
                         active_kernels().isa == Isa::kAvx512;
  return on;
}

bool load_avx512(DType t, const vocab::KulischLayout& l, uint8_t* acc, const uint8_t* wire,
                 size_t n) {
  return run<true>(t, l, acc, wire, n);
}

bool deposit_avx512(DType t, const vocab::KulischLayout& l, uint8_t* acc, const uint8_t* wire,
                    size_t n) {
  return run<false>(t, l, acc, wire, n);
}

bool store_avx512(DType t, const vocab::KulischLayout& l, uint8_t* wire, const uint8_t* acc,
                  size_t n) {
  if (!cpu_has_extensions()) return false;
  const uint8_t* flags = acc + size_t{l.limbs} * n * l.limb_bytes;
  switch (t) {
    case DType::kFp32:
      store_wide<Fp32Out, 4>(wire, acc, flags, n);
      return true;
    case DType::kBf16:
      store_wide<Bf16Out, 2>(wire, acc, flags, n);
      return true;
    case DType::kFp16:
      store_one_limb<Fp16Out, 2, false>(wire, acc, flags, n);
      return true;
    case DType::kFp8E5M2:
      store_one_limb<E5M2Out, 1, false>(wire, acc, flags, n);
      return true;
    case DType::kFp8E4M3:
      if (l.limb_bytes == 4) {
        store_one_limb<E4M3Out, 1, true>(wire, acc, flags, n);
      } else {
        store_one_limb<E4M3Out, 1, false>(wire, acc, flags, n);
      }
      return true;
    default:
      return false;
  }
}

}  // namespace epic::arith::kulisch::detail

#else  // not x86-64: the portable kernels only

namespace epic::arith::kulisch::detail {
bool avx512_deposits() { return false; }
bool load_avx512(DType, const vocab::KulischLayout&, uint8_t*, const uint8_t*, size_t) {
  return false;
}
bool deposit_avx512(DType, const vocab::KulischLayout&, uint8_t*, const uint8_t*, size_t) {
  return false;
}
bool store_avx512(DType, const vocab::KulischLayout&, uint8_t*, const uint8_t*, size_t) {
  return false;
}
}  // namespace epic::arith::kulisch::detail

#endif
