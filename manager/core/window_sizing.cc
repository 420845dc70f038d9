#include "manager/core/window_sizing.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "manager/core/limits.h"
#include "proto/vocab/memory.h"

namespace epic::manager {

LinkSpeed LinkSpeeds::of(const Link& l) const {
  auto it = links.find(l);
  return it == links.end() ? kDefaultLinkSpeed : it->second;
}

LinkSpeed LinkSpeeds::of_rank(uint32_t ipv4) const {
  auto it = ranks.find(ipv4);
  return it == ranks.end() ? kDefaultLinkSpeed : it->second;
}

uint64_t bdp_bytes(double bandwidth_gbps, double rtt_us) {
  // Gb/s · µs = 10^9 · 10^-6 bit = 1000 bit = 125 bytes.
  return static_cast<uint64_t>(std::ceil(bandwidth_gbps * rtt_us * 125.0));
}

uint32_t window_for_bdp(uint64_t bdp, uint32_t pmtu, uint32_t max_window) {
  uint32_t w = 1;
  while (w < max_window && uint64_t{w} * pmtu < bdp) w *= 2;
  return std::min(w, max_window);
}

PathBdp tree_bdp(const IncTree& tree, const LinkSpeeds& speeds,
                 const std::vector<uint32_t>& rank_ipv4) {
  PathBdp out;
  double slowest = 0;
  double longest = 0;
  double hop = 0;
  auto use = [&](const LinkSpeed& s) {
    slowest = slowest == 0 ? s.bandwidth_gbps : std::min(slowest, s.bandwidth_gbps);
    hop = std::max(hop, s.rtt_us);
  };
  // Nodes come root first, then level by level: a parent's RTT to the root is known before
  // its children's.
  std::map<SwitchId, double> to_root;
  for (const TreeNode& n : tree.nodes) {
    double up = 0;
    if (n.parent) {
      Link l{SwitchPort{n.switch_id, n.parent->port}, n.parent->parent_port};
      if (l.b < l.a) std::swap(l.a, l.b);
      const LinkSpeed s = speeds.of(l);
      use(s);
      auto it = to_root.find(n.parent->parent_port.switch_id);
      up = (it == to_root.end() ? 0 : it->second) + s.rtt_us;
    }
    to_root[n.switch_id] = up;
    for (const TreeChild& c : n.children) {
      if (!c.is_rank) continue;
      const LinkSpeed s =
          speeds.of_rank(c.first_rank < rank_ipv4.size() ? rank_ipv4[c.first_rank] : c.remote.ipv4);
      use(s);
      longest = std::max(longest, up + s.rtt_us);
    }
  }
  out.bandwidth_gbps = slowest;
  out.rtt_us = longest;
  out.bytes = bdp_bytes(slowest, longest);
  out.hop_rtt_us = hop;
  out.hop_bytes = bdp_bytes(slowest, hop);
  return out;
}

uint32_t bdp_window(const IncTree& tree, const Topology& topology, const LinkSpeeds& speeds,
                    const std::vector<uint32_t>& rank_ipv4, uint32_t pmtu, vocab::GroupMode mode,
                    const vocab::GroupArith& arith) {
  uint32_t most = kMaxWindow;
  for (const TreeNode& n : tree.nodes) {
    if (const SwitchSpec* sw = topology.find_switch(n.switch_id)) {
      most = std::min(most, sw->max_window);
      // Never more than the switch could ever hold: a smaller window still aggregates, and a
      // group that does not fit now waits, queues or falls back like any other.
      const auto ranks = static_cast<uint32_t>(rank_ipv4.size());
      while (most > 1 && vocab::group_memory_bytes(most, pmtu, arith, ranks) > sw->capacity_bytes) {
        most /= 2;
      }
    }
  }
  return window_for_bdp(tree_bdp(tree, speeds, rank_ipv4).bytes_for(mode), pmtu, most);
}

double send_window_us(double bandwidth_gbps, uint32_t window, uint32_t pmtu) {
  if (!(bandwidth_gbps > 0)) return 0;
  return static_cast<double>(window) * pmtu * 8 / (bandwidth_gbps * 1000);  // bits / (bit/µs)
}

uint32_t hop_timeout_for(double hop_rtt_us, double bandwidth_gbps, uint32_t window, uint32_t pmtu) {
  const double us =
      std::ceil(hop_rtt_us * kHopTimeoutRtts +
                kHopTimeoutSendWindows * send_window_us(bandwidth_gbps, window, pmtu));
  if (!(us >= vocab::kMinHopTimeoutUs)) return vocab::kMinHopTimeoutUs;  // NaN too
  if (us >= vocab::kMaxHopTimeoutUs) return vocab::kMaxHopTimeoutUs;
  return static_cast<uint32_t>(us);
}

}  // namespace epic::manager
