// Switch memory in bytes: what one Mode-II slot and one group context cost on a switch, the
// unit of every grant, quota, capacity and reservation (inc-manager, the IncAgent, incd,
// incctl). The engine sizes its slot memory (datapath/engine/slot.h SlotRegion) with these same
// functions and asserts that its slot bookkeeping is kSlotMetaBytes, so the manager's accounting
// and the memory the switch really allocates cannot drift apart.
//
// A slot holds one PSN of one group: its bookkeeping (engine::Slot), an accumulator of
// pmtu / (narrowest wire element) elements of the widest accumulator element, and the result in
// wire format (pmtu bytes, re-sent to a child whose copy was lost). A group with window MW owns
// 2·MW slots on every switch of its tree (PSN p uses slot p mod 2·MW).
// Threading: constants and pure functions.
#pragma once

#include <cstdint>

#include "proto/vocab/dtype.h"
#include "proto/vocab/limits.h"

namespace epic::vocab {

// Bytes of one accumulator element. FP32_ARRIVAL (docs/arithmetic.md): int32 accumulates in
// int32_t, fp32/fp16/bf16 in binary32, so every element is 4 bytes; datapath/arith's
// accum_bytes() returns this.
inline constexpr uint32_t kAccumElementBytes = 4;

// The narrowest element on the wire (fp16, bf16: 2 bytes): a pmtu payload of it has the most
// elements, so it sizes the accumulator.
constexpr uint32_t min_wire_bytes() {
  uint32_t least = UINT32_MAX;
  for (uint8_t code = 0; code < kNumDTypes; ++code) {
    const auto w = static_cast<uint32_t>(wire_bytes(static_cast<DType>(code)));
    least = w < least ? w : least;
  }
  return least;
}

// Bytes of a slot's bookkeeping: sizeof(engine::Slot), asserted by the engine.
inline constexpr uint32_t kSlotMetaBytes = 32;

inline constexpr uint32_t kMinWireBytes = min_wire_bytes();

// Bytes of one slot's accumulator at path MTU `pmtu`: 2·pmtu. (On the packet path: a constant
// divisor, never the loop of min_wire_bytes().)
constexpr uint64_t slot_accum_bytes(uint32_t pmtu) {
  return uint64_t{pmtu} / kMinWireBytes * kAccumElementBytes;
}
// Bytes of one slot's result copy (wire format) at path MTU `pmtu`.
constexpr uint64_t slot_result_bytes(uint32_t pmtu) { return pmtu; }
// Bytes one slot costs at path MTU `pmtu`: 3·pmtu + 32 (3104 at 1024, 12320 at 4096).
constexpr uint64_t slot_bytes(uint32_t pmtu) {
  return kSlotMetaBytes + slot_accum_bytes(pmtu) + slot_result_bytes(pmtu);
}

// Slots a group with window `window` owns on each switch of its tree: 2·window.
constexpr uint64_t slots_for_window(uint32_t window) { return 2ull * window; }

// The switch memory, in bytes, of one group context with window `window` and path MTU `pmtu`:
// 2·window slots of slot_bytes(pmtu). Every grant of a switch's memory is this figure.
constexpr uint64_t group_memory_bytes(uint32_t window, uint32_t pmtu) {
  return slots_for_window(window) * slot_bytes(pmtu);
}

// A switch's memory when its configuration does not say: 8192 slots at the default path MTU
// (what incd granted before memory was counted in bytes), 25427968 bytes.
inline constexpr uint64_t kDefaultSwitchMemoryBytes = 8192 * slot_bytes(kDefaultPmtu);

}  // namespace epic::vocab
