// Admission checks of a join request, in two parts:
//   validate_request — the request alone (INVALID_ARGUMENT), the tenant and its per-group
//     quotas, name and endpoint clashes with live groups, and where each rank sits in the
//     topology (NOT_FOUND for an address behind no known switch port);
//   check_capabilities — one candidate IncTree against the switches it uses: window and pmtu
//     within every switch's limits, pmtu + 90 bytes within the MTU of every port used, and
//     for an exact group (`partial_bytes` > 0, vocab::max_group_partial_bytes) its largest
//     exact partial + 90 bytes within the MTU of both ends of every switch-to-switch link.
// Each returns the first problem as a precise message naming the rank, switch or port.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "manager/core/error.h"
#include "manager/core/group.h"
#include "manager/core/tenant.h"
#include "manager/core/topology.h"
#include "manager/core/tree_builder.h"

namespace epic::manager {

// `live` are the groups the manager holds; the group with id `self` (a queued request being
// re-checked) is not a clash with itself. On success: the placements sorted by rank, with
// each rank's MAC resolved from the topology.
Result<std::vector<RankPlacement>> validate_request(const GroupRequest& request,
                                                    const Topology& topology,
                                                    const std::map<std::string, Tenant>& tenants,
                                                    const std::map<uint32_t, Group>& live,
                                                    uint32_t self = 0);

Status check_capabilities(const IncTree& tree, const Topology& topology, uint32_t window,
                          uint32_t pmtu, uint32_t partial_bytes = 0);

}  // namespace epic::manager
