// The arithmetic of one element under FP32_ARRIVAL, written for clarity, not
// speed: the half-type codecs and the reduction operators that
// `reference::load/combine/store` apply element by element, and that the
// vectorised kernels must reproduce bit for bit (docs/arithmetic.md).
//
//  - fp16/bf16 -> fp32 is exact (every fp16/bf16 value is a binary32 value).
//  - fp32 -> fp16/bf16 rounds to nearest, ties to even, once; a value that
//    rounds beyond the largest finite value becomes +-inf; fp16 subnormals are
//    produced and consumed exactly (no flush to zero).
//  - Every NaN written anywhere is the canonical quiet NaN of its format.
//  - min/max: NaN if either input is NaN; min(-0,+0) = -0, max(-0,+0) = +0,
//    so both are commutative and associative on bit patterns.
//  - int32 sum wraps (two's complement), without undefined behaviour.
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

namespace reference {

float widen_fp16(uint16_t bits);    // exact; NaN -> canonical fp32 NaN
float widen_bf16(uint16_t bits);    // exact; NaN -> canonical fp32 NaN
uint16_t narrow_fp16(float value);  // RNE, overflow -> inf, NaN -> 0x7E00
uint16_t narrow_bf16(float value);  // RNE, overflow -> inf, NaN -> 0x7FC0

// A NaN becomes the canonical fp32 NaN; any other value is unchanged.
float canonical(float value);

int32_t sum(int32_t acc, int32_t x);  // wraps modulo 2^32
int32_t min(int32_t acc, int32_t x);
int32_t max(int32_t acc, int32_t x);
float sum(float acc, float x);  // IEEE binary32 addition, then canonical()
float min(float acc, float x);
float max(float acc, float x);

}  // namespace reference
}  // namespace epic::arith
