// Slots: the computation state of Mode-II. A group owns 2*MW slots; PSN g uses
// slot g mod 2*MW. A slot holds the PSN it is for, which children contributed
// (bitmap) and how many (degree), the accumulator (arith accumulator layout)
// and, once complete, the result in wire format for re-sending to a child
// whose copy was lost.
// Threading: owned by the worker that owns the group.
#pragma once

#include <cstdint>
#include <vector>

#include "datapath/arith/dtype.h"
#include "proto/vocab/memory.h"

namespace epic::engine {

enum class SlotState : uint8_t {
  kEmpty,        // recycled; any PSN that maps here may claim it
  kAggregating,  // contributions arriving
  kSentUp,       // (non-root) partial aggregate sent to the parent, result not back yet
  kComplete,     // result known (and sent down)
};

struct Slot {
  uint32_t psn = 0;   // the PSN it holds, or held last (kept when recycled)
  bool used = false;  // held a PSN at least once
  SlotState state = SlotState::kEmpty;
  bool control = false;  // the collective's control message
  uint8_t opcode = 0;    // opcode every contribution carried
  uint16_t payload_len = 0;
  uint16_t degree = 0;
  uint64_t bitmap = 0;  // children that contributed
  uint32_t immdt = 0;
  arith::DType dtype = arith::DType::kInt32;
  arith::ReduceOp op = arith::ReduceOp::kSum;
};

// The manager grants and accounts slot memory with vocab::group_memory_bytes: the bookkeeping
// must be the size it counts.
static_assert(sizeof(Slot) == vocab::kSlotMetaBytes, "proto/vocab/memory.h kSlotMetaBytes");

// The memory a group was granted: 2*MW slots with their payload areas, sized by
// proto/vocab/memory.h (bytes() == vocab::group_memory_bytes(MW, pmtu)).
struct SlotRegion {
  uint32_t nslots = 0;  // 2 * MW
  uint16_t pmtu = 0;
  std::vector<Slot> meta;
  // nslots * vocab::slot_accum_bytes(pmtu) (pmtu/2 * 4) bytes: 4-byte accumulators (fp32 for the
  // half types), starting on a cache line (an accumulator 16 bytes off a line combines 10-33%
  // slower, docs/arithmetic.md).
  std::vector<uint8_t> accum_storage;
  uint8_t* accum = nullptr;
  std::vector<uint8_t> result;  // nslots * vocab::slot_result_bytes(pmtu) bytes, wire format

  SlotRegion(uint32_t window, uint16_t path_mtu)
      : nslots(static_cast<uint32_t>(vocab::slots_for_window(window))),
        pmtu(path_mtu),
        meta(nslots),
        accum_storage(size_t{nslots} * vocab::slot_accum_bytes(path_mtu) + 64),
        result(size_t{nslots} * vocab::slot_result_bytes(path_mtu)) {
    const auto addr = reinterpret_cast<uintptr_t>(accum_storage.data());
    accum = accum_storage.data() + ((64 - addr % 64) % 64);
  }
  SlotRegion(const SlotRegion&) = delete;
  SlotRegion& operator=(const SlotRegion&) = delete;
  uint32_t index(uint32_t psn) const { return psn % nslots; }
  uint8_t* accum_of(uint32_t i) { return accum + size_t{i} * vocab::slot_accum_bytes(pmtu); }
  uint8_t* result_of(uint32_t i) {
    return result.data() + size_t{i} * vocab::slot_result_bytes(pmtu);
  }
  size_t accum_bytes() const { return size_t{nslots} * vocab::slot_accum_bytes(pmtu); }
  size_t bytes() const { return meta.size() * sizeof(Slot) + accum_bytes() + result.size(); }
};

}  // namespace epic::engine
