// GroupInstance: one group's context at this switch as a worker runs it — its
// configuration and its engine state — prepared whole on the control side:
// validated (check_group) and allocated (the collective history) before any
// worker sees it. A polled worker only attaches the ready instance to its
// engine (Mode2Engine::attach): no validation, allocation or exception on the
// packet cores (the DPDK datapath publishes instances in its snapshots).
//
// Memory per group, besides its slots (slot.h): the history of recent
// collectives, min(2·MW + 2, kMaxHistory) records of sizeof(CollectiveRecord)
// bytes (~560), so at most ~2.3 MB whatever the window.
// Threading: prepared by the control side; the owning worker mutates `state`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "datapath/engine/group.h"
#include "datapath/engine/mode3_state.h"

namespace epic::engine {

struct GroupInstance {
  GroupConfig config;
  GroupState state;                   // state.config points at `config`
  std::unique_ptr<Mode3State> mode3;  // Mode-III only; state.mode3 points at it
  GroupInstance() = default;
  GroupInstance(const GroupInstance&) = delete;
  GroupInstance& operator=(const GroupInstance&) = delete;
};

// Collectives a group remembers for per-endpoint PSN translation. A packet can only belong to
// a collective whose PSNs lie within the ranks' windows (at most 2·MW + 2 of them, each at least
// one packet); libinc keeps no more than two in flight per rank. A packet of a collective older
// than the newest kMaxHistory is dropped as unknown_psn (counted), never matched to another.
inline constexpr uint32_t kMaxHistory = 4096;
uint32_t history_records(uint32_t window);

// What the engine requires of a group's configuration (window, path MTU, children, ranks; in
// Mode-III children whose ranks are one contiguous range, each hop's sequences are made of);
// "" when it is fine, else why not. Check it before sizing the group's slot memory.
std::string check_config(const GroupConfig& config);
// check_config, and the slot memory: 2 * window slots of the group's path MTU.
std::string check_group(const GroupConfig& config, const SlotRegion* slots);

// check_group, then the instance with its initial state; nullptr and `error` when it fails.
std::unique_ptr<GroupInstance> prepare_group(const GroupConfig& config, SlotRegion* slots,
                                             std::string& error);

}  // namespace epic::engine
