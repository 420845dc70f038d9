#include "manager/core/memory_ledger.h"

#include <algorithm>

namespace epic::manager {
namespace {

uint32_t get(const std::map<std::string, uint32_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

void add(std::map<std::string, uint32_t>& m, const std::string& k, int64_t delta) {
  const int64_t v = int64_t{get(m, k)} + delta;
  if (v == 0) {
    m.erase(k);
  } else {
    m[k] = static_cast<uint32_t>(v);
  }
}

std::string q(const std::string& s) { return "'" + s + "'"; }
std::string n(uint64_t v) { return std::to_string(v); }

}  // namespace

uint32_t SwitchBook::reserved_total() const {
  uint32_t sum = 0;
  for (const auto& [t, r] : reserved) sum += r;
  return sum;
}

void MemoryLedger::add_switch(const SwitchId& id, uint32_t capacity) {
  books_[id] = SwitchBook{.capacity = capacity};
}

void MemoryLedger::remove_switch(const SwitchId& id) { books_.erase(id); }

Status MemoryLedger::set_partitions(const std::string& tenant,
                                    const std::map<SwitchId, uint32_t>& reserved) {
  for (const auto& [sw, r] : reserved) {
    if (!books_.count(sw)) {
      return make_error(ErrorCode::kNotFound,
                        "tenant " + q(tenant) + " reserves slots on unknown switch " + q(sw));
    }
  }
  for (const auto& [sw, b] : books_) {
    auto it = reserved.find(sw);
    const uint32_t now = it == reserved.end() ? 0 : it->second;
    const uint64_t total = uint64_t{b.reserved_total()} - get(b.reserved, tenant) + now;
    if (total > b.capacity) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "partitions on switch " + q(sw) + " would total " + n(total) +
                            " slots, more than its capacity " + n(b.capacity));
    }
    if (get(b.partition_used, tenant) > now) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "tenant " + q(tenant) + " holds " + n(get(b.partition_used, tenant)) +
                            " slots of its partition on switch " + q(sw) +
                            "; the partition cannot shrink to " + n(now));
    }
    if (b.capacity - total < b.shared_used) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "the shared pool of switch " + q(sw) + " would shrink to " +
                            n(b.capacity - total) + " slots but groups hold " + n(b.shared_used) +
                            " of it");
    }
  }
  for (auto& [sw, b] : books_) {
    auto it = reserved.find(sw);
    add(b.reserved, tenant,
        int64_t{it == reserved.end() ? 0 : it->second} - get(b.reserved, tenant));
  }
  return {};
}

GrantPlan MemoryLedger::plan(const std::string& tenant, const Quota& quota,
                             const std::vector<std::pair<SwitchId, uint32_t>>& needs) const {
  GrantPlan p;
  auto refuse = [&](PlanVerdict v, std::string why) {
    p.verdict = v;
    p.reason = std::move(why);
    p.grants.clear();
    return p;
  };
  uint64_t total = 0;
  for (const auto& [sw, need] : needs) {
    total += need;
    const SwitchBook* b = book(sw);
    if (!b) return refuse(PlanVerdict::kNever, "unknown switch " + q(sw));
    const uint64_t most = uint64_t{get(b->reserved, tenant)} + b->shared_capacity();
    if (need > most) {
      return refuse(PlanVerdict::kNever, "the group needs " + n(need) + " slots on switch " +
                                             q(sw) + ", which can never give tenant " + q(tenant) +
                                             " more than " + n(most) + " (its partition " +
                                             n(get(b->reserved, tenant)) + " + the shared pool " +
                                             n(b->shared_capacity()) + ")");
    }
    if (quota.max_slots_per_switch && need > *quota.max_slots_per_switch) {
      return refuse(PlanVerdict::kNever, "the group needs " + n(need) + " slots on switch " +
                                             q(sw) + "; the quota of tenant " + q(tenant) + " is " +
                                             n(*quota.max_slots_per_switch) + " slots per switch");
    }
  }
  if (quota.max_slots_total && total > *quota.max_slots_total) {
    return refuse(PlanVerdict::kNever, "the group needs " + n(total) + " slots on " +
                                           n(needs.size()) + " switch(es); the quota of tenant " +
                                           q(tenant) + " is " + n(*quota.max_slots_total) +
                                           " slots in all");
  }
  for (const auto& [sw, need] : needs) {
    const uint32_t held = held_on(tenant, sw);
    if (quota.max_slots_per_switch && held + uint64_t{need} > *quota.max_slots_per_switch) {
      return refuse(PlanVerdict::kOverQuota, "tenant " + q(tenant) + " holds " + n(held) +
                                                 " of its " + n(*quota.max_slots_per_switch) +
                                                 " slots per switch on switch " + q(sw) +
                                                 "; the group needs " + n(need) + " more");
    }
  }
  if (quota.max_slots_total && held_total(tenant) + total > *quota.max_slots_total) {
    return refuse(PlanVerdict::kOverQuota,
                  "tenant " + q(tenant) + " holds " + n(held_total(tenant)) + " of its " +
                      n(*quota.max_slots_total) + " slots in all; the group needs " + n(total) +
                      " more");
  }
  for (const auto& [sw, need] : needs) {
    const SwitchBook& b = *book(sw);
    const uint32_t part_free = get(b.reserved, tenant) - get(b.partition_used, tenant);
    const uint32_t shared_free = b.shared_capacity() - b.shared_used;
    if (uint64_t{need} > uint64_t{part_free} + shared_free) {
      return refuse(PlanVerdict::kNoMemory,
                    "no INC memory: switch " + q(sw) + " has " + n(part_free + shared_free) +
                        " free slots for tenant " + q(tenant) + " (partition " + n(part_free) +
                        " + shared " + n(shared_free) + "); the group needs " + n(need));
    }
    p.grants.push_back({sw, need, std::min(need, part_free)});
  }
  return p;
}

void MemoryLedger::commit(const std::string& tenant, const std::vector<SlotGrant>& grants) {
  for (const auto& g : grants) {
    SwitchBook& b = books_.at(g.switch_id);
    add(b.partition_used, tenant, g.from_partition);
    add(b.held, tenant, g.slots);
    b.shared_used += g.slots - g.from_partition;
    held_total_[tenant] += g.slots;
  }
}

void MemoryLedger::release(const std::string& tenant, const std::vector<SlotGrant>& grants) {
  for (const auto& g : grants) {
    held_total_[tenant] -= g.slots;
    if (held_total_[tenant] == 0) held_total_.erase(tenant);
    auto it = books_.find(g.switch_id);
    if (it == books_.end()) continue;  // the switch is gone, and its memory with it
    SwitchBook& b = it->second;
    add(b.partition_used, tenant, -int64_t{g.from_partition});
    add(b.held, tenant, -int64_t{g.slots});
    b.shared_used -= g.slots - g.from_partition;
  }
}

Status MemoryLedger::restore(const std::string& tenant, const std::vector<SlotGrant>& grants) {
  for (const auto& g : grants) {
    const SwitchBook* b = book(g.switch_id);
    if (!b) return make_error(ErrorCode::kNotFound, "grant on unknown switch " + q(g.switch_id));
    const uint32_t part_free = get(b->reserved, tenant) - get(b->partition_used, tenant);
    const uint32_t shared_free = b->shared_capacity() - b->shared_used;
    if (g.from_partition > g.slots || g.from_partition > part_free ||
        g.slots - g.from_partition > shared_free) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "grant of " + n(g.slots) + " slots (" + n(g.from_partition) +
                            " from the partition) on switch " + q(g.switch_id) +
                            " does not fit: partition free " + n(part_free) + ", shared free " +
                            n(shared_free));
    }
  }
  commit(tenant, grants);
  return {};
}

const SwitchBook* MemoryLedger::book(const SwitchId& id) const {
  auto it = books_.find(id);
  return it == books_.end() ? nullptr : &it->second;
}

uint32_t MemoryLedger::held_on(const std::string& tenant, const SwitchId& id) const {
  const SwitchBook* b = book(id);
  return b ? get(b->held, tenant) : 0;
}

uint64_t MemoryLedger::held_total(const std::string& tenant) const {
  auto it = held_total_.find(tenant);
  return it == held_total_.end() ? 0 : it->second;
}

uint32_t MemoryLedger::free_for(const std::string& tenant, const SwitchId& id) const {
  const SwitchBook* b = book(id);
  if (!b) return 0;
  return get(b->reserved, tenant) - get(b->partition_used, tenant) + b->shared_capacity() -
         b->shared_used;
}

}  // namespace epic::manager
