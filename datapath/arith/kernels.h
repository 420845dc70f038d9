// Kernel tables: one implementation of load/combine/store per instruction
// set, all bit-identical to `reference::` (accumulate.h), and the choice of
// the one accumulate.h dispatches to.
//
// The choice is made once, on first use: the best ISA the CPU supports, capped
// by the environment variable EPIC_ARITH_ISA (reference | portable | avx2 |
// avx512) when it is set, e.g. to run a whole test suite on the fallback
// path. A caller on the hot path may resolve
// `active_kernels().combine[dtype][op]` once per group and call the pointer
// directly, skipping the per-call dispatch (~1.5 ns; 14-20% of a 1 KB combine
// in L1, nothing measurable in L2).
// Threading: tables are immutable; the first call of active_kernels() is
// thread-safe (a function-local static).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "datapath/arith/dtype.h"

namespace epic::arith {

// Ordered from least to most capable.
enum class Isa : uint8_t {
  kReference = 0,  // the specification (exact double arithmetic); slow, for tests
  kPortable = 1,   // plain C++ on bit patterns, any CPU: the fallback
  kAvx2 = 2,       // x86-64 AVX2 + F16C
  kAvx512 = 3,     // x86-64 AVX-512 F + BW + VL (512-bit vectors, masked tails)
};
inline constexpr size_t kNumIsas = 4;

using LoadFn = void (*)(uint8_t* acc, const uint8_t* wire, size_t n);
using CombineFn = void (*)(uint8_t* acc, const uint8_t* wire, size_t n);
using StoreFn = void (*)(uint8_t* wire, const uint8_t* acc, size_t n);

// Indexed by static_cast<size_t>(DType) and static_cast<size_t>(ReduceOp).
struct Kernels {
  Isa isa;
  LoadFn load[kNumDTypes];
  CombineFn combine[kNumDTypes][kNumReduceOps];
  StoreFn store[kNumDTypes];
};

// The kernels of one ISA, or nullptr when this build or this CPU lacks it.
const Kernels* kernels_for(Isa isa);

// The table load/combine/store dispatch to (chosen once, see above).
const Kernels& active_kernels();

// The choice active_kernels() makes: the best ISA the CPU supports that is
// not above `cap` (nullopt: no cap); kReference only when capped there.
// Exposed for tests.
Isa select_isa(std::optional<Isa> cap);

std::string_view to_string(Isa isa);                  // "reference", "portable", "avx2", "avx512"
std::optional<Isa> parse_isa(std::string_view name);  // inverse of to_string

// load/combine/store through one table; out-of-range DType/ReduceOp: no-op.
inline void load(const Kernels& k, DType t, uint8_t* acc, const uint8_t* wire, size_t n) {
  const auto ti = static_cast<size_t>(t);
  if (ti < kNumDTypes) k.load[ti](acc, wire, n);
}
inline void combine(const Kernels& k, DType t, ReduceOp op, uint8_t* acc, const uint8_t* wire,
                    size_t n) {
  const auto ti = static_cast<size_t>(t);
  const auto oi = static_cast<size_t>(op);
  if (ti < kNumDTypes && oi < kNumReduceOps) k.combine[ti][oi](acc, wire, n);
}
inline void store(const Kernels& k, DType t, uint8_t* wire, const uint8_t* acc, size_t n) {
  const auto ti = static_cast<size_t>(t);
  if (ti < kNumDTypes) k.store[ti](wire, acc, n);
}

// Per-ISA tables (nullptr where not compiled in or not supported by the CPU).
namespace detail {
const Kernels* reference_kernels();
const Kernels* portable_kernels();
const Kernels* avx2_kernels();
const Kernels* avx512_kernels();
}  // namespace detail

}  // namespace epic::arith
