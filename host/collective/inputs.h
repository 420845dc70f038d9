// Deterministic inputs whose reductions are exact: every rank of a group (and
// the harness) can generate any rank's input to any collective from
// (seed, collective index, rank) alone, so each rank computes the expected
// result of every collective locally (host/collective/expected.h) and checks
// its own bit for bit, with no coordinator.
//
// Exact means order-independent: the switch combines contributions in arrival
// order (FP32_ARRIVAL) and rounds partial aggregates to the wire type between
// tree levels, so a float sum is exact only while every partial sum is an
// integer the wire type represents. Sum inputs are therefore small integers,
// |x| <= min(8, L / ranks) with L = 2^24 (fp32), 2^11 (fp16), 2^8 (bf16),
// 2^4 (fp8 E4M3), 2^3 (fp8 E5M2); in a group larger than L only ranks below L
// contribute non-zero values. int32 and int8 sums wrap (exact in any order), so
// their inputs are uniform bits; min/max are exact on any values, so float
// min/max inputs are integers in [-1024, 1024] ([-448, 448] for E4M3, its
// largest finite value) rounded once to the wire type.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "proto/vocab/collective.h"

namespace epic::host {

// Rank `rank`'s input to collective number `index` of a run seeded with
// `seed` (send_bytes(d, ranks) bytes, little-endian elements).
std::vector<uint8_t> exact_input(const vocab::CollectiveDescriptor& d, uint16_t ranks,
                                 uint64_t seed, uint64_t index, uint16_t rank);

// Every rank's input: [r] = exact_input(d, ranks, seed, index, r).
std::vector<std::vector<uint8_t>> exact_inputs(const vocab::CollectiveDescriptor& d, uint16_t ranks,
                                               uint64_t seed, uint64_t index);

}  // namespace epic::host
