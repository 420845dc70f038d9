// The agent's TelemetrySource in incd: per-group counters and per-port transmit counters from
// the workers' published telemetry (the sequence-locked copies, never live counters). Learned
// hosts: none — the L2 tables are per worker and readable only by their worker, and they map MACs
// to ports without IPv4 addresses (incd answers ARP for its INC addresses but learns no IP); the
// manager learns rank addresses from JoinGroup and its topology instead.
// Threading: incd's control thread.
#pragma once

#include "agent/core/heartbeat.h"
#include "datapath/dpdk/datapath.h"

namespace epic::incd {

class DatapathTelemetry : public agent::TelemetrySource {
 public:
  explicit DatapathTelemetry(const dpdk::Datapath& dp) : dp_(dp) {}
  std::vector<agent::GroupReport> groups() const override;
  std::vector<agent::HostReport> hosts() const override { return {}; }
  // Each configured port's transmit counters, summed over the workers.
  std::vector<agent::PortReport> ports() const override;

 private:
  const dpdk::Datapath& dp_;
};

}  // namespace epic::incd
