// The Controller: inc-manager's state and everything that changes it — the core (IncManager),
// the rank rendezvous, the agents' sessions, the ranks' waiting JoinGroup calls, the store.
// It turns requests into core calls, sends the resulting SwitchActions to the agents in order,
// feeds their Ack / Fail back, answers ranks on the groups' events, and runs housekeeping
// (rendezvous expiry, Temporal Mux queue, install timeouts, agent liveness, persistence).
//
// Agents: a switch whose stream drops stays in the topology and its groups stay installed
// (incd keeps serving them); only after ServiceOptions::switch_grace without its agent is it
// removed. On (re)registration the agent gets Registered, then Resync with the groups it must
// keep, then the actions that bring its contexts in line with the manager's.
//
// Threading: not thread-safe. Every call runs on the one io_context thread (the service's
// strand); gRPC handlers post onto it. `now` is wall-clock milliseconds since the epoch.
#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "manager/core/inc_manager.h"
#include "manager/core/rendezvous.h"
#include "manager/service/agent_channel.h"
#include "manager/service/options.h"
#include "manager/service/state_lock.h"
#include "proto/inc/v1/agent.pb.h"
#include "proto/inc/v1/manager.pb.h"

namespace epic::manager::service {

namespace pb = ::epic::inc::v1;

using JoinReply = std::function<void(const grpc::Status&, const pb::JoinGroupResponse&)>;
using ChannelPtr = std::shared_ptr<AgentChannel>;

// Milliseconds from `then` to `now` (0 when `then` is unset or ahead), for the views' ages.
uint64_t age(Millis now, Millis then);

class Controller {
 public:
  Controller(ServiceOptions options, std::shared_ptr<spdlog::logger> log);

  // Loads the store (if any), applies the declared tenants (creating "default" when no tenant
  // exists). DATA_LOSS / INTERNAL when the store cannot be used: the manager must not start.
  Status start(Millis now);
  // Answers every waiting rank UNAVAILABLE, ends every agent stream, saves the store. Calls
  // after this are refused (UNAVAILABLE).
  void shutdown();

  // --- Ranks. `reply` is called exactly once, now or when the group is ready or fails. ---
  void join(const pb::JoinGroupRequest& request, JoinReply reply, Millis now);
  grpc::Status leave(const pb::LeaveGroupRequest& request, pb::LeaveGroupResponse& out, Millis now);

  // --- Operators. ---
  grpc::Status destroy(const pb::DestroyGroupRequest& request, pb::DestroyGroupResponse& out,
                       Millis now);
  grpc::Status set_tenant(const pb::SetTenantRequest& request, Millis now);
  grpc::Status add_link(const pb::AddLinkRequest& request, Millis now);
  grpc::Status attach_rank(const pb::AttachRankRequest& request, Millis now);
  void list_switches(pb::ListSwitchesResponse& out, Millis now) const;
  void list_groups(const pb::ListGroupsRequest& request, pb::ListGroupsResponse& out) const;
  void list_tenants(pb::ListTenantsResponse& out) const;
  void memory(pb::GetMemoryResponse& out) const;
  void topology(pb::GetTopologyResponse& out, Millis now) const;
  // Every switch's counters and, per installed group (or only `request.group_id`), the
  // job-wide straggler figure (manager/core/job_telemetry.h). NOT_FOUND for an unknown group.
  grpc::Status telemetry(const pb::GetTelemetryRequest& request, pb::GetTelemetryResponse& out,
                         Millis now) const;

  // --- Agents. ---
  void agent_opened(const ChannelPtr& channel);
  void agent_message(const ChannelPtr& channel, const pb::AgentMessage& message, Millis now);
  void agent_closed(const ChannelPtr& channel, Millis now);

  // Housekeeping, every ServiceOptions::tick_interval.
  void tick(Millis now);

  // The tenant of a group the manager knows; nullopt for an unknown or a foreign group.
  std::optional<std::string> tenant_of_group(uint32_t group_id) const;

  const IncManager& core() const { return core_; }
  std::string store_path() const;

 private:
  struct Waiter {
    uint32_t rank = 0;
    JoinReply reply;
    std::optional<pb::RankEndpoint> host_endpoint{};  // set: the rank accepts a host fallback
    uint32_t pmtu = 0;                                // what the rank asked for
  };
  struct Session {
    ChannelPtr channel{};  // null while its agent is away
    Millis last_seen{0};
    Millis away_since{0};  // when channel became null
    std::string peer{}, version{};
    pb::Heartbeat last_heartbeat{};
    std::map<uint32_t, uint64_t> progress{};  // per group: the counters' sum at the last beat
    std::map<uint32_t, uint64_t> rx_frames{};
    // A byte counter at the last beat, and its rate (bytes/s) since the beat before.
    struct RateSample {
      uint64_t bytes = 0;
      Millis at{0};
      std::optional<double> rate{};
      void update(uint64_t now_bytes, Millis now);
    };
    std::map<uint32_t, RateSample> goodput{};     // per group: result_bytes
    std::map<std::string, RateSample> port_tx{};  // per port: tx_bytes (load-aware placement)
  };
  // The job-wide figure of installed group `g` from the sessions' last heartbeats.
  pb::JobTelemetry job_telemetry(const Group& g) const;
  struct SentAction {
    SwitchId switch_id{};
    uint32_t group_id = 0;
    ActionKind kind = ActionKind::kInstallContext;
    bool repair = false;  // a re-synchronisation, not an operation the core waits for
  };

  // Sends actions, answers ranks on events, persists.
  void dispatch(Effects effects, Millis now);
  // An install whose context fails the context checks (manager/core/context_check.h) is not
  // sent: it is answered as refused, by dispatch, once every other action is out.
  void send_action(const SwitchAction& action, bool repair);
  void on_event(const GroupEvent& event, Millis now);
  void answer_group(uint32_t group_id);
  void fail_waiters(std::vector<Waiter>& waiters, const grpc::Status& status);
  void rejoin(const Group& g, const RankJoin& join, Waiter waiter, Millis now);
  // A group refused for lack of INC memory: when every rank set host_endpoint, answers them
  // all OK with host_fallback (controller_fallback.cc) and returns true.
  bool answer_host_fallback(std::vector<Waiter>& waiters, const Error& refusal,
                            const std::string& what);

  void on_register(const ChannelPtr& channel, const pb::Register& reg, Millis now);
  void resync(const SwitchId& id, const pb::Register& reg);
  void keep_foreign_groups(const SwitchId& id, const pb::Register& reg, pb::Resync& keep);
  void on_heartbeat(const SwitchId& id, const pb::Heartbeat& beat, Millis now);
  void on_answer(const SwitchId& id, uint64_t action_id, const std::string* failure, Millis now);
  void apply_declared();
  void drop_actions_of(const SwitchId& id);
  std::optional<SwitchId> switch_of(const ChannelPtr& channel) const;

  void persist();
  Status check_running() const;
  // The JoinGroup calls of `tenant` that wait now (rendezvous and memory queue).
  size_t pending_joins(const std::string& tenant) const;
  size_t open_agent_streams() const;

  ServiceOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  IncManager core_;
  Rendezvous rendezvous_;
  bool stopping_ = false;
  bool dirty_ = false;
  bool store_loaded_ = false;  // start() recovered a store: we know which ids we issued

  std::set<ChannelPtr> unregistered_{};  // streams that have not sent Register yet
  std::map<SwitchId, Session> sessions_{};
  std::map<uint64_t, SentAction> sent_{};
  uint64_t next_action_id_ = 1;
  // Installs refused before sending: (switch, action id, why), answered by dispatch.
  std::vector<std::tuple<SwitchId, uint64_t, std::string>> refused_{};

  struct Forming {  // a rendezvous in progress: the calls of the ranks that joined
    uint32_t size = 0;
    std::vector<Waiter> waiters{};
  };
  std::map<std::pair<std::string, std::string>, Forming> forming_{};
  std::map<uint32_t, std::vector<Waiter>> waiting_{};  // by group id
  std::map<uint32_t, Millis> installing_since_{};
  std::map<uint32_t, std::set<uint32_t>> left_{};  // ranks that called LeaveGroup
  std::set<Link> declared_links_{};
  std::vector<RankAttachment> declared_ranks_{};
  std::unique_ptr<StateDirLock> state_lock_{};  // held while running with a --state-dir
  // Declared partitions on switches not registered yet (tenant -> switch -> slots), applied
  // when the switch registers (and again after it was removed and comes back).
  std::map<std::string, std::map<SwitchId, uint64_t>> declared_reservations_{};
};

grpc::Status to_grpc(const Error& e);
grpc::Status to_grpc(const Status& s);

}  // namespace epic::manager::service
