// Link load: how busy each switch-to-switch link is, from what the agents measure — each
// switch port's transmit rate, from the byte counters of successive heartbeats — so that the
// tree builder can keep new IncTrees off hot uplinks (load-aware placement, docs/manager.md
// "Tree choice"). A link's load is the larger of its two directions' rates over its declared
// speed (window_sizing.h LinkSpeeds); it is hot from a threshold on (Policy::hot_link_load), or
// while either end's transmit queue holds kHotQueueBytes (incd's traffic classes keep a queue
// behind a port's rate: a standing queue is a busy link whatever its declared speed says).
// Pure: the caller measures the rates. Threading: plain values.
#pragma once

#include <map>
#include <vector>

#include "manager/core/topology.h"
#include "manager/core/tree_builder.h"
#include "manager/core/window_sizing.h"

namespace epic::manager {

// Transmit rate, bytes per second, of each switch port that reported one.
using PortRates = std::map<SwitchPort, double>;
// Bytes waiting in each switch port's transmit queue, as last reported.
using PortQueues = std::map<SwitchPort, uint64_t>;
inline constexpr uint64_t kHotQueueBytes = 64 * 1024;

struct LinkLoad {
  Link link{};
  bool measured = false;  // at least one end reported a rate
  double a_to_b_bps = 0;  // bytes/s sent by end a (0 when not reported)
  double b_to_a_bps = 0;  // bytes/s sent by end b
  double load = 0;        // max of both over the link's speed, as a fraction (1 = full)
  uint64_t a_queue_bytes = 0, b_queue_bytes = 0;  // at end a (toward b), at end b
  bool hot = false;  // load >= the threshold, or a queue >= kHotQueueBytes
};

// Every declared switch-to-switch link, in the topology's order.
std::vector<LinkLoad> link_loads(const Topology& topology, const LinkSpeeds& speeds,
                                 const PortRates& rates, double hot_threshold,
                                 const PortQueues& queues = {});
HotLinks hot_links(const std::vector<LinkLoad>& loads);

}  // namespace epic::manager
