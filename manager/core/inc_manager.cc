// IncManager: topology and tenants, and admission — join(), evaluate() and apply().
#include "manager/core/inc_manager.h"

#include <algorithm>

#include "manager/core/group_arith.h"
#include "manager/core/group_validate.h"
#include "proto/vocab/psn.h"

namespace epic::manager {

namespace {
std::string q(const std::string& s) { return "'" + s + "'"; }
}  // namespace

IncManager::IncManager(Policy policy) : policy_(policy) {}

Status IncManager::add_switch(SwitchSpec spec) {
  const SwitchId id = spec.id;
  const uint64_t capacity = spec.capacity_bytes;
  if (Status s = topology_.add_switch(std::move(spec)); !s.ok()) return s;
  ledger_.add_switch(id, capacity);
  return {};
}

Status IncManager::add_link(Link link) { return topology_.add_link(std::move(link)); }

Status IncManager::attach_rank(RankAttachment rank) {
  return topology_.attach_rank(std::move(rank));
}

Status IncManager::set_tenant(Tenant tenant) {
  if (tenant.name.empty() || tenant.name.size() > 64 ||
      !std::all_of(tenant.name.begin(), tenant.name.end(),
                   [](char c) { return c > ' ' && c < 0x7F; })) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "tenant name " + q(tenant.name) + " must be 1-64 printable characters without spaces");
  }
  for (const auto& [sw, bytes] : tenant.reserved) {
    if (bytes == 0) {
      return make_error(ErrorCode::kInvalidArgument, "reserved_bytes: tenant " + q(tenant.name) +
                                                         " reserves 0 bytes on switch " + q(sw) +
                                                         "; leave the switch out instead");
    }
  }
  if (Status s = ledger_.set_partitions(tenant.name, tenant.reserved); !s.ok()) return s;
  std::string name = tenant.name;
  tenants_[name] = std::move(tenant);
  return {};
}

const Group* IncManager::find_group(uint32_t id) const {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second;
}

const Group* IncManager::find_group(const std::string& tenant, const std::string& name) const {
  for (const auto& [id, g] : groups_) {
    if (g.request.tenant == tenant && g.request.name == name) return &g;
  }
  return nullptr;
}

Group* IncManager::group(uint32_t id) { return const_cast<Group*>(find_group(id)); }

Result<Group*> IncManager::live_group(uint32_t id) {
  Group* g = group(id);
  if (!g) return make_error(ErrorCode::kNotFound, "unknown group " + std::to_string(id));
  return g;
}

LinkUsage IncManager::link_usage() const {
  LinkUsage usage;
  for (const auto& [id, g] : groups_) {
    if (g.state != GroupState::kInstalling && g.state != GroupState::kInstalled) continue;
    for (const Link& l : g.tree.links()) ++usage[l];
  }
  return usage;
}

IncManager::Admission IncManager::evaluate(const Group& g, Millis now) const {
  Admission a;
  const GroupRequest& r = g.request;
  auto placements = validate_request(r, topology_, tenants_, groups_, g.id);
  if (!placements.ok()) {
    a.error = placements.error();
    // A clash with another group's name or endpoints, or a tenant at its group quota, may clear.
    if (a.error.code == ErrorCode::kResourceExhausted) a.verdict = PlanVerdict::kOverQuota;
    return a;
  }
  const LinkUsage usage =
      policy_.edge_disjoint == EdgeDisjoint::kIgnore ? LinkUsage{} : link_usage();
  auto candidates =
      build_tree_candidates(topology_, placements.value(), usage, hot_links(link_loads()));
  if (!candidates.ok()) {
    a.error = candidates.error();
    return a;
  }
  const Tenant& tenant = tenants_.at(r.tenant);
  std::vector<uint32_t> rank_ipv4;
  rank_ipv4.reserve(r.ranks.size());
  for (const RankRequest& rr : r.ranks) rank_ipv4.push_back(rr.ipv4);  // sorted by rank
  // The requested window wins; else the window of the candidate's BDP in the group's mode (the
  // path's for Mode-II, one hop's for Mode-III).
  const vocab::GroupMode mode = mode_of(r);
  auto window_on = [&](const IncTree& tree, const GroupRequest& rq) {
    return rq.window ? rq.window
                     : bdp_window(tree, topology_, policy_.link_speeds, rank_ipv4, rq.pmtu, mode,
                                  rq.arith);
  };
  auto hop_timeout_on = [&](const IncTree& tree, uint32_t window, uint32_t pmtu) {
    const PathBdp bdp = tree_bdp(tree, policy_.link_speeds, rank_ipv4);
    return hop_timeout_for(bdp.hop_rtt_us, bdp.bandwidth_gbps, window, pmtu);
  };
  // The requested pmtu wins; 0: the largest every switch of the candidate and every port it
  // uses carry (4096 on a jumbo-frame fabric, 1024 behind 1500-byte ports), or, if none does,
  // the smallest (whose refusal then says why).
  auto request_on = [&](const IncTree& tree) {
    GroupRequest rq = r;
    if (r.pmtu != 0) return rq;
    for (const uint32_t pmtu : {4096u, 2048u, 1024u, 512u, 256u}) {
      rq.pmtu = pmtu;
      if (check_capabilities(tree, topology_, window_on(tree, rq), pmtu, exact_partial_bytes(rq))
              .ok()) {
        break;
      }
    }
    return rq;
  };
  std::optional<Admission> wait;  // the best-ranked candidate that may fit later
  std::optional<Error> never;     // the best-ranked candidate's reason it never can
  std::vector<const TreeCandidate*> reclaimable;
  for (const TreeCandidate& c : candidates.value()) {
    if (policy_.edge_disjoint == EdgeDisjoint::kRequire && c.shared_links > 0) {
      if (!wait) {
        std::string shared;
        for (const Link& l : c.tree.links()) {
          if (usage.count(l)) {
            shared = to_string(l);
            break;
          }
        }
        wait = Admission{.verdict = PlanVerdict::kNoMemory,
                         .error = make_error(ErrorCode::kResourceExhausted,
                                             "no edge-disjoint IncTree: every candidate shares "
                                             "a link with an active group (the best, rooted at " +
                                                 q(c.tree.root) + ", shares " + shared + ")")};
      }
      continue;
    }
    const GroupRequest rq = request_on(c.tree);
    const uint32_t window = window_on(c.tree, rq);
    if (r.arith.profile == vocab::AccumProfile::kKulischFixed && mode == vocab::GroupMode::kMode3 &&
        c.tree.nodes.size() > 1) {
      if (!never) {
        never = make_error(ErrorCode::kFailedPrecondition,
                           "an exact sum (kulisch_fixed) on a Mode-III tree of several switches "
                           "is not supported (the IncTree rooted at " +
                               q(c.tree.root) + " has " + std::to_string(c.tree.nodes.size()) +
                               "): use Mode-II, or ranks behind one switch");
      }
      continue;
    }
    if (Status s = check_capabilities(c.tree, topology_, window, rq.pmtu, exact_partial_bytes(rq));
        !s.ok()) {
      if (!never) {
        // An exact group is refused as exact, with its width and memory.
        never = r.arith.profile == vocab::AccumProfile::kKulischFixed
                    ? make_error(s.error().code, exact_needs(rq, window) + ": " + s.error().message)
                    : s.error();
      }
      continue;
    }
    std::vector<std::pair<SwitchId, uint64_t>> needs;
    bool qpns_left = true;
    for (const TreeNode& n : c.tree.nodes) {
      needs.emplace_back(n.switch_id, group_bytes(rq, window));
      const uint32_t edges = static_cast<uint32_t>(n.children.size()) + (n.parent ? 1 : 0);
      qpns_left = qpns_left && qpns_.free_count(n.switch_id) >= edges;
    }
    if (!qpns_left) {
      if (!wait) {
        wait = Admission{.verdict = PlanVerdict::kNoMemory,
                         .error = make_error(ErrorCode::kResourceExhausted,
                                             "no free virtual QPN on a switch of the IncTree "
                                             "rooted at " +
                                                 q(c.tree.root))};
      }
      continue;
    }
    GrantPlan plan = ledger_.plan(r.tenant, tenant.quota, needs, g.id);
    if (plan.verdict == PlanVerdict::kFits) {
      return Admission{.verdict = PlanVerdict::kFits,
                       .tree = c.tree,
                       .window = window,
                       .pmtu = rq.pmtu,
                       .hop_timeout_us = hop_timeout_on(c.tree, window, rq.pmtu),
                       .grants = plan.grants};
    }
    if (plan.verdict == PlanVerdict::kNever) {
      // An exact group is refused as exact, with both figures: never run in arrival order.
      const bool exact = r.arith.profile == vocab::AccumProfile::kKulischFixed;
      if (!never) {
        never = make_error(ErrorCode::kFailedPrecondition,
                           exact ? exact_needs(rq, window) + ": " + plan.reason : plan.reason);
      }
      continue;
    }
    reclaimable.push_back(&c);
    if (!wait) {
      wait = Admission{.verdict = plan.verdict,
                       .error = make_error(ErrorCode::kResourceExhausted, plan.reason)};
    }
  }
  if (policy_.reclaim_idle_after) {
    for (const TreeCandidate* c : reclaimable) {
      const GroupRequest rq = request_on(c->tree);
      const uint32_t window = window_on(c->tree, rq);
      std::vector<std::pair<SwitchId, uint64_t>> needs;
      for (const TreeNode& n : c->tree.nodes) {
        needs.emplace_back(n.switch_id, group_bytes(rq, window));
      }
      // Release idle groups on a copy of the ledger, oldest idle first, until the grant fits.
      MemoryLedger trial = ledger_;
      std::vector<uint32_t> victims;
      for (uint32_t v : reclaim_victims(g, needs, now)) {
        const Group& vg = groups_.at(v);
        trial.release(vg.request.tenant, vg.grants);
        victims.push_back(v);
        GrantPlan plan = trial.plan(r.tenant, tenant.quota, needs, g.id);
        if (plan.verdict == PlanVerdict::kFits) {
          return Admission{.verdict = PlanVerdict::kFits,
                           .tree = c->tree,
                           .window = window,
                           .pmtu = rq.pmtu,
                           .hop_timeout_us = hop_timeout_on(c->tree, window, rq.pmtu),
                           .grants = plan.grants,
                           .victims = victims};
        }
      }
    }
  }
  if (wait) return *wait;
  a.error = never ? *never : make_error(ErrorCode::kFailedPrecondition, "no IncTree fits");
  return a;
}

void IncManager::bind_endpoints(Group& g) {
  for (TreeNode& n : g.tree.nodes) {
    const SwitchSpec& sw = *topology_.find_switch(n.switch_id);
    for (TreeChild& c : n.children) {
      c.local = Endpoint{sw.inc_ipv4, sw.inc_mac, qpns_.allocate(sw.id, policy_.random)};
    }
    if (n.parent) {
      n.parent->local = Endpoint{sw.inc_ipv4, sw.inc_mac, qpns_.allocate(sw.id, policy_.random)};
    }
  }
  for (TreeNode& n : g.tree.nodes) {
    if (!n.parent) continue;
    TreeNode& up = *g.tree.node(n.parent->parent_port.switch_id);
    for (TreeChild& c : up.children) {
      if (!c.is_rank && c.child_port == SwitchPort{n.switch_id, n.parent->port}) {
        c.remote = n.parent->local;
        n.parent->remote = c.local;
      }
    }
  }
}

SwitchContext switch_context(const Group& g, const TreeNode& n, uint64_t memory_bytes) {
  return SwitchContext{.group_id = g.id,
                       .num_ranks = static_cast<uint32_t>(g.request.ranks.size()),
                       .initial_psn = g.initial_psn,
                       .window = g.request.window,
                       .pmtu = g.request.pmtu,
                       .mode = mode_of(g.request),
                       .hop_timeout_us = g.hop_timeout_us,
                       .children = n.children,
                       .parent = n.parent,
                       .memory_bytes = memory_bytes,
                       .pkey = g.request.pkey,
                       .arith = g.request.arith,
                       .dscp = g.request.dscp.value_or(0)};
}

void IncManager::apply(Group& g, Admission& a, Millis now, Effects& fx) {
  for (uint32_t v : a.victims) reclaim(groups_.at(v), now, fx);
  g.tree = std::move(a.tree);
  g.request.window = a.window;  // the one asked for, or the path BDP's
  g.request.pmtu = a.pmtu;      // the one asked for, or the largest the tree carries
  g.hop_timeout_us = a.hop_timeout_us;
  bind_endpoints(g);
  g.grants = std::move(a.grants);
  ledger_.commit(g.request.tenant, g.grants);
  g.initial_psn = policy_.random ? static_cast<uint32_t>(policy_.random() & vocab::kPsnMask)
                                 : initial_psn_for(g.id);
  g.state = GroupState::kInstalling;
  g.pending_op = PendingOp::kInstall;
  g.pending.clear();
  g.acked.clear();
  g.last_activity = now;
  g.queue_deadline = Millis{0};
  g.blocked_by_quota = false;
  g.wait_reason.clear();
  for (size_t i = 0; i < g.tree.nodes.size(); ++i) {
    const TreeNode& n = g.tree.nodes[i];
    g.pending.insert(n.switch_id);
    SwitchContext ctx = switch_context(g, n, g.grants[i].bytes);
    fx.actions.push_back(SwitchAction{.kind = ActionKind::kInstallContext,
                                      .switch_id = n.switch_id,
                                      .group_id = g.id,
                                      .context = std::move(ctx),
                                      .memory_bytes = g.grants[i].bytes});
  }
  fx.events.push_back({g.id, GroupEventKind::kInstalling, std::nullopt});
}

bool IncManager::queue_blocks_newcomers() const {
  return std::any_of(queue_.begin(), queue_.end(),
                     [&](uint32_t id) { return !groups_.at(id).blocked_by_quota; });
}

Result<JoinResult> IncManager::join(GroupRequest request, Millis now) {
  std::stable_sort(request.ranks.begin(), request.ranks.end(),
                   [](const RankRequest& x, const RankRequest& y) { return x.rank < y.rank; });
  Group g;
  g.request = std::move(request);
  if (!g.request.mode) g.request.mode = policy_.default_mode;
  if (!g.request.dscp) {
    const auto t = tenants_.find(g.request.tenant);
    g.request.dscp = t != tenants_.end() ? t->second.default_dscp.value_or(0) : uint8_t{0};
  }
  g.created = now;
  Admission a = evaluate(g, now);
  if (a.verdict == PlanVerdict::kNever) return a.error;
  const bool may_queue = g.request.queue_timeout > Millis{0};
  const bool behind = queue_blocks_newcomers();
  if (behind) {
    const auto ahead =
        static_cast<size_t>(std::count_if(queue_.begin(), queue_.end(), [&](uint32_t id) {
          return !groups_.at(id).blocked_by_quota;
        }));
    a.verdict = PlanVerdict::kNoMemory;
    a.error = make_error(ErrorCode::kResourceExhausted,
                         "no INC memory: " + std::to_string(ahead) +
                             " group(s) wait in the queue ahead of this one");
  }
  if (a.verdict != PlanVerdict::kFits && !may_queue) return a.error;

  JoinResult out;
  while (foreign_.count(next_group_id_)) ++next_group_id_;  // an agent serves that id
  g.id = next_group_id_++;
  out.group_id = g.id;
  Group& stored = groups_.emplace(g.id, std::move(g)).first->second;
  if (a.verdict == PlanVerdict::kFits) {
    apply(stored, a, now, out.effects);
    out.state = GroupState::kInstalling;
    return out;
  }
  stored.state = GroupState::kQueued;
  stored.queue_deadline = now + std::min(stored.request.queue_timeout, policy_.max_queue_wait);
  stored.blocked_by_quota = a.verdict == PlanVerdict::kOverQuota;
  stored.wait_reason = a.error.message;
  queue_.push_back(stored.id);
  out.state = GroupState::kQueued;
  out.effects.events.push_back({stored.id, GroupEventKind::kQueued, a.error});
  return out;
}

Result<std::vector<RankAnswer>> IncManager::answers(uint32_t group_id) const {
  const Group* g = find_group(group_id);
  if (!g) return make_error(ErrorCode::kNotFound, "unknown group " + std::to_string(group_id));
  if (g->state != GroupState::kInstalled) {
    return make_error(ErrorCode::kFailedPrecondition,
                      "group " + std::to_string(group_id) + " is " +
                          std::string(group_state_name(g->state)) +
                          "; its ranks are answered once it is installed");
  }
  std::vector<RankAnswer> out(g->request.ranks.size());
  for (const TreeNode& n : g->tree.nodes) {
    for (const TreeChild& c : n.children) {
      if (!c.is_rank) continue;
      out[c.first_rank] = RankAnswer{.group_id = g->id,
                                     .rank = c.first_rank,
                                     .switch_id = n.switch_id,
                                     .peer = c.local,
                                     .peer_gid = ipv4_mapped_gid(c.local.ipv4),
                                     .initial_psn = g->initial_psn,
                                     .window = g->request.window,
                                     .pmtu = g->request.pmtu,
                                     .mode = mode_of(g->request),
                                     .arith = g->request.arith,
                                     .dscp = g->request.dscp.value_or(0)};
    }
  }
  return out;
}

std::vector<ModeCost> IncManager::mode_costs(const Group& g) const {
  if (g.tree.nodes.empty()) return {};
  std::vector<uint32_t> rank_ipv4;
  rank_ipv4.reserve(g.request.ranks.size());
  for (const RankRequest& rr : g.request.ranks) rank_ipv4.push_back(rr.ipv4);
  std::vector<ModeCost> out;
  for (const vocab::GroupMode mode : {vocab::GroupMode::kMode2, vocab::GroupMode::kMode3}) {
    const uint32_t window = bdp_window(g.tree, topology_, policy_.link_speeds, rank_ipv4,
                                       g.request.pmtu, mode, g.request.arith);
    out.push_back({mode, window, group_bytes(g.request, window)});
  }
  return out;
}

void IncManager::report_port_rates(const SwitchId& sw, const std::map<std::string, double>& rates) {
  std::erase_if(port_rates_, [&](const auto& e) { return e.first.switch_id == sw; });
  for (const auto& [port, rate] : rates) port_rates_[{sw, port}] = rate;
}

void IncManager::report_port_queues(const SwitchId& sw,
                                    const std::map<std::string, uint64_t>& queues) {
  std::erase_if(port_queues_, [&](const auto& e) { return e.first.switch_id == sw; });
  for (const auto& [port, bytes] : queues) port_queues_[{sw, port}] = bytes;
}

std::vector<LinkLoad> IncManager::link_loads() const {
  return manager::link_loads(topology_, policy_.link_speeds, port_rates_, policy_.hot_link_load,
                             port_queues_);
}

}  // namespace epic::manager
