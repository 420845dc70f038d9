// Tree building: from the switch ports the ranks of a group sit behind, the candidate IncTrees
// over the switch graph, best first (docs/manager.md "Tree choice"):
//   - every switch that reaches all leaf switches is a candidate root; the tree is made of
//     shortest paths from each leaf switch up to it (a root with one child and no ranks of its
//     own is skipped: its child alone is the better tree);
//   - on the way up, a switch picks its parent link by (hot — its agents report it loaded,
//     load-aware placement —, groups already using the link — the Edge-Disjoint Trees
//     preference —, joining the tree built so far, neighbour id, port);
//   - candidates are ranked by (depth H, hot links, links shared with active groups, sum of
//     those groups, switches on the tree, root id).
// Structural rules of the engine are checked here (at most 64 children per switch; a switch
// child covers one contiguous range of ranks); capabilities (pmtu, window, MTU) and memory are
// the caller's. Endpoints are left unbound (QPN 0).
// Threading: pure function.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "manager/core/error.h"
#include "manager/core/inc_tree.h"
#include "manager/core/topology.h"

namespace epic::manager {

// Where rank `rank` is plugged in; `endpoint` is its QP (the remote end of its edge).
struct RankPlacement {
  uint32_t rank = 0;
  SwitchPort at{};
  Endpoint endpoint{};
};

// Number of installed groups whose tree uses each switch-to-switch link.
using LinkUsage = std::map<Link, uint32_t>;
// Switch-to-switch links whose measured load passed the manager's threshold (link_load.h).
using HotLinks = std::set<Link>;

struct TreeCandidate {
  IncTree tree{};
  uint32_t shared_links = 0;  // tree links already used by some active group
  uint32_t shared_uses = 0;   // sum over those links of the groups using them
  uint32_t hot_links = 0;     // tree links that are hot
};

// `ranks` must be non-empty, sorted by rank, on switches of `topology`. Errors:
// FAILED_PRECONDITION when no switch reaches every leaf switch, or when no candidate meets the
// engine's structural rules (the best-ranked candidate's reason).
Result<std::vector<TreeCandidate>> build_tree_candidates(const Topology& topology,
                                                         const std::vector<RankPlacement>& ranks,
                                                         const LinkUsage& usage,
                                                         const HotLinks& hot = {});

}  // namespace epic::manager
