#include "manager/core/link_load.h"

#include <algorithm>

namespace epic::manager {

std::vector<LinkLoad> link_loads(const Topology& topology, const LinkSpeeds& speeds,
                                 const PortRates& rates, double hot_threshold,
                                 const PortQueues& queues) {
  std::vector<LinkLoad> out;
  for (const Link& l : topology.links()) {
    LinkLoad x;
    x.link = l;
    const auto a = rates.find(l.a);
    const auto b = rates.find(l.b);
    x.measured = a != rates.end() || b != rates.end();
    x.a_to_b_bps = a != rates.end() ? a->second : 0;
    x.b_to_a_bps = b != rates.end() ? b->second : 0;
    const double capacity = speeds.of(l).bandwidth_gbps * 1e9 / 8;  // bytes/s
    x.load = capacity > 0 ? std::max(x.a_to_b_bps, x.b_to_a_bps) / capacity : 0;
    const auto qa = queues.find(l.a);
    const auto qb = queues.find(l.b);
    x.a_queue_bytes = qa != queues.end() ? qa->second : 0;
    x.b_queue_bytes = qb != queues.end() ? qb->second : 0;
    x.hot = (x.measured && x.load >= hot_threshold) ||
            std::max(x.a_queue_bytes, x.b_queue_bytes) >= kHotQueueBytes;
    out.push_back(x);
  }
  return out;
}

HotLinks hot_links(const std::vector<LinkLoad>& loads) {
  HotLinks hot;
  for (const LinkLoad& x : loads) {
    if (x.hot) hot.insert(x.link);
  }
  return hot;
}

}  // namespace epic::manager
