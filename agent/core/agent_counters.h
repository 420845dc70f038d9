// What the agent counts for incd's metrics endpoint (incd_agent_*): written by the agent's
// thread, read by the metrics scrape thread, hence atomics (relaxed: independent figures).
#pragma once

#include <atomic>
#include <cstdint>

namespace epic::agent {

struct AgentCounters {
  std::atomic<uint32_t> connected{0};  // 1 while registered with inc-manager
  std::atomic<uint64_t> actions_applied{0};
  std::atomic<uint64_t> actions_failed{0};
  std::atomic<uint64_t> reconnects{0};     // connection attempts after the first
  std::atomic<uint64_t> registrations{0};  // Registered answers received
  std::atomic<uint64_t> heartbeats_sent{0};
};

}  // namespace epic::agent
