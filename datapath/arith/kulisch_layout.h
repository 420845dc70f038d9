// Internal to datapath/arith/kulisch*.cc (and their tests): the bytes of a Kulisch accumulator
// of n elements, the portable kernels as the specification the vector ones are compared with,
// and the AVX-512 kernels beside them.
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

// Whether the AVX-512 kernels run: the CPU has AVX-512 F/BW/VL/DQ/CD and the arith kernels
// chose avx512 (EPIC_ARITH_ISA=portable|reference|avx2 caps them, kernels.h).
bool avx512_deposits();

// The AVX-512 kernels for the layout `l` of t (every float type, both E4M3 layouts). Each
// writes exactly the bytes of its portable counterpart; false (nothing written) for a type
// outside float_format() or when the CPU lacks the extensions.
bool load_avx512(DType t, const vocab::KulischLayout& l, uint8_t* acc, const uint8_t* wire,
                 size_t n);
bool deposit_avx512(DType t, const vocab::KulischLayout& l, uint8_t* acc, const uint8_t* wire,
                    size_t n);
bool store_avx512(DType t, const vocab::KulischLayout& l, uint8_t* wire, const uint8_t* acc,
                  size_t n);

// kulisch::load / deposit / store without any vector kernel: the specification that tests
// compare the vector paths with.
void load_portable(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire, size_t n);
void deposit_portable(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire, size_t n);
void store_portable(DType t, uint32_t contributors, uint8_t* wire, const uint8_t* acc, size_t n);

}  // namespace detail

}  // namespace epic::arith::kulisch
