// IncManager's core: the state of the control plane (topology, tenants, groups, slot grants,
// virtual QPNs, the Temporal Mux queue) and every decision on it, as a deterministic state
// machine. It does no I/O and reads no clock: callers pass `now`, send the returned
// SwitchActions to the IncAgents, report their answers (ack / fail) and tell the ranks what the
// returned GroupEvents say. docs/manager.md describes the model and the rules.
//
// Admission of a join (join(), and queued joins in tick()):
//   1. validate the request (group_validate.h);
//   2. candidate IncTrees, best first (tree_builder.h; Edge-Disjoint Trees per Policy);
//   3. the first candidate the switches can carry (window, pmtu, MTU) whose grant of
//      vocab::group_memory_bytes(window, pmtu) bytes on every switch fits now (Spatial Mux
//      partitions and quotas, memory_ledger.h). A request without a window gets the window of
//      the candidate's path bandwidth-delay product (window_sizing.h);
//   4. else, with Temporal Mux on, the first candidate that fits once the grants of groups idle
//      for Policy::reclaim_idle_after are reclaimed (oldest idle first, as few as needed);
//   5. else queue the request (FIFO, with its deadline) or refuse it: RESOURCE_EXHAUSTED
//      "no INC memory: ..." when it may fit later, FAILED_PRECONDITION when it never can.
// All-or-nothing: a refused or failed join leaves no grant, QPN or installed context behind.
//
// Threading: not thread-safe; the service serialises calls (one strand).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manager/core/actions.h"
#include "manager/core/error.h"
#include "manager/core/group.h"
#include "manager/core/link_load.h"
#include "manager/core/memory_ledger.h"
#include "manager/core/qpn_pool.h"
#include "manager/core/random_bits.h"
#include "manager/core/tenant.h"
#include "manager/core/topology.h"
#include "manager/core/tree_builder.h"
#include "manager/core/window_sizing.h"

namespace epic::manager {

// What a group's tree costs in one mode, as the manager sizes it (window_sizing.h): the window
// and the switch memory it takes on each switch of the tree (group_memory_bytes).
struct ModeCost {
  vocab::GroupMode mode = vocab::GroupMode::kMode2;
  uint32_t window = 0;
  uint64_t bytes_per_switch = 0;
  friend bool operator==(const ModeCost&, const ModeCost&) = default;
};

enum class EdgeDisjoint : uint8_t {
  kPrefer,   // rank trees that share fewer links with active groups first
  kRequire,  // never share a link with an active group (RESOURCE_EXHAUSTED instead)
  kIgnore,   // shortest, smallest tree regardless of other groups
};

struct Policy {
  EdgeDisjoint edge_disjoint = EdgeDisjoint::kPrefer;
  // Temporal Mux: the grant of an installed group with no activity for this long may be
  // reclaimed for a join that does not fit otherwise. nullopt: grants are never reclaimed.
  std::optional<Millis> reclaim_idle_after{};
  // A request's queue_timeout is capped at this.
  Millis max_queue_wait{60'000};
  // Declared link speeds, for the window of a group that does not ask for one.
  LinkSpeeds link_speeds{};
  // Load-aware placement: a switch-to-switch link whose measured load (link_load.h) reaches
  // this fraction of its declared speed is hot, and new trees avoid it where they can.
  double hot_link_load = 0.5;
  // The mode of a group whose ranks do not ask for one (the fabric file's defaults.mode).
  vocab::GroupMode default_mode = vocab::GroupMode::kMode2;
  // Switch QPNs and initial PSNs drawn from this (random_bits.h); unset: deterministic.
  RandomBits random{};
};

struct JoinResult {
  uint32_t group_id = 0;
  GroupState state = GroupState::kInstalling;  // kInstalling or kQueued
  Effects effects{};
};

// The context of group `g` on its tree node `n`, with the switch memory granted there: what an
// install sends, and what a re-synchronisation compares an agent's installed context with.
SwitchContext switch_context(const Group& g, const TreeNode& n, uint64_t memory_bytes);

class IncManager {
 public:
  explicit IncManager(Policy policy = {});

  // --- Topology: agents registering their switch, the operator describing the cabling. ---
  Status add_switch(SwitchSpec spec);
  Status add_link(Link link);
  Status attach_rank(RankAttachment rank);
  // A switch failed or left: every group whose tree uses it breaks (grants freed everywhere,
  // contexts removed from the surviving switches), then the queue is retried.
  Result<Effects> remove_switch(const SwitchId& id, Millis now);

  // --- Tenants (Spatial Mux). Replaces the tenant if it exists. ---
  Status set_tenant(Tenant tenant);

  // --- Groups. ---
  Result<JoinResult> join(GroupRequest request, Millis now);
  // The agent on `sw` applied the group's pending action. When it was the last one: kReady.
  Result<Effects> ack(uint32_t group_id, const SwitchId& sw, Millis now);
  // The agent on `sw` could not apply it: the operation is rolled back (an install: every grant
  // and QPN freed, contexts removed from the other switches; a resume: slots detached again).
  Result<Effects> fail(uint32_t group_id, const SwitchId& sw, const std::string& reason,
                       Millis now);
  // Ends the group in any state, freeing all it holds; then retries the queue.
  Result<Effects> teardown(uint32_t group_id, Millis now);
  // The group made progress (from the switches' counters or the ranks): not idle.
  Status report_activity(uint32_t group_id, Millis now);
  // A reclaimed group wants its slots back on the same tree: kInstalling with kAttachSlots
  // actions, or RESOURCE_EXHAUSTED (it stays reclaimed; the ranks keep falling back).
  Result<Effects> resume(uint32_t group_id, Millis now);
  // Housekeeping: fails queued joins whose deadline passed, admits those that fit now.
  Effects tick(Millis now);
  // The ranks' answers of an installed group, by rank.
  Result<std::vector<RankAnswer>> answers(uint32_t group_id) const;
  // Mode-II vs Mode-III: what the manager's sizing gives `g`'s tree in each mode, Mode-II first
  // (the window sized from the declared link speeds, even when the group asked for its own).
  // Empty while `g` has no tree.
  std::vector<ModeCost> mode_costs(const Group& g) const;

  // --- Read side (incctl, the store, tests). ---
  const Policy& policy() const { return policy_; }
  const Topology& topology() const { return topology_; }
  const std::map<std::string, Tenant>& tenants() const { return tenants_; }
  const std::map<uint32_t, Group>& groups() const { return groups_; }
  const MemoryLedger& ledger() const { return ledger_; }
  const QpnPool& qpns() const { return qpns_; }
  const std::deque<uint32_t>& queue() const { return queue_; }
  const Group* find_group(uint32_t id) const;
  const Group* find_group(const std::string& tenant, const std::string& name) const;
  uint32_t next_group_id() const { return next_group_id_; }
  // Links used by installing and installed groups (Edge-Disjoint Trees).
  LinkUsage link_usage() const;

  // --- Load (link_load.h): what the agents measure, for load-aware placement. ---
  // Switch `sw`'s ports' transmit rates (bytes/s), replacing what it reported before.
  void report_port_rates(const SwitchId& sw, const std::map<std::string, double>& rates);
  // Switch `sw`'s ports' transmit queues (bytes waiting), replacing what it reported before.
  void report_port_queues(const SwitchId& sw, const std::map<std::string, uint64_t>& queues);
  // Every switch-to-switch link's load from the rates reported so far.
  std::vector<LinkLoad> link_loads() const;

  // --- Foreign groups (issue 16: no wipe after a lost state; inc_manager_foreign.cc). ---
  // A group an agent serves that this manager has no record of and cannot know to be gone
  // (it started without its state, or never issued the id): kept on the switch, never
  // re-issued. Its id is skipped by later joins and its QPNs on `sw` are held, so nothing new
  // collides with it; its switch memory is not in the ledger (the agent refuses what does not
  // fit). An operator's destroy removes it. The ids are persisted (store.h); `sw` empty: the id
  // only (a restore).
  void keep_foreign(uint32_t group_id, const SwitchId& sw, const std::vector<uint32_t>& qpns);
  bool is_foreign(uint32_t group_id) const { return foreign_.count(group_id) > 0; }
  // Per foreign group: the switches that serve it, with the QPNs held there.
  const std::map<uint32_t, std::map<SwitchId, std::vector<uint32_t>>>& foreign() const {
    return foreign_;
  }
  // Forgets a foreign group: its QPNs are freed and every switch that served it gets a
  // REMOVE_CONTEXT. NOT_FOUND when it is not foreign.
  Result<Effects> forget_foreign(uint32_t group_id);

  // --- Restore (store.h). Re-inserts persisted state through the same checks. ---
  // An installing, installed, reclaimed or broken group, with its tree, QPNs and grants.
  Status restore_group(Group group);
  Status restore_next_group_id(uint32_t next);
  // Operations in flight when the state was saved are rolled back (the agents' answers were
  // lost with the old process): installs are undone, resumes detached again.
  Effects finish_restore(Millis now);

 private:
  // The outcome of evaluating a join against the current state; apply() carries it out.
  struct Admission {
    PlanVerdict verdict = PlanVerdict::kNever;  // kFits: admit (after reclaiming `victims`)
    Error error{};                              // otherwise: why not
    IncTree tree{};                             // kFits: endpoints unbound
    uint32_t window = 0;                        // kFits: the group's window on that tree
    uint32_t pmtu = 0;                          // kFits: the group's path MTU on that tree
    uint32_t hop_timeout_us = 0;                // kFits: Mode-III's hop timeout on that tree
    std::vector<MemoryGrant> grants{};
    std::vector<uint32_t> victims{};  // Temporal Mux: idle groups whose slots are reclaimed first
  };

  Group* group(uint32_t id);
  Result<Group*> live_group(uint32_t id);
  Admission evaluate(const Group& g, Millis now) const;
  void apply(Group& g, Admission& a, Millis now, Effects& fx);
  std::vector<uint32_t> reclaim_victims(const Group& g,
                                        const std::vector<std::pair<SwitchId, uint64_t>>& needs,
                                        Millis now) const;
  void reclaim(Group& victim, Millis now, Effects& fx);
  void bind_endpoints(Group& g);
  void release_qpns(const Group& g);
  void release_grants(Group& g);
  void remove_contexts(const Group& g, const std::set<SwitchId>& on, Effects& fx) const;
  void rollback(Group& g, const SwitchId* failed, const std::optional<Error>& why, Effects& fx);
  void drain_queue(Millis now, Effects& fx);
  bool queue_blocks_newcomers() const;
  void erase_group(uint32_t id);

  Policy policy_;
  Topology topology_;
  PortRates port_rates_;    // not persisted: measured anew after a restart
  PortQueues port_queues_;  // likewise
  std::map<std::string, Tenant> tenants_{};
  std::map<uint32_t, Group> groups_{};
  MemoryLedger ledger_;
  QpnPool qpns_;
  std::deque<uint32_t> queue_;  // kQueued groups, FIFO
  uint32_t next_group_id_ = 1;
  std::map<uint32_t, std::map<SwitchId, std::vector<uint32_t>>> foreign_{};  // ids persisted
};

}  // namespace epic::manager
