// The element types and reduce operators of the protocol vocabulary
// (proto/vocab/dtype.h: wire codes, wire widths, names) as the switch's
// arithmetic sees them, plus how wide an element is in a slot accumulator.
//
// Profile: FP32_ARRIVAL (docs/arithmetic.md). int32 accumulates in int32_t
// and int8 in int8_t (1 byte); fp32/fp16/bf16/fp8 accumulate in binary32
// (`float`, 4 bytes); the narrow float types are widened on the way in and
// rounded once on the way out. KULISCH_FIXED: kulisch.h.
// Threading: pure functions over constants.
#pragma once

#include <cstddef>

#include "proto/vocab/arith.h"
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

// Bytes per element in a FP32_ARRIVAL slot accumulator: 1 for int8 (int8_t), 4 for the others
// (int32_t or float) — the width the switch memory accounting assumes (proto/vocab/arith.h).
constexpr size_t accum_bytes(DType t) {
  return vocab::accum_element_bytes(vocab::AccumProfile::kFp32Arrival, t, ReduceOp::kSum, 1);
}

}  // namespace epic::arith
