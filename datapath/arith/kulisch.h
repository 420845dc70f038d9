// KULISCH_FIXED: exact, order-independent float sums (PRISM, docs/arithmetic.md). Every finite
// input is deposited exactly into a fixed-point accumulator whose LSB is the type's smallest
// subnormal q; the result is rounded once, to nearest even, when stored. NaN, +-inf and the
// sign of zero travel beside it as sideband flags (proto/vocab/partial.h PartialFlag) with one
// canonicalisation:
//   NaN flag, or +inf and -inf          -> the type's canonical NaN
//   +inf (-inf)                         -> +inf (-inf)                    (E4M3: canonical NaN)
//   exact sum 0                         -> -0 if every contribution was -0, else +0
//   exact sum rounds beyond the largest finite value -> +-inf            (E4M3: canonical NaN)
//   otherwise                           -> the exact sum rounded once (RNE), subnormals exact
// Canonical NaNs: fp32 0x7FC00000, fp16 0x7E00, bf16 0x7FC0, E5M2 0x7E, E4M3 0x7F.
//
// Accumulator layout of a slot of n elements of `t` over R contributors (vocab::kulisch_layout,
// the bytes the manager grants): limb planes then flags, structure of arrays —
//   limb j of element i at  acc + (j * n + i) * limb_bytes     (little-endian int32/int64)
//   flags of element i at   acc + limbs * n * limb_bytes + i
// Single-limb types hold value/q as a two's complement integer. Nine-limb types (bf16, fp32)
// hold value/q = sum_j limb_j * 2^(32 j) with signed limbs in carry-save form: a deposit of
// M * 2^s (M the integer significand, s = max(biased exponent - 1, 0)) adds the low 32 bits of
// M << (s mod 32) to limb s/32 and the rest to limb s/32 + 1, so no carry ever propagates on the
// packet path. The layout is the same bytes whichever kernels ran; `store` and `encode_partial`
// normalise.
//
// `n` counts elements; n == 0 touches nothing. acc, wire and partial buffers must not overlap.
// Integer types and other dtypes outside float_format() make every call a no-op / false.
// Hot path: no allocation, locks, system calls or exceptions.
// Threading: pure functions on caller-owned buffers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/arith/dtype.h"
#include "proto/vocab/partial.h"

namespace epic::arith::kulisch {

// Bytes of the accumulator of n elements: n * vocab::accum_element_bytes(kKulischFixed, t, kSum,
// R).
size_t accum_bytes(DType t, uint32_t contributors, size_t n);

// acc = exact(wire[0..n)): the first contribution (every limb and flag written).
void load(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire, size_t n);
// acc += exact(wire[0..n)): every further contribution, in any order.
void deposit(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire, size_t n);
// wire[0..n) = round_once(acc), canonicalised as above. Does not modify acc.
void store(DType t, uint32_t contributors, uint8_t* wire, const uint8_t* acc, size_t n);

// AUTO: the exact partial of acc in the narrowest lossless form (vocab::PartialForm: kPlain
// when every element is exactly a value of t, else kFixed64 when every element fits an int64
// over a common scale and that is shorter than kWide, else kWide). Returns the bytes written, or 0
// when `cap` is too small (vocab::max_partial_bytes is always enough). Deterministic: the same
// exact state gives the same bytes. Does not modify acc.
size_t encode_partial(DType t, uint32_t contributors, const uint8_t* acc, size_t n, uint8_t* out,
                      size_t cap);
// acc += the exact partial `in` (any form); `first`: acc = it (the slot's first contribution).
// False, acc unchanged, when the partial is malformed: wrong magic, form, dtype, element count
// (!= n), length, a kFixed64 scale that puts a bit outside the layout, or kWide digits outside
// the width.
bool merge_partial(DType t, uint32_t contributors, uint8_t* acc, size_t n, const uint8_t* in,
                   size_t len, bool first);

// Element count a partial says it holds (header check only), or -1 when the header is not a
// partial of t.
int partial_elements(DType t, const uint8_t* in, size_t len);

}  // namespace epic::arith::kulisch
