// CheckDuplicate: whether a child's contribution to group PSN `gpsn` is new.
// Slot gpsn mod 2·MW is the PSN's computation state; its bitmap records which
// children have contributed. The verdict decides what the pipeline does next:
// aggregate it (kFresh), answer a retransmission (kDuplicate), or drop it
// because the slot belongs to another PSN (kStale: an older one, already
// recycled or never held here; kBusy: a newer live one holds the slot).
// Hot path: no allocation; writes only the slot it claims.
#pragma once

#include <cstdint>

#include "datapath/engine/slot.h"

namespace epic::engine {

enum class SlotVerdict : uint8_t {
  kFresh,      // the child has not contributed to this PSN: aggregate it
  kDuplicate,  // the child already contributed: a retransmission
  kStale,      // the slot holds or held a newer PSN, or was recycled after this one
  kBusy,       // the slot is held by an older PSN that is still live
};

// What a new PSN's slot is claimed with: the collective's packet as its first contribution
// carried it.
struct SlotClaim {
  bool control = false;
  uint8_t opcode = 0;
  uint16_t payload_len = 0;
  uint32_t immdt = 0;
  arith::DType dtype = arith::DType::kInt32;
  arith::ReduceOp op = arith::ReduceOp::kSum;
};

// The verdict for child `child`'s contribution to `gpsn`, whose slot is `s`. An empty slot is
// claimed for `gpsn` (reset, then filled from `claim`) unless it last held `gpsn` or a later
// PSN: a late duplicate of a recycled PSN must not claim the slot again, or the zombie would
// block the slot's next PSN.
SlotVerdict check_duplicate(Slot& s, uint32_t gpsn, int child, const SlotClaim& claim);

}  // namespace epic::engine
