#include "manager/core/memory_ledger.h"

#include <algorithm>

namespace epic::manager {
namespace {

uint64_t get(const std::map<std::string, uint64_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

// m[k] += delta (which never takes it below 0); a 0 entry is erased.
void add(std::map<std::string, uint64_t>& m, const std::string& k, uint64_t delta, bool minus) {
  const uint64_t v = minus ? get(m, k) - delta : get(m, k) + delta;
  if (v == 0) {
    m.erase(k);
  } else {
    m[k] = v;
  }
}

std::string q(const std::string& s) { return "'" + s + "'"; }
std::string n(uint64_t v) { return std::to_string(v); }
std::string bytes(uint64_t v) { return std::to_string(v) + " bytes"; }
std::string who(uint32_t group) { return group ? "group " + n(group) : "the group"; }

}  // namespace

uint64_t SwitchBook::reserved_total() const {
  uint64_t sum = 0;
  for (const auto& [t, r] : reserved) sum += r;
  return sum;
}

void MemoryLedger::add_switch(const SwitchId& id, uint64_t capacity_bytes) {
  books_[id] = SwitchBook{.capacity = capacity_bytes};
}

void MemoryLedger::remove_switch(const SwitchId& id) { books_.erase(id); }

Status MemoryLedger::set_partitions(const std::string& tenant,
                                    const std::map<SwitchId, uint64_t>& reserved) {
  for (const auto& [sw, r] : reserved) {
    if (!books_.count(sw)) {
      return make_error(ErrorCode::kNotFound,
                        "tenant " + q(tenant) + " reserves memory on unknown switch " + q(sw));
    }
  }
  for (const auto& [sw, b] : books_) {
    auto it = reserved.find(sw);
    const uint64_t now = it == reserved.end() ? 0 : it->second;
    const uint64_t others = b.reserved_total() - get(b.reserved, tenant);
    if (now > b.capacity || others > b.capacity - now) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "reserved_bytes: partitions on switch " + q(sw) + " would total " +
                            bytes(others + now) + ", more than its capacity " + bytes(b.capacity));
    }
    const uint64_t total = others + now;
    if (get(b.partition_used, tenant) > now) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "reserved_bytes: tenant " + q(tenant) + " holds " +
                            bytes(get(b.partition_used, tenant)) + " of its partition on switch " +
                            q(sw) + "; the partition cannot shrink to " + bytes(now));
    }
    if (b.capacity - total < b.shared_used) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "reserved_bytes: the shared pool of switch " + q(sw) + " would shrink to " +
                            bytes(b.capacity - total) + " but groups hold " + bytes(b.shared_used) +
                            " of it");
    }
  }
  for (auto& [sw, b] : books_) {
    auto it = reserved.find(sw);
    b.reserved.erase(tenant);
    if (it != reserved.end()) add(b.reserved, tenant, it->second, false);
  }
  return {};
}

GrantPlan MemoryLedger::plan(const std::string& tenant, const Quota& quota,
                             const std::vector<std::pair<SwitchId, uint64_t>>& needs,
                             uint32_t group) const {
  GrantPlan p;
  auto refuse = [&](PlanVerdict v, std::string why) {
    p.verdict = v;
    p.reason = std::move(why);
    p.grants.clear();
    return p;
  };
  const std::string g = who(group);
  uint64_t total = 0;
  for (const auto& [sw, need] : needs) {
    total += need;
    const SwitchBook* b = book(sw);
    if (!b) return refuse(PlanVerdict::kNever, "unknown switch " + q(sw));
    const uint64_t most = get(b->reserved, tenant) + b->shared_capacity();
    if (need > most) {
      return refuse(PlanVerdict::kNever,
                    g + " needs " + bytes(need) + " on switch " + q(sw) +
                        ", which can never give tenant " + q(tenant) + " more than " + n(most) +
                        " (its partition " + n(get(b->reserved, tenant)) + " + the shared pool " +
                        n(b->shared_capacity()) + "; capacity " + n(b->capacity) + ")");
    }
    if (quota.max_bytes_per_switch && need > *quota.max_bytes_per_switch) {
      return refuse(PlanVerdict::kNever, g + " needs " + bytes(need) + " on switch " + q(sw) +
                                             "; max_bytes_per_switch of tenant " + q(tenant) +
                                             " is " + n(*quota.max_bytes_per_switch));
    }
  }
  if (quota.max_bytes_total && total > *quota.max_bytes_total) {
    return refuse(PlanVerdict::kNever, g + " needs " + bytes(total) + " on " + n(needs.size()) +
                                           " switch(es); max_bytes_total of tenant " + q(tenant) +
                                           " is " + n(*quota.max_bytes_total));
  }
  for (const auto& [sw, need] : needs) {
    const uint64_t held = held_on(tenant, sw);
    if (quota.max_bytes_per_switch && held + need > *quota.max_bytes_per_switch) {
      return refuse(PlanVerdict::kOverQuota, g + " needs " + bytes(need) + " on switch " + q(sw) +
                                                 "; tenant " + q(tenant) + " holds " + n(held) +
                                                 " of its max_bytes_per_switch " +
                                                 n(*quota.max_bytes_per_switch) + " there");
    }
  }
  if (quota.max_bytes_total && held_total(tenant) + total > *quota.max_bytes_total) {
    return refuse(PlanVerdict::kOverQuota, g + " needs " + bytes(total) + "; tenant " + q(tenant) +
                                               " holds " + n(held_total(tenant)) +
                                               " of its max_bytes_total " +
                                               n(*quota.max_bytes_total));
  }
  for (const auto& [sw, need] : needs) {
    const SwitchBook& b = *book(sw);
    const uint64_t part_free = get(b.reserved, tenant) - get(b.partition_used, tenant);
    const uint64_t shared_free = b.shared_capacity() - b.shared_used;
    if (need > part_free + shared_free) {
      return refuse(PlanVerdict::kNoMemory,
                    "no INC memory: " + g + " needs " + bytes(need) + " on switch " + q(sw) + ", " +
                        n(part_free + shared_free) + " free for tenant " + q(tenant) +
                        " (partition " + n(part_free) + " + shared " + n(shared_free) +
                        "; capacity " + n(b.capacity) + ")");
    }
    p.grants.push_back({sw, need, std::min(need, part_free)});
  }
  return p;
}

void MemoryLedger::commit(const std::string& tenant, const std::vector<MemoryGrant>& grants) {
  for (const auto& g : grants) {
    SwitchBook& b = books_.at(g.switch_id);
    add(b.partition_used, tenant, g.from_partition, false);
    add(b.held, tenant, g.bytes, false);
    b.shared_used += g.bytes - g.from_partition;
    held_total_[tenant] += g.bytes;
  }
}

void MemoryLedger::release(const std::string& tenant, const std::vector<MemoryGrant>& grants) {
  for (const auto& g : grants) {
    held_total_[tenant] -= g.bytes;
    if (held_total_[tenant] == 0) held_total_.erase(tenant);
    auto it = books_.find(g.switch_id);
    if (it == books_.end()) continue;  // the switch is gone, and its memory with it
    SwitchBook& b = it->second;
    add(b.partition_used, tenant, g.from_partition, true);
    add(b.held, tenant, g.bytes, true);
    b.shared_used -= g.bytes - g.from_partition;
  }
}

Status MemoryLedger::restore(const std::string& tenant, const std::vector<MemoryGrant>& grants) {
  for (const auto& g : grants) {
    const SwitchBook* b = book(g.switch_id);
    if (!b) return make_error(ErrorCode::kNotFound, "grant on unknown switch " + q(g.switch_id));
    const uint64_t part_free = get(b->reserved, tenant) - get(b->partition_used, tenant);
    const uint64_t shared_free = b->shared_capacity() - b->shared_used;
    if (g.from_partition > g.bytes || g.from_partition > part_free ||
        g.bytes - g.from_partition > shared_free) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "grant of " + bytes(g.bytes) + " (" + n(g.from_partition) +
                            " from the partition) on switch " + q(g.switch_id) +
                            " does not fit: partition free " + n(part_free) + ", shared free " +
                            n(shared_free) + " (capacity " + n(b->capacity) + ")");
    }
  }
  commit(tenant, grants);
  return {};
}

const SwitchBook* MemoryLedger::book(const SwitchId& id) const {
  auto it = books_.find(id);
  return it == books_.end() ? nullptr : &it->second;
}

uint64_t MemoryLedger::held_on(const std::string& tenant, const SwitchId& id) const {
  const SwitchBook* b = book(id);
  return b ? get(b->held, tenant) : 0;
}

uint64_t MemoryLedger::held_total(const std::string& tenant) const {
  auto it = held_total_.find(tenant);
  return it == held_total_.end() ? 0 : it->second;
}

uint64_t MemoryLedger::free_for(const std::string& tenant, const SwitchId& id) const {
  const SwitchBook* b = book(id);
  if (!b) return 0;
  return get(b->reserved, tenant) - get(b->partition_used, tenant) + b->shared_capacity() -
         b->shared_used;
}

}  // namespace epic::manager
