// Internal to datapath/arith/kulisch*.cc: the bytes of a Kulisch accumulator of n elements.
// Threading: pure functions.
#pragma once

#include <cstddef>

#include "proto/vocab/arith.h"

namespace epic::arith::kulisch {

constexpr size_t accum_bytes_of(const vocab::KulischLayout& l, size_t n) {
  return n * (size_t{l.limbs} * l.limb_bytes + vocab::kKulischFlagBytes);
}

}  // namespace epic::arith::kulisch
