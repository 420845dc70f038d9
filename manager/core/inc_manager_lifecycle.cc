// IncManager: the group lifecycle after admission — agents' answers, rollback, teardown, switch
// loss — and the restore path used by the store.
#include <algorithm>

#include "manager/core/group_arith.h"
#include "manager/core/group_validate.h"
#include "manager/core/inc_manager.h"

namespace epic::manager {

namespace {
std::string q(const std::string& s) { return "'" + s + "'"; }
std::string gid(uint32_t id) { return "group " + std::to_string(id); }
}  // namespace

void IncManager::release_qpns(const Group& g) {
  for (const TreeNode& n : g.tree.nodes) {
    for (const TreeChild& c : n.children) qpns_.release(n.switch_id, c.local.qpn);
    if (n.parent) qpns_.release(n.switch_id, n.parent->local.qpn);
  }
}

void IncManager::release_grants(Group& g) {
  ledger_.release(g.request.tenant, g.grants);
  g.grants.clear();
}

void IncManager::remove_contexts(const Group& g, const std::set<SwitchId>& on, Effects& fx) const {
  for (const TreeNode& n : g.tree.nodes) {
    if (!on.count(n.switch_id)) continue;
    fx.actions.push_back(SwitchAction{
        .kind = ActionKind::kRemoveContext, .switch_id = n.switch_id, .group_id = g.id});
  }
}

void IncManager::erase_group(uint32_t id) {
  queue_.erase(std::remove(queue_.begin(), queue_.end(), id), queue_.end());
  groups_.erase(id);
}

void IncManager::rollback(Group& g, const SwitchId* failed, const std::optional<Error>& why,
                          Effects& fx) {
  std::set<SwitchId> touched = g.acked;
  touched.insert(g.pending.begin(), g.pending.end());
  if (failed) touched.erase(*failed);  // it said it did not apply the action
  if (g.pending_op == PendingOp::kAttach) {
    for (const TreeNode& n : g.tree.nodes) {
      if (!touched.count(n.switch_id)) continue;
      fx.actions.push_back(SwitchAction{
          .kind = ActionKind::kDetachSlots, .switch_id = n.switch_id, .group_id = g.id});
    }
    release_grants(g);
    g.state = GroupState::kReclaimed;
    g.pending_op = PendingOp::kNone;
    g.pending.clear();
    g.acked.clear();
    fx.events.push_back({g.id, GroupEventKind::kReclaimed, why});
    return;
  }
  remove_contexts(g, touched, fx);
  release_grants(g);
  release_qpns(g);
  fx.events.push_back({g.id, GroupEventKind::kFailed, why});
  erase_group(g.id);
}

Result<Effects> IncManager::ack(uint32_t group_id, const SwitchId& sw, Millis now) {
  auto found = live_group(group_id);
  if (!found.ok()) return found.error();
  Group& g = *found.value();
  if (g.state != GroupState::kInstalling || !g.pending.count(sw)) {
    return make_error(ErrorCode::kFailedPrecondition,
                      "switch " + q(sw) + " has no action pending for " + gid(group_id) + " (" +
                          std::string(group_state_name(g.state)) + ")");
  }
  g.pending.erase(sw);
  g.acked.insert(sw);
  Effects fx;
  if (g.pending.empty()) {
    g.state = GroupState::kInstalled;
    g.pending_op = PendingOp::kNone;
    g.acked.clear();
    g.last_activity = now;
    fx.events.push_back({g.id, GroupEventKind::kReady, std::nullopt});
  }
  return fx;
}

Result<Effects> IncManager::fail(uint32_t group_id, const SwitchId& sw, const std::string& reason,
                                 Millis now) {
  auto found = live_group(group_id);
  if (!found.ok()) return found.error();
  Group& g = *found.value();
  if (g.state != GroupState::kInstalling || !g.pending.count(sw)) {
    return make_error(ErrorCode::kFailedPrecondition,
                      "switch " + q(sw) + " has no action pending for " + gid(group_id) + " (" +
                          std::string(group_state_name(g.state)) + ")");
  }
  const bool attach = g.pending_op == PendingOp::kAttach;
  Error why = make_error(ErrorCode::kUnavailable,
                         attach ? "switch " + q(sw) + " could not re-attach the slots of " +
                                      gid(group_id) + ": " + reason + "; the group stays reclaimed"
                                : "switch " + q(sw) + " could not install " + gid(group_id) + ": " +
                                      reason + "; nothing of the group is left installed");
  Effects fx;
  rollback(g, &sw, why, fx);
  drain_queue(now, fx);
  return fx;
}

Result<Effects> IncManager::teardown(uint32_t group_id, Millis now) {
  auto found = live_group(group_id);
  if (!found.ok()) return found.error();
  Group& g = *found.value();
  Effects fx;
  if (g.state != GroupState::kQueued && g.state != GroupState::kBroken) {
    std::set<SwitchId> all;
    for (const TreeNode& n : g.tree.nodes) all.insert(n.switch_id);
    remove_contexts(g, all, fx);
    release_grants(g);
    release_qpns(g);
  }
  fx.events.push_back({g.id, GroupEventKind::kTornDown, std::nullopt});
  erase_group(group_id);
  drain_queue(now, fx);
  return fx;
}

Status IncManager::report_activity(uint32_t group_id, Millis now) {
  auto found = live_group(group_id);
  if (!found.ok()) return found.error();
  Group& g = *found.value();
  if (g.state != GroupState::kInstalled && g.state != GroupState::kInstalling) {
    return make_error(ErrorCode::kFailedPrecondition, gid(group_id) + " is " +
                                                          std::string(group_state_name(g.state)) +
                                                          ": only an installed group is active");
  }
  g.last_activity = std::max(g.last_activity, now);
  return {};
}

Result<Effects> IncManager::remove_switch(const SwitchId& id, Millis now) {
  if (!topology_.find_switch(id)) {
    return make_error(ErrorCode::kNotFound, "unknown switch " + q(id));
  }
  Effects fx;
  for (auto& [gid_, g] : groups_) {
    if (g.state == GroupState::kQueued || g.state == GroupState::kBroken) continue;
    if (!g.tree.node(id)) continue;
    std::set<SwitchId> others;
    for (const TreeNode& n : g.tree.nodes) {
      if (n.switch_id != id) others.insert(n.switch_id);
    }
    remove_contexts(g, others, fx);
    release_grants(g);
    release_qpns(g);
    g.state = GroupState::kBroken;
    g.pending_op = PendingOp::kNone;
    g.pending.clear();
    g.acked.clear();
    g.tree = IncTree{};
    g.broken_reason = "switch " + q(id) + " was removed";
    fx.events.push_back(
        {g.id, GroupEventKind::kBroken,
         make_error(ErrorCode::kUnavailable, gid(g.id) + " is broken: " + g.broken_reason +
                                                 "; its contexts were removed from the other "
                                                 "switches: tear it down and join again")});
  }
  (void)topology_.remove_switch(id);
  ledger_.remove_switch(id);
  qpns_.drop_switch(id);
  for (auto& [name, t] : tenants_) t.reserved.erase(id);
  drain_queue(now, fx);
  return fx;
}

Status IncManager::restore_next_group_id(uint32_t next) {
  if (next == 0) {
    return make_error(ErrorCode::kInvalidArgument, "next_group_id must be at least 1");
  }
  for (const auto& [id, g] : groups_) {
    if (id >= next) {
      return make_error(ErrorCode::kInvalidArgument,
                        "next_group_id " + std::to_string(next) + " is not above " + gid(id));
    }
  }
  next_group_id_ = next;
  return {};
}

Status IncManager::restore_group(Group g) {
  const std::string who = gid(g.id);
  auto invalid = [&](const std::string& m) {
    return make_error(ErrorCode::kInvalidArgument, who + ": " + m);
  };
  if (g.id == 0 || g.id >= next_group_id_) {
    return invalid("id is not in 1..next_group_id-1 (next_group_id " +
                   std::to_string(next_group_id_) + ")");
  }
  if (groups_.count(g.id)) return make_error(ErrorCode::kAlreadyExists, who + " appears twice");
  if (g.state == GroupState::kQueued) return invalid("queued groups are not persisted");
  if (!tenants_.count(g.request.tenant)) {
    return make_error(ErrorCode::kNotFound, who + ": unknown tenant " + q(g.request.tenant));
  }
  if (const Group* other = find_group(g.request.tenant, g.request.name)) {
    return make_error(ErrorCode::kAlreadyExists,
                      who + ": name " + q(g.request.name) + " is also " + gid(other->id) + "'s");
  }
  if (g.request.ranks.empty() || !valid_window(g.request.window) || !valid_pmtu(g.request.pmtu)) {
    return invalid("ranks, window or pmtu out of range");
  }
  for (size_t i = 0; i < g.request.ranks.size(); ++i) {
    if (g.request.ranks[i].rank != i) return invalid("its ranks are not 0..N-1 in order");
  }
  const bool granted = g.state == GroupState::kInstalling || g.state == GroupState::kInstalled;
  if (g.state == GroupState::kBroken) {
    if (!g.tree.nodes.empty() || !g.grants.empty()) {
      return invalid("a broken group holds no tree and no grants");
    }
    groups_.emplace(g.id, std::move(g));
    return {};
  }
  if (g.tree.nodes.empty()) return invalid("has no IncTree");
  std::vector<int> seen(g.request.ranks.size(), 0);
  for (const TreeNode& n : g.tree.nodes) {
    for (const TreeChild& c : n.children) {
      if (!c.is_rank) continue;
      if (c.first_rank >= seen.size()) return invalid("the IncTree has a rank out of range");
      const RankRequest& r = g.request.ranks[c.first_rank];
      if (seen[c.first_rank]++ || c.remote.ipv4 != r.ipv4 || c.remote.qpn != r.qpn) {
        return invalid("the IncTree's edge to rank " + std::to_string(c.first_rank) +
                       " does not match its endpoint");
      }
    }
  }
  if (std::count(seen.begin(), seen.end(), 1) != static_cast<long>(seen.size())) {
    return invalid("the IncTree does not reach every rank");
  }
  if (Status s = check_capabilities(g.tree, topology_, g.request.window, g.request.pmtu,
                                    exact_partial_bytes(g.request));
      !s.ok()) {
    return make_error(s.error().code, who + ": " + s.error().message);
  }
  if ((g.state == GroupState::kInstalling) != (g.pending_op != PendingOp::kNone) ||
      (g.state == GroupState::kInstalling && g.pending.empty())) {
    return invalid("pending operation does not match state " +
                   std::string(group_state_name(g.state)));
  }
  if (granted != !g.grants.empty()) {
    return invalid(std::string(group_state_name(g.state)) +
                   (granted ? " group has no grants" : " group holds grants"));
  }
  if (granted) {
    if (g.grants.size() != g.tree.nodes.size()) return invalid("grants do not match the IncTree");
    for (size_t i = 0; i < g.grants.size(); ++i) {
      if (g.grants[i].switch_id != g.tree.nodes[i].switch_id ||
          g.grants[i].bytes != group_bytes(g.request, g.request.window)) {
        return invalid("grant on switch " + q(g.grants[i].switch_id) +
                       " does not match the IncTree, window and pmtu");
      }
    }
  }
  for (const TreeNode& n : g.tree.nodes) {
    std::vector<uint32_t> qpns;
    for (const TreeChild& c : n.children) qpns.push_back(c.local.qpn);
    if (n.parent) qpns.push_back(n.parent->local.qpn);
    for (uint32_t qpn : qpns) {
      if (Status s = qpns_.claim(n.switch_id, qpn); !s.ok()) {
        return make_error(s.error().code, who + ": " + s.error().message);
      }
    }
  }
  if (granted) {
    if (Status s = ledger_.restore(g.request.tenant, g.grants); !s.ok()) {
      return make_error(s.error().code, who + ": " + s.error().message);
    }
  }
  groups_.emplace(g.id, std::move(g));
  return {};
}

Effects IncManager::finish_restore(Millis now) {
  Effects fx;
  std::vector<uint32_t> in_flight;
  for (const auto& [id, g] : groups_) {
    if (g.state == GroupState::kInstalling) in_flight.push_back(id);
  }
  for (uint32_t id : in_flight) {
    Group& g = groups_.at(id);
    rollback(g, nullptr,
             make_error(ErrorCode::kUnavailable,
                        "the manager restarted while " + gid(id) +
                            (g.pending_op == PendingOp::kAttach ? " was resuming"
                                                                : " was being installed")),
             fx);
  }
  drain_queue(now, fx);
  return fx;
}

}  // namespace epic::manager
