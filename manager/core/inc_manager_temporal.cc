// IncManager: Temporal Mux — reclaiming the slots of idle groups, resuming them, and the FIFO
// queue of joins waiting for memory (docs/manager.md "Temporal Mux").
#include <algorithm>
#include <set>

#include "manager/core/group_arith.h"
#include "manager/core/inc_manager.h"

namespace epic::manager {

// Installed groups idle for reclaim_idle_after that hold slots the grant could use — on a
// switch of the tree, or anywhere for the same tenant (its total quota) — oldest idle first.
std::vector<uint32_t> IncManager::reclaim_victims(
    const Group& g, const std::vector<std::pair<SwitchId, uint64_t>>& needs, Millis now) const {
  std::set<SwitchId> on;
  for (const auto& [sw, n] : needs) on.insert(sw);
  std::vector<const Group*> idle;
  for (const auto& [id, v] : groups_) {
    if (id == g.id || v.state != GroupState::kInstalled) continue;
    if (now - v.last_activity < *policy_.reclaim_idle_after) continue;
    const bool helps = v.request.tenant == g.request.tenant ||
                       std::any_of(v.grants.begin(), v.grants.end(),
                                   [&](const MemoryGrant& s) { return on.count(s.switch_id) > 0; });
    if (helps) idle.push_back(&v);
  }
  std::sort(idle.begin(), idle.end(), [](const Group* x, const Group* y) {
    return std::make_pair(x->last_activity, x->id) < std::make_pair(y->last_activity, y->id);
  });
  std::vector<uint32_t> out;
  out.reserve(idle.size());
  for (const Group* v : idle) out.push_back(v->id);
  return out;
}

void IncManager::reclaim(Group& victim, Millis now, Effects& fx) {
  for (const MemoryGrant& s : victim.grants) {
    fx.actions.push_back(SwitchAction{
        .kind = ActionKind::kDetachSlots, .switch_id = s.switch_id, .group_id = victim.id});
  }
  release_grants(victim);
  victim.state = GroupState::kReclaimed;
  fx.events.push_back(
      {victim.id, GroupEventKind::kReclaimed,
       make_error(ErrorCode::kResourceExhausted,
                  "the slots of group " + std::to_string(victim.id) + " were reclaimed after " +
                      std::to_string((now - victim.last_activity).count()) +
                      " ms idle; resume it to use INC again")});
}

Result<Effects> IncManager::resume(uint32_t group_id, Millis now) {
  auto found = live_group(group_id);
  if (!found.ok()) return found.error();
  Group& g = *found.value();
  Effects fx;
  if (g.state == GroupState::kInstalled) {
    g.last_activity = std::max(g.last_activity, now);
    return fx;
  }
  if (g.state != GroupState::kReclaimed) {
    return make_error(ErrorCode::kFailedPrecondition, "group " + std::to_string(group_id) + " is " +
                                                          std::string(group_state_name(g.state)) +
                                                          ", not reclaimed");
  }
  const Quota& quota = tenants_.at(g.request.tenant).quota;
  std::vector<std::pair<SwitchId, uint64_t>> needs;
  for (const TreeNode& n : g.tree.nodes) {
    needs.emplace_back(n.switch_id, group_bytes(g.request, g.request.window));
  }
  GrantPlan plan = ledger_.plan(g.request.tenant, quota, needs, g.id);
  std::vector<uint32_t> victims;
  if (plan.verdict != PlanVerdict::kFits && plan.verdict != PlanVerdict::kNever &&
      policy_.reclaim_idle_after) {
    MemoryLedger trial = ledger_;
    for (uint32_t v : reclaim_victims(g, needs, now)) {
      const Group& vg = groups_.at(v);
      trial.release(vg.request.tenant, vg.grants);
      victims.push_back(v);
      GrantPlan p = trial.plan(g.request.tenant, quota, needs, g.id);
      if (p.verdict == PlanVerdict::kFits) {
        plan = std::move(p);
        break;
      }
    }
  }
  if (plan.verdict != PlanVerdict::kFits) {
    return make_error(plan.verdict == PlanVerdict::kNever ? ErrorCode::kFailedPrecondition
                                                          : ErrorCode::kResourceExhausted,
                      plan.reason);
  }
  for (uint32_t v : victims) reclaim(groups_.at(v), now, fx);
  g.grants = std::move(plan.grants);
  ledger_.commit(g.request.tenant, g.grants);
  g.state = GroupState::kInstalling;
  g.pending_op = PendingOp::kAttach;
  g.pending.clear();
  g.acked.clear();
  g.last_activity = now;
  for (const MemoryGrant& s : g.grants) {
    g.pending.insert(s.switch_id);
    fx.actions.push_back(SwitchAction{.kind = ActionKind::kAttachSlots,
                                      .switch_id = s.switch_id,
                                      .group_id = g.id,
                                      .memory_bytes = s.bytes});
  }
  fx.events.push_back({g.id, GroupEventKind::kInstalling, std::nullopt});
  return fx;
}

Effects IncManager::tick(Millis now) {
  Effects fx;
  drain_queue(now, fx);
  return fx;
}

void IncManager::drain_queue(Millis now, Effects& fx) {
  const std::vector<uint32_t> waiting(queue_.begin(), queue_.end());
  for (uint32_t id : waiting) {
    Group& g = groups_.at(id);
    if (g.queue_deadline > now) continue;
    const Millis waited = now - g.created;
    fx.events.push_back({id, GroupEventKind::kFailed,
                         make_error(ErrorCode::kResourceExhausted,
                                    "not admitted after " + std::to_string(waited.count()) +
                                        " ms in the queue: " + g.wait_reason)});
    erase_group(id);
  }
  // Strict FIFO: a join waiting for memory holds back those behind it (no starvation of large
  // groups); one waiting only for its own tenant's quota does not.
  const std::vector<uint32_t> still(queue_.begin(), queue_.end());
  for (uint32_t id : still) {
    Group& g = groups_.at(id);
    Admission a = evaluate(g, now);
    if (a.verdict == PlanVerdict::kFits) {
      queue_.erase(std::find(queue_.begin(), queue_.end(), id));
      apply(g, a, now, fx);
      continue;
    }
    if (a.verdict == PlanVerdict::kNever) {
      fx.events.push_back({id, GroupEventKind::kFailed, a.error});
      erase_group(id);
      continue;
    }
    g.wait_reason = a.error.message;
    g.blocked_by_quota = a.verdict == PlanVerdict::kOverQuota;
    if (!g.blocked_by_quota) break;
  }
}

}  // namespace epic::manager
