// What each rank ends with: the result of a collective in a rank's receive
// buffer (the layout of host/collective/layout.h), computed from every rank's
// input with arith::reference — the specification the switch's vectorised
// arithmetic must match bit for bit. Used by the harness and by every
// tools/inc-rank process to check its own result without a coordinator.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "proto/vocab/arith.h"
#include "proto/vocab/collective.h"

namespace epic::host {

// The element-wise reduction, by `d.op` over `d.dtype`, of `n` elements taken
// at byte `offset` of each of `inputs` (load the first, combine the others in
// order, store once, as a switch does). A group of `arith` that sums d exactly
// (KULISCH_FIXED, vocab::uses_kulisch) gets the exact sum rounded once.
std::vector<uint8_t> reduce_reference(const vocab::CollectiveDescriptor& d,
                                      const std::vector<std::vector<uint8_t>>& inputs,
                                      size_t offset, size_t n, const vocab::GroupArith& arith = {});

// Rank `rank`'s result of collective `d` given inputs[r] for every rank r
// (recv_bytes(d, rank, inputs.size()) bytes).
std::vector<uint8_t> expected_result(const vocab::CollectiveDescriptor& d, uint16_t rank,
                                     const std::vector<std::vector<uint8_t>>& inputs,
                                     const vocab::GroupArith& arith = {});

// First byte offset at which `got` and `want` differ (the shorter length when
// one is a prefix of the other); nullopt when they are equal.
std::optional<size_t> first_difference(std::span<const uint8_t> got, std::span<const uint8_t> want);

}  // namespace epic::host
