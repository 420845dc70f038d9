// Slots: the computation state of Mode-II (and the entries of Mode-III's Pipes). A group owns 2*MW
// slots; PSN g uses slot g mod 2*MW. A slot holds the PSN it is for, which children contributed
// (bitmap) and how many (degree), the accumulator (arith accumulator layout)
// and, once complete, the result in wire format for re-sending to a child
// whose copy was lost.
// Threading: owned by the worker that owns the group.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "datapath/arith/dtype.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/memory.h"
#include "proto/vocab/partial.h"

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
  // The ECN codepoint the slot's result carries (IP ECN bits, RFC 3168): CE if any contribution
  // was CE, else Not-ECT if any was not ECN-capable, else ECT (aggregate_data.h note_ecn). In
  // the padding: a slot's bookkeeping stays vocab::kSlotMetaBytes.
  uint8_t ecn = 0;
};

// The manager grants and accounts slot memory with vocab::group_memory_bytes: the bookkeeping
// must be the size it counts.
static_assert(sizeof(Slot) == vocab::kSlotMetaBytes, "proto/vocab/memory.h kSlotMetaBytes");

// The memory a group was granted: 2*MW slots with their payload areas, sized by
// proto/vocab/memory.h for the group's arithmetic (bytes() ==
// vocab::group_memory_bytes(MW, pmtu, arith, contributors)).
struct SlotRegion {
  uint32_t nslots = 0;  // 2 * MW
  uint16_t pmtu = 0;
  vocab::GroupArith arith{};  // the accumulator profile and dtype the slots are sized for
  uint32_t contributors = 1;  // R: the group's ranks (sizes KULISCH_FIXED accumulators)
  uint64_t accum_stride = 0;  // vocab::slot_accum_bytes(pmtu, arith, contributors)
  std::vector<Slot> meta;
  // nslots * accum_stride bytes, starting on a cache line (an accumulator 16 bytes off a line
  // combines 10-33% slower, docs/arithmetic.md); the stride is a multiple of 64 for every
  // power-of-two path MTU. FP32_ARRIVAL: 4-byte accumulators (1 for int8); KULISCH_FIXED sums:
  // the Kulisch layout (datapath/arith/kulisch.h).
  std::vector<uint8_t> accum_storage;
  uint8_t* accum = nullptr;
  std::vector<uint8_t> result;  // nslots * vocab::slot_result_bytes(pmtu) bytes, wire format
  // Where a non-root switch encodes a slot's exact partial (AUTO, proto/vocab/partial.h) before
  // the frame to its parent is built from it: one packet's worth, so not slot memory. Empty
  // unless the group sums exactly.
  std::vector<uint8_t> partial;

  SlotRegion(uint32_t window, uint16_t path_mtu, const vocab::GroupArith& group_arith = {},
             uint32_t group_ranks = 1)
      : nslots(static_cast<uint32_t>(vocab::slots_for_window(window))),
        pmtu(path_mtu),
        arith(group_arith),
        contributors(group_ranks),
        accum_stride(vocab::slot_accum_bytes(path_mtu, group_arith, group_ranks)),
        meta(nslots),
        accum_storage(size_t{nslots} * accum_stride + 64),
        result(size_t{nslots} * vocab::slot_result_bytes(path_mtu)) {
    const auto addr = reinterpret_cast<uintptr_t>(accum_storage.data());
    accum = accum_storage.data() + ((64 - addr % 64) % 64);
    partial.resize(vocab::max_group_partial_bytes(pmtu, arith, contributors));
  }
  SlotRegion(const SlotRegion&) = delete;
  SlotRegion& operator=(const SlotRegion&) = delete;
  uint32_t index(uint32_t psn) const { return psn % nslots; }
  uint8_t* accum_of(uint32_t i) { return accum + size_t{i} * accum_stride; }
  const uint8_t* accum_of(uint32_t i) const { return accum + size_t{i} * accum_stride; }
  uint8_t* result_of(uint32_t i) {
    return result.data() + size_t{i} * vocab::slot_result_bytes(pmtu);
  }
  size_t accum_bytes() const { return size_t{nslots} * accum_stride; }
  size_t bytes() const { return meta.size() * sizeof(Slot) + accum_bytes() + result.size(); }
  // Whether slot `s`'s collective sums exactly (KULISCH_FIXED, a float sum).
  bool exact(const Slot& s) const {
    return !s.control && vocab::uses_kulisch(arith.profile, s.dtype, s.op);
  }
};

}  // namespace epic::engine
