// AggregateData: adds one child's contribution to its PSN's slot — the first
// loads the accumulator, the others combine into it (datapath/arith: every
// dtype × sum/min/max; a control message is copied, never summed) — and, when
// the slot's degree reaches the fan-in, stores the result in wire format. Also
// the result of a slot that arrives from the parent.
// The group's accumulator profile decides how a float sum accumulates
// (SlotRegion::exact): FP32_ARRIVAL in binary32 in arrival order, KULISCH_FIXED
// exactly (datapath/arith/kulisch.h), where a switch child's contribution is
// its exact partial (proto/vocab/partial.h) and is merged, not deposited.
// Hot path: no allocation; one pass over the payload (a second to store).
#pragma once

#include <cstdint>

#include "datapath/engine/slot.h"

namespace epic::engine {

enum class Contribution : uint8_t {
  kInconsistent,  // opcode or length differs from the slot's: dropped, nothing changed
  kAdded,         // aggregated; more contributions to come
  kCompleted,     // aggregated, and the degree reached the fan-in: the result is stored
};

// ECN (RFC 3168) of an aggregate: CE if either is CE (congestion on any contribution's path
// reaches the receivers, so their senders slow down); else Not-ECT if either is not
// ECN-capable; else ECT(0) (ECT(1) only if both are).
inline constexpr uint8_t kEcnNotEct = 0, kEcnEct1 = 1, kEcnEct0 = 2, kEcnCe = 3;
constexpr uint8_t combine_ecn(uint8_t a, uint8_t b) {
  if (a == kEcnCe || b == kEcnCe) return kEcnCe;
  if (a == kEcnNotEct || b == kEcnNotEct) return kEcnNotEct;
  return a == b ? a : kEcnEct0;
}
// A contribution with ECN bits `ecn` was just added to slot `s` (its degree counts it): the
// first sets the slot's codepoint, the others combine into it.
inline void note_ecn(Slot& s, uint8_t ecn) {
  s.ecn = s.degree <= 1 ? static_cast<uint8_t>(ecn & 3) : combine_ecn(s.ecn, ecn & 3);
}

// Where a contribution comes from: a rank (its plain dtype) or a switch child (plain, or for
// an exact sum its AUTO partial).
enum class Source : uint8_t { kRank, kSwitch };

// What a completed slot is for: children (store the result) or, at a non-root switch, its
// parent — for an exact sum the parent gets the exact partial (up_payload), so rounding the
// result there would be wasted work (about 20 ns per fp32 element).
enum class Completion : uint8_t { kResult, kPartialUp };

// Child `child`'s contribution (opcode, payload) to slot `i`, claimed for it by
// check_duplicate() (SlotVerdict::kFresh) with the slot's payload length; `fan_in`
// contributions complete the slot. A malformed exact partial is kInconsistent.
Contribution aggregate_data(SlotRegion& region, uint32_t i, int child, Source from, uint8_t opcode,
                            const uint8_t* payload, uint16_t len, uint16_t fan_in,
                            Completion then = Completion::kResult);

// The result of slot `i` as the parent sent it (kSentUp → kComplete). False, nothing changed,
// when the opcode or length differs from the slot's.
bool store_parent_result(SlotRegion& region, uint32_t i, uint8_t opcode, const uint8_t* payload,
                         uint16_t len);

// What a non-root switch sends its parent for slot `i` (complete): the stored result, or for
// an exact sum the slot's exact partial, encoded into region.partial (AUTO).
struct UpPayload {
  const uint8_t* data = nullptr;
  uint16_t len = 0;
};
UpPayload up_payload(SlotRegion& region, uint32_t i);

}  // namespace epic::engine
