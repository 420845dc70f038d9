#include "datapath/engine/check_duplicate.h"

#include "proto/vocab/psn.h"

namespace epic::engine {

SlotVerdict check_duplicate(Slot& s, uint32_t gpsn, int child, const SlotClaim& claim) {
  if (s.state == SlotState::kEmpty && (!s.used || vocab::psn_gt(gpsn, s.psn))) {
    s = Slot{};
    s.used = true;
    s.psn = gpsn;
    s.state = SlotState::kAggregating;
    s.control = claim.control;
    s.opcode = claim.opcode;
    s.payload_len = claim.payload_len;
    s.immdt = claim.immdt;
    s.dtype = claim.dtype;
    s.op = claim.op;
  } else if (s.state == SlotState::kEmpty || s.psn != gpsn) {
    return vocab::psn_gt(gpsn, s.psn) ? SlotVerdict::kBusy : SlotVerdict::kStale;
  }
  return (s.bitmap & (uint64_t{1} << child)) != 0 ? SlotVerdict::kDuplicate : SlotVerdict::kFresh;
}

}  // namespace epic::engine
