// Tenant: who owns a group, and the Spatial Mux policy that applies to it (docs/design.md, seed
// "资源分配策略"): quotas (a cap on the bytes of switch memory a tenant may hold on any one switch
// and in all, on its concurrent groups and on the size of one group) and static partitions (bytes
// reserved for the tenant on named switches, which no other tenant may use). An absent limit is no
// limit.
// Threading: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "manager/core/endpoint.h"

namespace epic::manager {

struct Quota {
  std::optional<uint64_t> max_bytes_per_switch{};  // switch memory on any one switch
  std::optional<uint64_t> max_bytes_total{};       // switch memory over all switches
  std::optional<uint32_t> max_groups{};            // live groups (queued ones included)
  std::optional<uint32_t> max_ranks_per_group{};
  friend bool operator==(const Quota&, const Quota&) = default;
};

struct Tenant {
  std::string name{};
  Quota quota{};
  // Spatial Mux: bytes of memory on each switch reserved for this tenant alone. The tenant draws on
  // its partition first, then on the switch's shared pool (capacity minus all partitions).
  std::map<SwitchId, uint64_t> reserved{};
  // The traffic class (DSCP) of its groups that ask for none; nullopt: 0, best effort.
  std::optional<uint8_t> default_dscp{};
  friend bool operator==(const Tenant&, const Tenant&) = default;
};

}  // namespace epic::manager
