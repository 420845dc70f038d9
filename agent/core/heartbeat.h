// The agent's Heartbeat message (proto/inc/v1/agent.proto): per-group engine counters, and the
// hosts the switch has learned. TelemetrySource is where they come from — in incd the
// workers' published telemetry (daemon/datapath_telemetry.h), in tests a fake.
// Threading: make_heartbeat runs on the agent's thread; a source must be callable there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/inc/v1/agent.pb.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/counters.h"
#include "proto/vocab/straggler.h"

namespace epic::agent {

struct GroupReport {
  uint32_t group_id = 0;
  vocab::GroupStats stats;
  uint64_t last_progress_age_ms = 0;         // since the group last made progress
  std::vector<vocab::ChildTiming> children;  // straggler figures per child edge
};

struct PortReport {
  std::string port;
  uint64_t tx_bytes = 0, tx_frames = 0, tx_dropped = 0;  // since incd started
  uint64_t queue_bytes = 0;                              // waiting in its transmit queues now
};

struct HostReport {
  uint32_t ipv4 = 0;
  vocab::MacAddr mac{};
  std::string port;
};

class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;
  virtual std::vector<GroupReport> groups() const = 0;
  virtual std::vector<HostReport> hosts() const = 0;
  // Each port's transmit counters (load-aware placement); none by default.
  virtual std::vector<PortReport> ports() const { return {}; }
};

inc::v1::AgentMessage make_heartbeat(const TelemetrySource& source);

}  // namespace epic::agent
