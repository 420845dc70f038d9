// The arithmetic of one element under FP32_ARRIVAL, written for clarity, not
// speed: the fp16/bf16/fp8 codecs and the reduction operators that
// `reference::load/combine/store` apply element by element, and that the
// vectorised kernels must reproduce bit for bit (docs/arithmetic.md).
//
//  - fp16/bf16/fp8 -> fp32 is exact (every value of these formats is a
//    binary32 value), so they accumulate in binary32 like fp32.
//  - fp32 -> fp16/bf16/fp8 rounds to nearest, ties to even, once, directly
//    from the binary32 value (never through an intermediate format: fp32 ->
//    fp16 -> fp8 would round twice); subnormals are produced and consumed
//    exactly (no flush to zero).
//  - Overflow: fp16, bf16 and fp8 E5M2 give +-inf when the value rounds beyond
//    the largest finite value (E5M2: |v| >= 61440, the tie between 57344,
//    whose mantissa is odd, and 2^16). fp8 E4M3 (OCP "E4M3FN": bias 7, no
//    infinities, NaN only S.1111.111, largest finite 448 = 0x7E) has no
//    infinity: |v| > 464 (464 is the tie between 448 and the missing 480, and
//    goes to even 448), +-inf and NaN all give its canonical NaN 0x7F, the
//    OCP non-saturating conversion.
//  - fp8 E5M2 (OCP, IEEE-like: bias 15, S.11111.00 = +-inf, S.11111.xx NaN,
//    largest finite 57344 = 0x7B) is the upper byte of an fp16.
//  - Every NaN written anywhere is the canonical quiet NaN of its format.
//  - min/max: NaN if either input is NaN; min(-0,+0) = -0, max(-0,+0) = +0,
//    so both are commutative and associative on bit patterns.
//  - int32 and int8 sums wrap (two's complement, modulo 2^32 and 2^8),
//    without undefined behaviour; min/max are signed. int8 accumulates in
//    int8_t (one byte per element); its load and store are copies.
// The codecs compute with exact double arithmetic and an explicit
// ties-to-even rule, independently of the bit manipulation of the kernels.
// Threading: pure functions. Assumes the default floating-point environment
// (round to nearest, no flush-to-zero / denormals-are-zero).
#pragma once

#include <cstdint>

namespace epic::arith {

// Canonical quiet NaNs (positive sign, quiet bit only): the only NaN bit
// patterns that load, combine and store ever write.
inline constexpr uint32_t kCanonicalNanFp32 = 0x7FC00000;
inline constexpr uint16_t kCanonicalNanFp16 = 0x7E00;
inline constexpr uint16_t kCanonicalNanBf16 = 0x7FC0;
inline constexpr uint8_t kCanonicalNanE4M3 = 0x7F;  // E4M3 has only S.1111.111
inline constexpr uint8_t kCanonicalNanE5M2 = 0x7E;

namespace reference {

float widen_fp16(uint16_t bits);    // exact; NaN -> canonical fp32 NaN
float widen_bf16(uint16_t bits);    // exact; NaN -> canonical fp32 NaN
uint16_t narrow_fp16(float value);  // RNE, overflow -> inf, NaN -> 0x7E00
uint16_t narrow_bf16(float value);  // RNE, overflow -> inf, NaN -> 0x7FC0
float widen_e4m3(uint8_t bits);     // exact; NaN -> canonical fp32 NaN
float widen_e5m2(uint8_t bits);     // exact; NaN -> canonical fp32 NaN
uint8_t narrow_e4m3(float value);   // RNE, |v| > 464, inf, NaN -> 0x7F
uint8_t narrow_e5m2(float value);   // RNE, overflow (|v| >= 61440) -> inf, NaN -> 0x7E

// A NaN becomes the canonical fp32 NaN; any other value is unchanged.
float canonical(float value);

int32_t sum(int32_t acc, int32_t x);  // wraps modulo 2^32
int32_t min(int32_t acc, int32_t x);
int32_t max(int32_t acc, int32_t x);
int8_t sum(int8_t acc, int8_t x);  // wraps modulo 2^8
int8_t min(int8_t acc, int8_t x);
int8_t max(int8_t acc, int8_t x);
float sum(float acc, float x);  // IEEE binary32 addition, then canonical()
float min(float acc, float x);
float max(float acc, float x);

}  // namespace reference
}  // namespace epic::arith
