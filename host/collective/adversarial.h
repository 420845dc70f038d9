// Adversarial float inputs for exact sums (KULISCH_FIXED, docs/arithmetic.md): values that
// make an arrival-order sum lose bits or overflow, built from each format's bit fields alone
// (not through datapath/arith), deterministic per (seed, collective index, rank) so that every
// rank — and a checker holding every rank's inputs — generates any rank's input on its own.
//
// Element i of every rank follows pattern i % 9: random finite values; catastrophic
// cancellation (rank 0 +big, the last rank -big, the others small); 1 + terms each below half
// an ulp of 1; subnormals only; the largest magnitude (overflow, and cancellation back to
// finite); NaN/+-inf/-0 among finite values; signed zeros only; near-equal magnitudes of mixed
// sign; 1e8 + small - 1e8, whose small part arrival order loses.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "proto/vocab/collective.h"

namespace epic::host {

// Rank `rank`'s input to collective number `index` (send_bytes(d, ranks) bytes, little-endian);
// d.dtype must be a float type (vocab::is_float), else the input is all zero bytes.
std::vector<uint8_t> adversarial_input(const vocab::CollectiveDescriptor& d, uint16_t ranks,
                                       uint64_t seed, uint64_t index, uint16_t rank);
// Every rank's input: [r] = adversarial_input(d, ranks, seed, index, r).
std::vector<std::vector<uint8_t>> adversarial_inputs(const vocab::CollectiveDescriptor& d,
                                                     uint16_t ranks, uint64_t seed, uint64_t index);

}  // namespace epic::host
