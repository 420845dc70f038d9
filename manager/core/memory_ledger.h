// MemoryLedger: the slot accounting of every switch — the manager's view of EPIC's indirection
// layer, where a group's context points at slot memory that can be granted, reclaimed and
// re-granted without touching its routing state. Per switch: the capacity, the Spatial Mux
// partitions reserved per tenant, what each tenant holds (from its partition and from the
// shared pool). A group's grant spans every switch of its IncTree and is planned as a whole
// (plan() changes nothing) and then committed, so a grant is all-or-nothing.
// Slot cost (Mode-II, datapath/engine/slot.h): a group with window MW owns 2·MW slots on every
// switch of its tree — PSN p uses slot p mod 2·MW.
// Threading: a plain value (copied to simulate Temporal Mux reclaims).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "manager/core/endpoint.h"
#include "manager/core/error.h"
#include "manager/core/tenant.h"

namespace epic::manager {

// Slots a group with window `window` needs on each switch of its tree.
inline uint64_t slots_for_window(uint32_t window) { return 2ull * window; }

// Part of a group's grant on one switch.
struct SlotGrant {
  SwitchId switch_id{};
  uint32_t slots = 0;
  uint32_t from_partition = 0;  // taken from the tenant's partition; the rest from the shared pool
  friend bool operator==(const SlotGrant&, const SlotGrant&) = default;
};

enum class PlanVerdict {
  kFits,
  kNoMemory,   // not enough free slots now
  kOverQuota,  // the tenant's quota is used up now
  kNever,      // more than the capacity, the partitions or the quota could ever give
};

struct GrantPlan {
  PlanVerdict verdict = PlanVerdict::kFits;
  std::vector<SlotGrant> grants{};  // when kFits, in the order of the needs
  std::string reason{};             // otherwise: why, naming the switch and the numbers
};

struct SwitchBook {
  uint32_t capacity = 0;
  std::map<std::string, uint32_t> reserved{};        // tenant -> partition size
  std::map<std::string, uint32_t> partition_used{};  // tenant -> slots held from its partition
  std::map<std::string, uint32_t> held{};            // tenant -> slots held in all
  uint32_t shared_used = 0;
  uint32_t reserved_total() const;
  uint32_t shared_capacity() const { return capacity - reserved_total(); }
  friend bool operator==(const SwitchBook&, const SwitchBook&) = default;
};

class MemoryLedger {
 public:
  // A new switch with no partitions. The id must not be known.
  void add_switch(const SwitchId& id, uint32_t capacity);
  // Forgets the switch; its grants must have been released.
  void remove_switch(const SwitchId& id);
  // Replaces the tenant's partitions on every switch (`reserved` names known switches only).
  // FAILED_PRECONDITION when the partitions of a switch would exceed its capacity, or no longer
  // cover what tenants already hold there.
  Status set_partitions(const std::string& tenant, const std::map<SwitchId, uint32_t>& reserved);

  // Whether `tenant` can be granted `needs` (switch, slots) now; changes nothing.
  GrantPlan plan(const std::string& tenant, const Quota& quota,
                 const std::vector<std::pair<SwitchId, uint32_t>>& needs) const;
  void commit(const std::string& tenant, const std::vector<SlotGrant>& grants);
  void release(const std::string& tenant, const std::vector<SlotGrant>& grants);
  // Re-applies a persisted grant: FAILED_PRECONDITION (naming the switch) if it does not fit the
  // capacity and partitions (quotas are not re-checked: they may have been lowered since).
  Status restore(const std::string& tenant, const std::vector<SlotGrant>& grants);

  const SwitchBook* book(const SwitchId& id) const;
  const std::map<SwitchId, SwitchBook>& books() const { return books_; }
  uint32_t held_on(const std::string& tenant, const SwitchId& id) const;
  uint64_t held_total(const std::string& tenant) const;
  // Slots `tenant` could be granted on `id` now, quotas aside.
  uint32_t free_for(const std::string& tenant, const SwitchId& id) const;

  friend bool operator==(const MemoryLedger&, const MemoryLedger&) = default;

 private:
  std::map<SwitchId, SwitchBook> books_{};
  std::map<std::string, uint64_t> held_total_{};
};

}  // namespace epic::manager
