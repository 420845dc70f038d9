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

#include "proto/vocab/arith.h"
#include "proto/vocab/dtype.h"
#include "proto/vocab/limits.h"

namespace epic::vocab {

// Bytes of one accumulator element of the default arithmetic (FP32_ARRIVAL, arith.h): int32
// in int32_t, fp32/fp16/bf16 in binary32 (int8 in one byte, fp8 in binary32 too).
inline constexpr uint32_t kAccumElementBytes = 4;

// Bytes of a slot's bookkeeping: sizeof(engine::Slot), asserted by the engine.
inline constexpr uint32_t kSlotMetaBytes = 32;

// Bytes of one slot's accumulator at path MTU `pmtu` for a group of the default arithmetic
// (FP32_ARRIVAL, no dtype named: fp16/bf16 in binary32): 2·pmtu. Other groups:
// slot_accum_bytes(pmtu, GroupArith, contributors) in arith.h.
constexpr uint64_t slot_accum_bytes(uint32_t pmtu) {
  return slot_accum_bytes(pmtu, GroupArith{}, 1);
}
// Bytes of one slot's result copy (wire format) at path MTU `pmtu`.
constexpr uint64_t slot_result_bytes(uint32_t pmtu) { return pmtu; }
// Bytes one slot costs at path MTU `pmtu`: 3·pmtu + 32 (3104 at 1024, 12320 at 4096).
constexpr uint64_t slot_bytes(uint32_t pmtu) {
  return kSlotMetaBytes + slot_accum_bytes(pmtu) + slot_result_bytes(pmtu);
}
// Bytes one slot costs for a group of `arith` with `contributors` ranks (arith.h): e.g. an
// exact fp32 group at 1024 holds 256 elements of 73 bytes, 18720 + 1024 + 32 = 19776.
constexpr uint64_t slot_bytes(uint32_t pmtu, const GroupArith& arith, uint32_t contributors) {
  return kSlotMetaBytes + slot_accum_bytes(pmtu, arith, contributors) + slot_result_bytes(pmtu);
}

// Slots a group with window `window` owns on each switch of its tree: 2·window.
constexpr uint64_t slots_for_window(uint32_t window) { return 2ull * window; }

// The switch memory, in bytes, of one group context with window `window` and path MTU `pmtu`:
// 2·window slots of slot_bytes(pmtu). Every grant of a switch's memory is this figure.
constexpr uint64_t group_memory_bytes(uint32_t window, uint32_t pmtu) {
  return slots_for_window(window) * slot_bytes(pmtu);
}
constexpr uint64_t group_memory_bytes(uint32_t window, uint32_t pmtu, const GroupArith& arith,
                                      uint32_t contributors) {
  return slots_for_window(window) * slot_bytes(pmtu, arith, contributors);
}

// A switch's memory when its configuration does not say: 8192 slots at the default path MTU
// (what incd granted before memory was counted in bytes), 25427968 bytes.
inline constexpr uint64_t kDefaultSwitchMemoryBytes = 8192 * slot_bytes(kDefaultPmtu);

}  // namespace epic::vocab
