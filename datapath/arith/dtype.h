// The element types and reduce operators of the protocol vocabulary
// (proto/vocab/dtype.h: wire codes, wire widths, names) as the switch's
// arithmetic sees them, plus how wide an element is in a slot accumulator.
//
// Profile: FP32_ARRIVAL only (docs/arithmetic.md). int32 accumulates in
// int32_t, fp32/fp16/bf16 accumulate in binary32 (`float`), so every
// accumulator element is 4 bytes; the half types are widened on the way in
// and rounded once on the way out. KULISCH_FIXED will need wider slots.
// Threading: pure functions over constants.
#pragma once

#include <cstddef>

#include "proto/vocab/dtype.h"
#include "proto/vocab/memory.h"

namespace epic::arith {

using vocab::DType;
using vocab::dtype_from_code;
using vocab::kNumDTypes;
using vocab::kNumReduceOps;
using vocab::parse_dtype;
using vocab::parse_reduce_op;
using vocab::reduce_op_from_code;
using vocab::ReduceOp;
using vocab::to_string;
using vocab::wire_bytes;

// Bytes per element in a slot accumulator: 4 for all (int32_t or float) — the width the switch
// memory accounting assumes (proto/vocab/memory.h).
constexpr size_t accum_bytes(DType) { return vocab::kAccumElementBytes; }

}  // namespace epic::arith
