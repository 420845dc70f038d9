#include "datapath/engine/aggregate_data.h"

#include <cstring>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kulisch.h"

namespace epic::engine {

namespace {

// KULISCH_FIXED: a rank's plain values are deposited, a switch child's partial is merged.
bool aggregate_exact(SlotRegion& region, uint32_t i, Source from, const uint8_t* payload,
                     uint16_t len) {
  const Slot& s = region.meta[i];
  const size_t n = s.payload_len / arith::wire_bytes(s.dtype);
  uint8_t* acc = region.accum_of(i);
  if (from == Source::kSwitch) {
    return arith::kulisch::merge_partial(s.dtype, region.contributors, acc, n, payload, len,
                                         s.degree == 0);
  }
  if (len != s.payload_len) return false;
  if (s.degree == 0) {
    arith::kulisch::load(s.dtype, region.contributors, acc, payload, n);
  } else {
    arith::kulisch::deposit(s.dtype, region.contributors, acc, payload, n);
  }
  return true;
}

}  // namespace

Contribution aggregate_data(SlotRegion& region, uint32_t i, int child, Source from, uint8_t opcode,
                            const uint8_t* payload, uint16_t len, uint16_t fan_in,
                            Completion then) {
  Slot& s = region.meta[i];
  const bool exact = region.exact(s);
  if (opcode != s.opcode || (!exact && len != s.payload_len)) return Contribution::kInconsistent;
  if (s.control) {
    if (s.degree == 0) std::memcpy(region.result_of(i), payload, s.payload_len);
  } else if (exact) {
    if (!aggregate_exact(region, i, from, payload, len)) return Contribution::kInconsistent;
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
    const size_t n = s.payload_len / arith::wire_bytes(s.dtype);
    if (exact && then == Completion::kPartialUp) {
      // The exact partial goes up (up_payload); the parent's result will fill result_of(i).
    } else if (exact) {
      arith::kulisch::store(s.dtype, region.contributors, region.result_of(i), region.accum_of(i),
                            n);
    } else {
      arith::store(s.dtype, region.result_of(i), region.accum_of(i), n);
    }
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

UpPayload up_payload(SlotRegion& region, uint32_t i) {
  const Slot& s = region.meta[i];
  if (!region.exact(s) || region.partial.empty()) return {region.result_of(i), s.payload_len};
  // The accumulator is kept until the slot is recycled, so a re-send encodes the same bytes.
  const size_t n = s.payload_len / arith::wire_bytes(s.dtype);
  const size_t len =
      arith::kulisch::encode_partial(s.dtype, region.contributors, region.accum_of(i), n,
                                     region.partial.data(), region.partial.size());
  return {region.partial.data(), static_cast<uint16_t>(len)};
}

}  // namespace epic::engine
