// Internal to datapath/arith/kulisch*.cc: the accumulator size of a layout, and the table of
// vectorised load/deposit kernels (AVX-512) that kulisch.cc prefers to its portable loops when
// the CPU has them and EPIC_ARITH_ISA does not cap below avx512 (kernels.h). A kernel returns
// false for a (dtype, layout) it does not handle; then the portable loop runs. Every kernel
// writes the same accumulator bytes as the portable loop (kulisch_unit_tests checks it).
// Threading: immutable tables.
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/arith/dtype.h"
#include "proto/vocab/arith.h"

namespace epic::arith::kulisch {

constexpr size_t accum_bytes_of(const vocab::KulischLayout& l, size_t n) {
  return n * (size_t{l.limbs} * l.limb_bytes + vocab::kKulischFlagBytes);
}

struct Kernels {
  const char* name;
  bool (*load)(DType t, const vocab::KulischLayout& l, uint8_t* acc, const uint8_t* wire, size_t n);
  bool (*deposit)(DType t, const vocab::KulischLayout& l, uint8_t* acc, const uint8_t* wire,
                  size_t n);
};

// The AVX-512 table, or nullptr when this CPU lacks AVX-512 F/BW/VL.
const Kernels* avx512_kernels();
// The table kulisch.cc uses: avx512_kernels() unless EPIC_ARITH_ISA caps below avx512
// (reference, portable, avx2: the portable loops); chosen once.
const Kernels* active();

}  // namespace epic::arith::kulisch
