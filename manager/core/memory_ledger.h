// MemoryLedger: the memory accounting of every switch, in bytes — the manager's view of EPIC's
// indirection layer, where a group's context points at slot memory that can be granted, reclaimed
// and re-granted without touching its routing state. Per switch: the capacity, the Spatial Mux
// partitions reserved per tenant, what each tenant holds (from its partition and from the
// shared pool). A group's grant spans every switch of its IncTree and is planned as a whole
// (plan() changes nothing) and then committed, so a grant is all-or-nothing.
// Cost (Mode-II, proto/vocab/memory.h, the function the engine sizes its slots with): a group
// with window MW and path MTU P owns 2·MW slots of vocab::slot_bytes(P) on every switch of its
// tree — vocab::group_memory_bytes(MW, P) bytes. Capacities, partitions, quotas and grants are
// all bytes.
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
#include "proto/vocab/memory.h"

namespace epic::manager {

using vocab::group_memory_bytes;

// Part of a group's grant on one switch, in bytes.
struct MemoryGrant {
  SwitchId switch_id{};
  uint64_t bytes = 0;
  uint64_t from_partition = 0;  // taken from the tenant's partition; the rest from the shared pool
  friend bool operator==(const MemoryGrant&, const MemoryGrant&) = default;
};

enum class PlanVerdict {
  kFits,
  kNoMemory,   // not enough free memory now
  kOverQuota,  // the tenant's quota is used up now
  kNever,      // more than the capacity, the partitions or the quota could ever give
};

struct GrantPlan {
  PlanVerdict verdict = PlanVerdict::kFits;
  std::vector<MemoryGrant> grants{};  // when kFits, in the order of the needs
  std::string reason{};               // otherwise: why, naming the switch and the numbers
};

// One switch's memory, in bytes.
struct SwitchBook {
  uint64_t capacity = 0;
  std::map<std::string, uint64_t> reserved{};        // tenant -> partition size
  std::map<std::string, uint64_t> partition_used{};  // tenant -> bytes held from its partition
  std::map<std::string, uint64_t> held{};            // tenant -> bytes held in all
  uint64_t shared_used = 0;
  uint64_t reserved_total() const;
  uint64_t shared_capacity() const { return capacity - reserved_total(); }
  friend bool operator==(const SwitchBook&, const SwitchBook&) = default;
};

class MemoryLedger {
 public:
  // A new switch with no partitions. The id must not be known.
  void add_switch(const SwitchId& id, uint64_t capacity_bytes);
  // Forgets the switch; its grants must have been released.
  void remove_switch(const SwitchId& id);
  // Replaces the tenant's partitions on every switch (`reserved` names known switches only).
  // FAILED_PRECONDITION when the partitions of a switch would exceed its capacity, or no longer
  // cover what tenants already hold there.
  Status set_partitions(const std::string& tenant, const std::map<SwitchId, uint64_t>& reserved);

  // Whether `tenant` can be granted `needs` (switch, bytes) now for `group` (named in the
  // reasons); changes nothing.
  GrantPlan plan(const std::string& tenant, const Quota& quota,
                 const std::vector<std::pair<SwitchId, uint64_t>>& needs, uint32_t group = 0) const;
  void commit(const std::string& tenant, const std::vector<MemoryGrant>& grants);
  void release(const std::string& tenant, const std::vector<MemoryGrant>& grants);
  // Re-applies a persisted grant: FAILED_PRECONDITION (naming the switch) if it does not fit the
  // capacity and partitions (quotas are not re-checked: they may have been lowered since).
  Status restore(const std::string& tenant, const std::vector<MemoryGrant>& grants);

  const SwitchBook* book(const SwitchId& id) const;
  const std::map<SwitchId, SwitchBook>& books() const { return books_; }
  uint64_t held_on(const std::string& tenant, const SwitchId& id) const;
  uint64_t held_total(const std::string& tenant) const;
  // Bytes `tenant` could be granted on `id` now, quotas aside.
  uint64_t free_for(const std::string& tenant, const SwitchId& id) const;

  friend bool operator==(const MemoryLedger&, const MemoryLedger&) = default;

 private:
  std::map<SwitchId, SwitchBook> books_{};
  std::map<std::string, uint64_t> held_total_{};
};

}  // namespace epic::manager
