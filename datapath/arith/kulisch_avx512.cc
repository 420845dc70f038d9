// KULISCH_FIXED load/deposit with AVX-512 (kulisch_kernels.h): placeholder table until the
// vector kernels land — every call falls back to the portable loops.
#include <cstdlib>
#include <optional>
#include <string_view>

#include "datapath/arith/kernels.h"
#include "datapath/arith/kulisch_kernels.h"

namespace epic::arith::kulisch {

namespace {

bool no_load(DType, const vocab::KulischLayout&, uint8_t*, const uint8_t*, size_t) { return false; }

}  // namespace

const Kernels* avx512_kernels() {
  static const Kernels k{"avx512", no_load, no_load};
  return &k;
}

const Kernels* active() {
  static const Kernels* chosen = [] {
    return select_isa(std::nullopt) >= Isa::kAvx512 &&
                   (std::getenv("EPIC_ARITH_ISA") == nullptr ||
                    parse_isa(std::getenv("EPIC_ARITH_ISA")) == Isa::kAvx512)
               ? avx512_kernels()
               : nullptr;
  }();
  return chosen;
}

}  // namespace epic::arith::kulisch
