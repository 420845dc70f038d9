// The Prometheus /metrics endpoint of incd (prometheus-cpp's pull exposer,
// docs/dependencies.md): on every scrape it reads the workers' published
// telemetry (a sequence-locked copy, never the live counters) and renders
//   incd_port_*      per port (frames, bytes, TX drops, injected faults)
//   incd_worker_*    per worker (loops, hand-offs, mbuf shortages, snapshot version)
//   incd_switch_*    per worker and disposition / drop reason of the switch pipeline
//   incd_engine_*    per worker and disposition / drop reason / event of the Mode-II engine
//   incd_group_*     per group (its mode, progress counters, busy slots, missing children,
//                    stalled)
//   incd_agent_*     the IncAgent's link to inc-manager (connected, actions, reconnects), when
//                    incd has a manager
// Scrapes run on the exposer's thread; nothing here touches the packet path.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/core/agent_counters.h"
#include "datapath/dpdk/datapath.h"

namespace prometheus {
class Exposer;
}

namespace epic::incd {

class DatapathCollector : public prometheus::Collectable {
 public:
  DatapathCollector(const dpdk::Datapath& dp, uint64_t stall_after_ns);
  std::vector<prometheus::MetricFamily> Collect() const override;
  // The control side calls this when the installed groups change (names ranks in labels).
  void set_groups(std::vector<engine::GroupConfig> groups);
  // The names of the ports' traffic classes, by class index (labels of incd_port_class_*).
  void set_class_names(std::vector<std::string> names);
  // The agent's counters (incd_agent_*); nullptr (the default) leaves them out. They must
  // outlive the scrapes: clear before the agent goes.
  void set_agent(const agent::AgentCounters* counters) { agent_.store(counters); }
  // Ends scraping: waits for a scrape in progress, and every later one renders nothing. After
  // it the datapath may stop while the exposer itself shuts down (on another thread).
  void close();

 private:
  const dpdk::Datapath& dp_;
  uint64_t stall_after_ns_;
  mutable std::mutex mu_;  // guards groups_ (control path only, never the packet path)
  std::vector<engine::GroupConfig> groups_;
  std::vector<std::string> class_names_;  // guarded by mu_
  std::atomic<const agent::AgentCounters*> agent_{nullptr};
  mutable std::mutex scrape_mu_;  // held by a scrape and by close()
  bool closed_ = false;           // guarded by scrape_mu_
};

class MetricsServer {
 public:
  // Listens on `listen` ("127.0.0.1:9464"); throws std::runtime_error with the reason.
  MetricsServer(const std::string& listen, std::shared_ptr<DatapathCollector> collector);
  ~MetricsServer();  // stop()
  // Stops the HTTP server within milliseconds: its listener (civetweb) looks at its stop flag
  // only between 2-second polls, so a thread stops it while this one wakes the poll with
  // connections to the listening address until it is done.
  void stop();

 private:
  std::string listen_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<DatapathCollector> collector_;
};

}  // namespace epic::incd
