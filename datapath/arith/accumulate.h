// Slot accumulation: the three operations the engine applies to a payload.
//
//   load     acc[0..n)  = widen(wire[0..n))        first contribution into an empty slot
//   combine  acc[i]     = op(acc[i], widen(wire[i])) each further contribution, in arrival order
//   store    wire[0..n) = narrow(acc[0..n))        the result, on the way out
//
// `n` counts elements. Wire elements are wire_bytes(t) wide, accumulator
// elements accum_bytes(t) (int32_t for kInt32, int8_t for kInt8, float
// otherwise), both in host byte order (little-endian on x86/ARM); no pointer
// needs any alignment, but a 64-byte aligned accumulator is 10-33% faster.
// `acc` and `wire` must not overlap; n == 0 touches nothing. A DType or
// ReduceOp outside its enum makes the call do nothing (validate codes from
// packets with dtype_from_code / reduce_op_from_code first).
// Semantics (FP32_ARRIVAL) are those of element.h, element by element:
// fp16/bf16/fp8 accumulate in fp32 and are rounded once, in store(); int32
// and int8 wrap; every NaN written is canonical. See docs/arithmetic.md.
//
// Dispatch: the best kernels this CPU runs (AVX-512 > AVX2 > portable scalar,
// chosen once, see kernels.h); results are bit-identical whichever is chosen.
// Hot path: no allocation, no locks, no system calls.
// Cost (AVX-512, Release, one core, slots in L2, tests/bench/arith_bench.cc):
// combine sum of a 1 KB payload takes 19 ns for fp32/int32 (memcpy speed) and
// 37-40 ns for fp16/bf16 (0.5x memcpy: a 4-byte accumulator per 2-byte
// element). Figures and conditions in docs/arithmetic.md.
// Threading: pure functions on caller-owned buffers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/arith/dtype.h"

namespace epic::arith {

void load(DType t, uint8_t* acc, const uint8_t* wire, size_t n);
void combine(DType t, ReduceOp op, uint8_t* acc, const uint8_t* wire, size_t n);
void store(DType t, uint8_t* wire, const uint8_t* acc, size_t n);

// The same three functions, scalar and element by element over element.h:
// the specification every kernel table is tested against. Slow (exact double
// arithmetic for the half types); not on any hot path.
namespace reference {
void load(DType t, uint8_t* acc, const uint8_t* wire, size_t n);
void combine(DType t, ReduceOp op, uint8_t* acc, const uint8_t* wire, size_t n);
void store(DType t, uint8_t* wire, const uint8_t* acc, size_t n);
}  // namespace reference

}  // namespace epic::arith
