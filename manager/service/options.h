// inc-manager's service options: the core's Policy plus the timings of the rendezvous, the
// agents' liveness and housekeeping, the store's place and the operator's topology file.
// Threading: plain values.
#pragma once

#include <string>
#include <vector>

#include "manager/core/inc_manager.h"
#include "manager/core/tenant.h"
#include "manager/core/topology.h"

namespace epic::manager::service {

// What the operator declares (--topology / --tenants files): links and rank attachments are
// applied as soon as the switches they name have registered (and again after a switch was
// removed and came back); tenants at start.
struct Declared {
  std::vector<Link> links{};
  std::vector<RankAttachment> ranks{};
  std::vector<Tenant> tenants{};
  LinkSpeeds speeds{};  // the links' and ranks' declared bandwidth_gbps / rtt_us
  // defaults.mode: the mode of a group whose ranks do not ask for one; nullopt: Mode-II.
  std::optional<vocab::GroupMode> default_mode{};
};

inline constexpr const char* kDefaultStateDir = "/var/lib/epic/inc-manager";
inline constexpr uint32_t kDefaultMaxPendingJoinsPerTenant = 8192;
inline constexpr uint32_t kDefaultMaxAgentStreams = 1024;

struct ServiceOptions {
  Policy policy{};
  // "" = no persistence (tests; the CLI's --no-state); else <state_dir>/manager-store.jsonl.
  // The CLI's default is kDefaultStateDir.
  std::string state_dir{};
  Millis rendezvous_timeout{60'000};
  Millis heartbeat_interval{1'000};  // told to the agents
  Millis heartbeat_timeout{10'000};  // an agent stream silent this long is closed
  // A switch whose agent has been away this long is removed from the topology (its groups
  // break). Until then its installed groups keep working: incd serves them on its own.
  // 0: never remove.
  Millis switch_grace{600'000};
  // An install or resume not acknowledged by every agent within this is rolled back.
  Millis install_timeout{15'000};
  Millis tick_interval{200};  // housekeeping period
  // Caps (RESOURCE_EXHAUSTED beyond them, naming the cap): JoinGroup calls of one tenant
  // waiting at once (for their group's other ranks or for INC memory), and agent streams open
  // at once (registered or not).
  uint32_t max_pending_joins_per_tenant = kDefaultMaxPendingJoinsPerTenant;
  uint32_t max_agent_streams = kDefaultMaxAgentStreams;
  Declared declared{};
};

}  // namespace epic::manager::service
