// Internal to datapath/arith/kulisch*.cc (and their tests): the bytes of a Kulisch accumulator
// of n elements, and the vectorised deposits beside the portable ones.
// Threading: pure functions; the run-time choice is made once (thread-safe statics).
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/arith/dtype.h"
#include "proto/vocab/arith.h"

namespace epic::arith::kulisch {

constexpr size_t accum_bytes_of(const vocab::KulischLayout& l, size_t n) {
  return n * (size_t{l.limbs} * l.limb_bytes + vocab::kKulischFlagBytes);
}

namespace detail {

// Whether the AVX-512 deposits run: the CPU has AVX-512 F/BW/VL and the arith kernels chose it
// (EPIC_ARITH_ISA may cap them, kernels.h).
bool avx512_deposits();
// One-limb types (fp16, E5M2, E4M3; `limb32`: E4M3's int32 layout): false for other types.
bool deposit_one_limb_avx512(DType t, bool limb32, uint8_t* acc, uint8_t* flags,
                             const uint8_t* wire, size_t n);
// kulisch::deposit without any vector kernel: what tests compare the vector paths with.
void deposit_portable(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire, size_t n);

}  // namespace detail

}  // namespace epic::arith::kulisch
