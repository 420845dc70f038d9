#include "datapath/engine/aggregate_data.h"

#include <cstring>

#include "datapath/arith/accumulate.h"

namespace epic::engine {

Contribution aggregate_data(SlotRegion& region, uint32_t i, int child, uint8_t opcode,
                            const uint8_t* payload, uint16_t len, uint16_t fan_in) {
  Slot& s = region.meta[i];
  if (opcode != s.opcode || len != s.payload_len) return Contribution::kInconsistent;
  if (s.control) {
    if (s.degree == 0) std::memcpy(region.result_of(i), payload, s.payload_len);
  } else {
    const size_t n = s.payload_len / arith::wire_bytes(s.dtype);
    if (s.degree == 0) {
      arith::load(s.dtype, region.accum_of(i), payload, n);
    } else {
      arith::combine(s.dtype, s.op, region.accum_of(i), payload, n);
    }
  }
  s.bitmap |= uint64_t{1} << child;
  ++s.degree;
  if (s.degree < fan_in) return Contribution::kAdded;
  if (!s.control) {
    arith::store(s.dtype, region.result_of(i), region.accum_of(i),
                 s.payload_len / arith::wire_bytes(s.dtype));
  }
  return Contribution::kCompleted;
}

bool store_parent_result(SlotRegion& region, uint32_t i, uint8_t opcode, const uint8_t* payload,
                         uint16_t len) {
  Slot& s = region.meta[i];
  if (opcode != s.opcode || len != s.payload_len) return false;
  std::memcpy(region.result_of(i), payload, s.payload_len);
  s.state = SlotState::kComplete;
  return true;
}

}  // namespace epic::engine
