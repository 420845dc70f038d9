// AggregateData: adds one child's contribution to its PSN's slot — the first
// loads the accumulator, the others combine into it (datapath/arith: int32,
// fp32, fp16, bf16 × sum/min/max; a control message is copied, never summed) —
// and, when the slot's degree reaches the fan-in, stores the result in wire
// format. Also the result of a slot that arrives from the parent.
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

// Child `child`'s contribution (opcode, payload) to slot `i`, claimed for it by
// check_duplicate() (SlotVerdict::kFresh); `fan_in` contributions complete the slot.
Contribution aggregate_data(SlotRegion& region, uint32_t i, int child, uint8_t opcode,
                            const uint8_t* payload, uint16_t len, uint16_t fan_in);

// The result of slot `i` as the parent sent it (kSentUp → kComplete). False, nothing changed,
// when the opcode or length differs from the slot's.
bool store_parent_result(SlotRegion& region, uint32_t i, uint8_t opcode, const uint8_t* payload,
                         uint16_t len);

}  // namespace epic::engine
