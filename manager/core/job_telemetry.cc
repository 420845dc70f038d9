#include "manager/core/job_telemetry.h"

#include <algorithm>
#include <span>

namespace epic::manager {

namespace {

// The tree child of `node` whose ranks start at `first_rank` (the agents report children by
// their rank range, which identifies them whatever the order of the context).
const TreeChild* tree_child(const TreeNode& node, uint32_t first_rank) {
  for (const TreeChild& c : node.children) {
    if (c.first_rank == first_rank) return &c;
  }
  return nullptr;
}

std::string ranks_of(const TreeChild& c) {
  if (c.rank_count == 1) return "rank " + std::to_string(c.first_rank);
  return "ranks " + std::to_string(c.first_rank) + "-" +
         std::to_string(c.first_rank + c.rank_count - 1);
}

}  // namespace

double pinned_threshold(size_t fan_in) {
  if (fan_in < 2) return 1.0;
  return (1.0 + 1.0 / static_cast<double>(fan_in)) / 2.0;
}

JobFigures combine_job(const IncTree& tree, const std::map<SwitchId, SwitchGroupFigures>& local,
                       const LinkSpeeds* speeds) {
  JobFigures job;
  for (const TreeNode& n : tree.nodes) {
    const auto it = local.find(n.switch_id);
    if (it == local.end()) {
      job.missing.push_back(n.switch_id);
      continue;
    }
    const auto& rate = it->second.rate_bytes_per_s;
    if (rate && (!job.rate_bytes_per_s || *rate < *job.rate_bytes_per_s)) {
      job.rate_bytes_per_s = rate;
      job.rate_switch = n.switch_id;
    }
    if (n.switch_id == tree.root) job.collectives_completed = it->second.collectives_completed;
  }
  // The walk: at most one step per level, so bounded by the tree's depth.
  const TreeNode* node = tree.node(tree.root);
  std::string link_up;     // the link from `node` to its parent, named, once we came down it
  uint64_t lag_above = 0;  // the p50 lag of `node` at its parent (0: unknown)
  job.verdict = "too few slots timed";
  for (size_t depth = 0; node != nullptr && depth <= tree.nodes.size(); ++depth) {
    const auto it = local.find(node->switch_id);
    const bool below = !link_up.empty();
    if (it == local.end()) {
      // Came down a pinned link to a switch that reports nothing: the link is what we know.
      if (below) {
        job.verdict = "straggler";
        job.slowest = link_up + "; " + node->switch_id + " sends no figures";
      }
      break;
    }
    const std::span<const vocab::ChildTiming> children(it->second.children);
    const vocab::SlowestChild slow = vocab::slowest_child(children);
    PaceHop hop;
    hop.switch_id = node->switch_id;
    hop.share = slow.share;
    hop.slots = slow.slots;
    hop.threshold = pinned_threshold(node->children.size());
    const vocab::ChildTiming* c =
        slow.child >= 0 ? &children[static_cast<size_t>(slow.child)] : nullptr;
    const TreeChild* tc = c ? tree_child(*node, c->first_rank) : nullptr;
    if (c) hop.child = tc && !tc->is_rank ? tc->child_port.switch_id : vocab::child_name(*c);
    hop.pinned = c != nullptr && slow.slots >= kMinTimedSlots && slow.share >= hop.threshold;
    hop.lag_p50_ns = c ? c->lag_p50_ns : 0;
    job.path.push_back(hop);
    // Below a pinned link, a pinned child that explains less than half of the link's lag.
    const bool minor = below && lag_above > 0 && hop.lag_p50_ns * 2 < lag_above;
    if (!hop.pinned || minor) {
      // Nobody below this switch stands out: either the link it came up by sets the pace (we
      // came down to it because it was last at its parent), or, at the root, nobody does.
      if (below) {
        job.verdict = "straggler";
        job.slowest = link_up;
      } else if (slow.slots >= kMinTimedSlots) {
        job.verdict = "noise";
        job.pinned = slow.share;
      }
      break;
    }
    job.pinned = slow.share;
    if (tc != nullptr && !tc->is_rank && speeds != nullptr) {
      const Link l = link_between({node->switch_id, tc->port}, tc->child_port);
      const auto hop_ns = static_cast<uint64_t>(speeds->of(l).rtt_us * 1000);
      if (hop.lag_p50_ns <= hop_ns) {
        job.verdict = "extra hop";
        break;
      }
    }
    if (tc == nullptr || tc->is_rank) {
      job.verdict = "straggler";
      job.slowest = c->is_rank ? vocab::child_name(*c) : hop.child;
      break;
    }
    link_up =
        "link " + tc->child_port.switch_id + " -> " + node->switch_id + " (" + ranks_of(*tc) + ")";
    lag_above = hop.lag_p50_ns;
    node = tree.node(tc->child_port.switch_id);
  }
  return job;
}

}  // namespace epic::manager
