#include "manager/core/tree_builder.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <tuple>

#include "manager/core/limits.h"

namespace epic::manager {
namespace {

struct Built {
  TreeCandidate candidate;
  bool relay_root = false;     // the root only relays one child: that child is a better root
  std::optional<Error> error;  // the candidate breaks a structural rule
};

uint32_t uses(const LinkUsage& usage, const Link& l) {
  auto it = usage.find(l);
  return it == usage.end() ? 0 : it->second;
}

std::map<SwitchId, uint32_t> distances_from(const Topology& topo, const SwitchId& root) {
  std::map<SwitchId, uint32_t> dist{{root, 0}};
  std::deque<SwitchId> todo{root};
  while (!todo.empty()) {
    SwitchId s = todo.front();
    todo.pop_front();
    for (const auto& nb : topo.neighbours(s)) {
      if (dist.emplace(nb.peer.switch_id, dist[s] + 1).second) todo.push_back(nb.peer.switch_id);
    }
  }
  return dist;
}

std::string range_text(const std::vector<uint32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) {
      out += '-';  // not `"-" + std::to_string()`: GCC 12 -O3 false -Wrestrict (PR 105329)
      out += std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

Error not_contiguous(const SwitchId& child, const SwitchId& parent,
                     const std::vector<uint32_t>& ranks) {
  return make_error(ErrorCode::kFailedPrecondition,
                    "the ranks below switch '" + child + "' (" + range_text(ranks) +
                        ") are not contiguous; a switch child of '" + parent +
                        "' covers one range of ranks: number the ranks so that those behind one "
                        "switch are consecutive");
}

// The shortest-path tree from the leaf switches up to `root`. `dist` reaches every leaf.
Built build_for_root(const Topology& topo, const std::vector<RankPlacement>& ranks,
                     const std::set<SwitchId>& leaves, const SwitchId& root,
                     const std::map<SwitchId, uint32_t>& dist, const LinkUsage& usage,
                     const HotLinks& hot) {
  struct Up {
    std::string port;
    SwitchPort peer;
  };
  std::map<SwitchId, Up> parent;
  std::set<SwitchId> in_tree{root};
  for (const SwitchId& leaf : leaves) {
    SwitchId cur = leaf;
    while (!in_tree.count(cur)) {
      const uint32_t d = dist.at(cur);
      std::optional<std::tuple<int, uint32_t, int, SwitchId, std::string, std::string>> best;
      Up pick;
      for (const auto& nb : topo.neighbours(cur)) {
        auto it = dist.find(nb.peer.switch_id);
        if (it == dist.end() || it->second + 1 != d) continue;
        const Link l = link_between({cur, nb.port}, nb.peer);
        auto key = std::make_tuple(hot.count(l) ? 1 : 0, uses(usage, l),
                                   in_tree.count(nb.peer.switch_id) ? 0 : 1, nb.peer.switch_id,
                                   nb.port, nb.peer.port);
        if (!best || key < *best) {
          best = key;
          pick = {nb.port, nb.peer};
        }
      }
      parent[cur] = pick;  // a neighbour one hop nearer always exists: dist came from a BFS
      in_tree.insert(cur);
      cur = pick.peer.switch_id;
    }
  }

  Built b;
  IncTree& t = b.candidate.tree;
  t.root = root;
  std::map<SwitchId, std::vector<uint32_t>> below;  // ranks in each switch's subtree
  std::map<SwitchId, std::vector<SwitchId>> kids;
  for (const auto& [child, up] : parent) kids[up.peer.switch_id].push_back(child);
  for (const auto& r : ranks) {
    for (SwitchId s = r.at.switch_id;; s = parent.at(s).peer.switch_id) {
      below[s].push_back(r.rank);
      if (s == root) break;
    }
  }
  if (kids[root].size() == 1 && !leaves.count(root)) {
    b.relay_root = true;
    return b;
  }
  // Level order (a parent is always one hop nearer the root): by (level, switch id).
  std::vector<SwitchId> order(in_tree.begin(), in_tree.end());
  std::sort(order.begin(), order.end(), [&](const SwitchId& x, const SwitchId& y) {
    return std::make_pair(dist.at(x), x) < std::make_pair(dist.at(y), y);
  });
  for (auto& [s, k] : kids) std::sort(k.begin(), k.end());

  uint32_t max_level = 0;
  for (const SwitchId& s : order) {
    TreeNode n;
    n.switch_id = s;
    n.level = dist.at(s);
    max_level = std::max(max_level, n.level);
    for (const auto& r : ranks) {
      if (r.at.switch_id != s) continue;
      TreeChild c;
      c.port = r.at.port;
      c.is_rank = true;
      c.first_rank = r.rank;
      c.rank_count = 1;
      c.remote = r.endpoint;
      n.children.push_back(c);
    }
    for (const SwitchId& k : kids[s]) {
      auto rs = below[k];
      std::sort(rs.begin(), rs.end());
      if (rs.back() - rs.front() + 1 != rs.size() && !b.error) {
        b.error = not_contiguous(k, s, rs);
      }
      const Up& up = parent.at(k);
      TreeChild c;
      c.port = up.peer.port;
      c.is_rank = false;
      c.first_rank = rs.front();
      c.rank_count = static_cast<uint32_t>(rs.size());
      c.child_port = {k, up.port};
      n.children.push_back(c);
    }
    std::stable_sort(
        n.children.begin(), n.children.end(),
        [](const TreeChild& x, const TreeChild& y) { return x.first_rank < y.first_rank; });
    if (n.children.size() > kMaxChildren && !b.error) {
      b.error = make_error(ErrorCode::kFailedPrecondition,
                           "switch '" + s + "' would have " + std::to_string(n.children.size()) +
                               " children; an engine context has at most 64");
    }
    if (auto it = parent.find(s); it != parent.end()) {
      TreeParent p;
      p.port = it->second.port;
      p.parent_port = it->second.peer;
      n.parent = p;
      const Link up_link = link_between({s, p.port}, p.parent_port);
      if (hot.count(up_link)) b.candidate.hot_links += 1;
      const uint32_t u = uses(usage, up_link);
      if (u > 0) {
        b.candidate.shared_links += 1;
        b.candidate.shared_uses += u;
      }
    }
    t.nodes.push_back(std::move(n));
  }
  t.depth = max_level + 1;  // plus the edge down to the ranks
  return b;
}

}  // namespace

Result<std::vector<TreeCandidate>> build_tree_candidates(const Topology& topology,
                                                         const std::vector<RankPlacement>& ranks,
                                                         const LinkUsage& usage,
                                                         const HotLinks& hot) {
  std::set<SwitchId> leaves;
  for (const auto& r : ranks) leaves.insert(r.at.switch_id);
  std::vector<Built> built;
  for (const auto& [root, spec] : topology.switches()) {
    auto dist = distances_from(topology, root);
    if (!std::all_of(leaves.begin(), leaves.end(),
                     [&](const SwitchId& l) { return dist.count(l) > 0; })) {
      continue;
    }
    built.push_back(build_for_root(topology, ranks, leaves, root, dist, usage, hot));
  }
  if (built.empty()) {
    // Name two leaf switches that cannot reach each other.
    const SwitchId& first = *leaves.begin();
    auto dist = distances_from(topology, first);
    const auto far = std::find_if(leaves.begin(), leaves.end(),
                                  [&](const SwitchId& l) { return dist.count(l) == 0; });
    return make_error(ErrorCode::kFailedPrecondition,
                      "no switch reaches every rank: switches '" + first + "' and '" + *far +
                          "' are not connected by switch-to-switch links");
  }
  auto key = [](const Built& b) {
    const auto& c = b.candidate;
    return std::make_tuple(c.tree.depth, c.hot_links, c.shared_links, c.shared_uses,
                           c.tree.nodes.size(), c.tree.root);
  };
  std::stable_sort(built.begin(), built.end(),
                   [&](const Built& x, const Built& y) { return key(x) < key(y); });
  std::vector<TreeCandidate> out;
  const Error* first_error = nullptr;
  for (const auto& b : built) {
    if (b.relay_root) continue;
    if (!b.error) {
      out.push_back(b.candidate);
    } else if (!first_error) {
      first_error = &*b.error;
    }
  }
  if (out.empty()) {
    return first_error ? *first_error
                       : make_error(ErrorCode::kFailedPrecondition, "no IncTree fits the ranks");
  }
  return out;
}

}  // namespace epic::manager
