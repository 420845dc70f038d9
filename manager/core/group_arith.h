// A group's arithmetic as inc-manager admits and accounts it (proto/vocab/arith.h,
// docs/arithmetic.md): the memory a group takes on each switch of its tree, its text form in
// messages and views, and PRISM's figures for an exact group — in one place for admission,
// grants, Temporal Mux, restore checks and the views.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "manager/core/group.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/memory.h"
#include "proto/vocab/partial.h"

namespace epic::manager {

// "fp32_arrival", "fp32_arrival fp8_e4m3", "kulisch_fixed fp32".
inline std::string arith_text(const vocab::GroupArith& a) {
  std::string s(vocab::to_string(a.profile));
  // append, not " " + string: gcc 12 -O3 reports a false -Wrestrict on the latter.
  if (a.dtype) s.append(" ").append(vocab::to_string(*a.dtype));
  return s;
}

// Bytes the group takes on every switch of its tree at `window`.
inline uint64_t group_bytes(const GroupRequest& r, uint32_t window) {
  return vocab::group_memory_bytes(window, r.pmtu, r.arith, static_cast<uint32_t>(r.ranks.size()));
}

// An exact group's figures: PRISM's width W over its ranks and the bytes of one accumulator
// element (0 and 0 when the group's float sums are not exact).
struct ExactFigures {
  uint32_t width_bits = 0;
  uint32_t accum_bytes_per_element = 0;
};
inline ExactFigures exact_figures(const vocab::GroupArith& a, uint32_t ranks) {
  if (a.profile != vocab::AccumProfile::kKulischFixed || !a.dtype) return {};
  return {vocab::exact_width_bits(*a.dtype, ranks),
          vocab::accum_element_bytes(a.profile, *a.dtype, vocab::ReduceOp::kSum, ranks)};
}

// The largest exact partial the group's switches send each other (0 unless it sums floats
// exactly): what the MTU of every switch-to-switch link of its tree must carry.
inline uint32_t exact_partial_bytes(const GroupRequest& r) {
  return vocab::max_group_partial_bytes(r.pmtu, r.arith, static_cast<uint32_t>(r.ranks.size()));
}

// "exact fp32 sum over 256 contributors needs W = 286 bits (73 bytes per element, 2527232 bytes
// on each switch at window 64, pmtu 1024)" — the opening of every refusal of an exact group.
inline std::string exact_needs(const GroupRequest& r, uint32_t window) {
  const auto ranks = static_cast<uint32_t>(r.ranks.size());
  const ExactFigures f = exact_figures(r.arith, ranks);
  return "exact " + std::string(vocab::to_string(*r.arith.dtype)) + " sum over " +
         std::to_string(ranks) + " contributors needs W = " + std::to_string(f.width_bits) +
         " bits (" + std::to_string(f.accum_bytes_per_element) + " bytes per element, " +
         std::to_string(group_bytes(r, window)) + " bytes on each switch at window " +
         std::to_string(window) + ", pmtu " + std::to_string(r.pmtu) + ")";
}

}  // namespace epic::manager
