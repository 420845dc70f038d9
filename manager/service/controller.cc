// Controller: start and shutdown, the ranks' joins and leaves, group events, housekeeping.
#include "manager/service/controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "manager/core/store.h"
#include "manager/service/convert_in.h"
#include "manager/service/convert_out.h"
#include "manager/service/csprng.h"

namespace epic::manager::service {

grpc::Status to_grpc(const Error& e) {
  return {static_cast<grpc::StatusCode>(static_cast<int>(e.code)), e.message};
}

grpc::Status to_grpc(const Status& s) { return s.ok() ? grpc::Status::OK : to_grpc(s.error()); }

namespace {
// The policy with the declared link speeds and default mode (the fabric file's) added to it,
// and the kernel's CSPRNG for QPNs and initial PSNs unless the caller set a source.
ServiceOptions with_declared_speeds(ServiceOptions o) {
  if (o.declared.default_mode) o.policy.default_mode = *o.declared.default_mode;
  if (!o.policy.random) o.policy.random = csprng_bits;
  o.policy.link_speeds.links.insert(o.declared.speeds.links.begin(), o.declared.speeds.links.end());
  o.policy.link_speeds.ranks.insert(o.declared.speeds.ranks.begin(), o.declared.speeds.ranks.end());
  return o;
}
}  // namespace

Controller::Controller(ServiceOptions options, std::shared_ptr<spdlog::logger> log)
    : options_(with_declared_speeds(std::move(options))),
      log_(std::move(log)),
      core_(options_.policy),
      rendezvous_(options_.rendezvous_timeout) {}

std::string Controller::store_path() const {
  return options_.state_dir.empty() ? std::string() : options_.state_dir + "/manager-store.jsonl";
}

Status Controller::start(Millis now) {
  if (!options_.state_dir.empty()) {
    std::error_code ec;
    // A directory made here is the manager's alone (0700): the store holds every group.
    if (std::filesystem::create_directories(options_.state_dir, ec) && !ec) {
      std::filesystem::permissions(options_.state_dir, std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::replace, ec);
    }
    if (ec) {
      return make_error(ErrorCode::kInternal, "--state-dir " + options_.state_dir +
                                                  ": cannot create it: " + ec.message());
    }
    auto lock = StateDirLock::acquire(options_.state_dir);
    if (!lock.ok()) return lock.error();
    state_lock_ = std::move(lock.value());
    auto loaded = load_store(store_path(), options_.policy, now);
    if (loaded.ok()) {
      core_ = std::move(loaded.value().manager);
      store_loaded_ = true;
      // Rolled-back operations need no sending: every agent is re-synchronised when it
      // registers, and none is connected yet.
      log_->info("store {}: {} switch(es), {} group(s) recovered", store_path(),
                 core_.topology().switches().size(), core_.groups().size());
    } else if (loaded.error().code != ErrorCode::kNotFound) {
      return loaded.error();
    } else {
      log_->info("store {}: none yet, starting empty", store_path());
    }
  }
  for (const auto& [id, spec] : core_.topology().switches()) {
    sessions_[id].away_since = now;  // recovered switches wait for their agents
  }
  for (Tenant t : options_.declared.tenants) {
    // A partition on a switch that has not registered yet waits for it (apply_declared).
    for (const auto& [sw, bytes] : t.reserved) {
      declared_reservations_[t.name][sw] = bytes;
    }
    std::erase_if(t.reserved,
                  [&](const auto& r) { return !core_.topology().find_switch(r.first); });
    if (Status s = core_.set_tenant(t); !s.ok()) return s;
  }
  if (core_.tenants().empty()) core_.set_tenant(Tenant{.name = "default"});
  declared_links_.insert(options_.declared.links.begin(), options_.declared.links.end());
  declared_ranks_ = options_.declared.ranks;
  apply_declared();
  persist();
  if (!options_.state_dir.empty() && dirty_) {
    // The store must be writable: finding out at the first group would lose it at a restart.
    return make_error(ErrorCode::kInternal,
                      "--state-dir " + options_.state_dir + ": cannot write " + store_path());
  }
  return {};
}

void Controller::shutdown() {
  stopping_ = true;
  const grpc::Status bye(grpc::StatusCode::UNAVAILABLE, "inc-manager is shutting down");
  for (auto& [key, f] : forming_) fail_waiters(f.waiters, bye);
  forming_.clear();
  for (auto& [id, w] : waiting_) fail_waiters(w, bye);
  waiting_.clear();
  for (const ChannelPtr& c : unregistered_) c->close(bye);
  unregistered_.clear();
  for (auto& [id, s] : sessions_) {
    if (s.channel) s.channel->close(bye);
    s.channel.reset();
  }
  if (dirty_) persist();
}

Status Controller::check_running() const {
  if (stopping_) return make_error(ErrorCode::kUnavailable, "inc-manager is shutting down");
  return {};
}

void Controller::persist() {
  dirty_ = false;
  if (options_.state_dir.empty()) return;
  if (Status s = save_store(store_path(), core_); !s.ok()) {
    dirty_ = true;  // retried at the next tick
    log_->error("cannot save the store: {}", s.error().to_string());
  }
}

void Controller::fail_waiters(std::vector<Waiter>& waiters, const grpc::Status& status) {
  for (Waiter& w : waiters) w.reply(status, {});
  waiters.clear();
}

void Controller::join(const pb::JoinGroupRequest& request, JoinReply reply, Millis now) {
  if (Status s = check_running(); !s.ok()) return reply(to_grpc(s), {});
  auto parsed = rank_join_from(request);
  if (!parsed.ok()) return reply(to_grpc(parsed.error()), {});
  const RankJoin& j = parsed.value();
  if (pending_joins(j.tenant) >= options_.max_pending_joins_per_tenant) {
    return reply(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                              "pending joins of tenant '" + j.tenant +
                                  "': " + std::to_string(pending_joins(j.tenant)) +
                                  " JoinGroup calls wait already, the cap is " +
                                  std::to_string(options_.max_pending_joins_per_tenant) +
                                  " (--max-pending-joins-per-tenant)"),
                 {});
  }
  Waiter waiter{j.rank.rank, std::move(reply), std::nullopt, j.pmtu};
  if (request.has_host_endpoint()) waiter.host_endpoint = request.host_endpoint();
  if (const Group* g = core_.find_group(j.tenant, j.group)) {
    return rejoin(*g, j, std::move(waiter), now);
  }
  auto offered = rendezvous_.offer(j, now);
  if (!offered.ok()) return waiter.reply(to_grpc(offered.error()), {});
  const auto key = std::make_pair(j.tenant, j.group);
  Forming& f = forming_[key];
  f.size = j.size;
  f.waiters.push_back(std::move(waiter));
  if (!offered.value()) return;  // more ranks to come
  std::vector<Waiter> waiters = std::move(f.waiters);
  forming_.erase(key);
  auto joined = core_.join(std::move(*offered.value()), now);
  if (!joined.ok()) {
    const std::string what = "group '" + j.group + "' of tenant '" + j.tenant + "'";
    if (answer_host_fallback(waiters, joined.error(), what)) return;
    log_->info("{} refused: {}", what, joined.error().to_string());
    return fail_waiters(waiters, to_grpc(joined.error()));
  }
  JoinResult& r = joined.value();
  log_->info("group {} ('{}' of tenant '{}', {} ranks): {}", r.group_id, j.group, j.tenant, j.size,
             group_state_name(r.state));
  waiting_[r.group_id] = std::move(waiters);
  dispatch(std::move(r.effects), now);
}

// A rank calls JoinGroup for a group that exists: a retry (its first call was lost, or the
// rank restarted) is answered like the first call; anything else is a clash.
void Controller::rejoin(const Group& g, const RankJoin& j, Waiter waiter, Millis now) {
  JoinReply& reply = waiter.reply;
  const std::string what = "group '" + j.group + "' of tenant '" + j.tenant + "' (id " +
                           std::to_string(g.id) + ", " + std::string(group_state_name(g.state)) +
                           ")";
  const RankRequest* mine = nullptr;
  for (const RankRequest& r : g.request.ranks) {
    if (r.rank == j.rank.rank) mine = &r;
  }
  // A rank that left the window to the manager (0) accepts the one the manager chose.
  const bool same_window = j.window == 0 || g.request.window == j.window;
  // Likewise a rank that left the mode to the fabric's default, or the pmtu to the manager.
  const bool same_mode = !j.mode || mode_of(g.request) == *j.mode;
  const bool same_pmtu = j.pmtu == 0 || g.request.pmtu == j.pmtu;
  // And a rank that left the traffic class to the tenant's default.
  const bool same_dscp = !j.dscp || g.request.dscp == j.dscp;
  if (g.request.ranks.size() != j.size || !same_window || !same_mode || !same_pmtu || !same_dscp ||
      g.request.pkey != j.pkey || !(g.request.arith == j.arith) || !mine ||
      mine->ipv4 != j.rank.ipv4 || mine->qpn != j.rank.qpn) {
    return reply(grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                              what +
                                  " already exists with other parameters or another endpoint "
                                  "for rank " +
                                  std::to_string(j.rank.rank) + "; leave or destroy it first"),
                 {});
  }
  if (auto it = left_.find(g.id); it != left_.end()) it->second.erase(j.rank.rank);
  switch (g.state) {
    case GroupState::kInstalled: {
      auto answers = core_.answers(g.id);
      if (!answers.ok()) return reply(to_grpc(answers.error()), {});
      return reply(grpc::Status::OK, to_proto(answers.value().at(j.rank.rank)));
    }
    case GroupState::kQueued:
    case GroupState::kInstalling:
      waiting_[g.id].push_back(std::move(waiter));
      return;
    case GroupState::kReclaimed: {
      auto resumed = core_.resume(g.id, now);
      if (!resumed.ok()) return reply(to_grpc(resumed.error()), {});
      waiting_[g.id].push_back(std::move(waiter));
      return dispatch(std::move(resumed.value()), now);
    }
    case GroupState::kBroken:
      return reply(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                what + " is broken: " + g.broken_reason +
                                    "; destroy it (incctl destroy) and join again"),
                   {});
  }
}

grpc::Status Controller::leave(const pb::LeaveGroupRequest& request, pb::LeaveGroupResponse& out,
                               Millis now) {
  if (Status s = check_running(); !s.ok()) return to_grpc(s);
  const auto key = std::make_pair(request.tenant(), request.group());
  const std::string what = "group '" + request.group() + "' of tenant '" + request.tenant() + "'";
  if (const Group* g = core_.find_group(request.tenant(), request.group())) {
    if (request.rank() >= g->request.ranks.size()) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "rank: " + std::to_string(request.rank()) + " is out of range for " + what};
    }
    std::set<uint32_t>& left = left_[g->id];
    left.insert(request.rank());
    if (left.size() < g->request.ranks.size()) return grpc::Status::OK;
    const uint32_t id = g->id;
    auto fx = core_.teardown(id, now);
    if (!fx.ok()) return to_grpc(fx.error());
    log_->info("group {} torn down: every rank left", id);
    dispatch(std::move(fx.value()), now);
    out.set_torn_down(true);
    return grpc::Status::OK;
  }
  if (auto it = forming_.find(key); it != forming_.end()) {
    rendezvous_.cancel(request.tenant(), request.group());
    fail_waiters(it->second.waiters,
                 grpc::Status(grpc::StatusCode::CANCELLED,
                              what + ": rank " + std::to_string(request.rank()) +
                                  " left before every rank had joined"));
    forming_.erase(it);
    out.set_torn_down(true);
    return grpc::Status::OK;
  }
  return {grpc::StatusCode::NOT_FOUND, "unknown " + what};
}

size_t Controller::pending_joins(const std::string& tenant) const {
  size_t n = 0;
  for (const auto& [key, f] : forming_) {
    if (key.first == tenant) n += f.waiters.size();
  }
  for (const auto& [id, waiters] : waiting_) {
    if (tenant_of_group(id) == tenant) n += waiters.size();
  }
  return n;
}

std::optional<std::string> Controller::tenant_of_group(uint32_t group_id) const {
  const Group* g = core_.find_group(group_id);
  if (!g) return std::nullopt;
  return g->request.tenant;
}

grpc::Status Controller::destroy(const pb::DestroyGroupRequest& request,
                                 pb::DestroyGroupResponse& out, Millis now) {
  if (Status s = check_running(); !s.ok()) return to_grpc(s);
  const Group* g = request.group_id() != 0 ? core_.find_group(request.group_id())
                                           : core_.find_group(request.tenant(), request.group());
  if (!g && request.group_id() != 0 && core_.is_foreign(request.group_id())) {
    // A group an agent serves that we have no record of (Controller::keep_foreign_groups).
    auto fx = core_.forget_foreign(request.group_id());
    if (!fx.ok()) return to_grpc(fx.error());
    log_->info("foreign group {} removed by an operator", request.group_id());
    for (const SwitchAction& a : fx.value().actions) send_action(a, true);
    persist();
    out.set_group_id(request.group_id());
    return grpc::Status::OK;
  }
  if (!g) {
    return {grpc::StatusCode::NOT_FOUND,
            request.group_id() != 0
                ? "unknown group " + std::to_string(request.group_id())
                : "unknown group '" + request.group() + "' of tenant '" + request.tenant() + "'"};
  }
  const uint32_t id = g->id;
  auto fx = core_.teardown(id, now);
  if (!fx.ok()) return to_grpc(fx.error());
  log_->info("group {} destroyed by an operator", id);
  dispatch(std::move(fx.value()), now);
  out.set_group_id(id);
  return grpc::Status::OK;
}

void Controller::dispatch(Effects effects, Millis now) {
  for (const SwitchAction& a : effects.actions) send_action(a, false);
  for (const GroupEvent& e : effects.events) on_event(e, now);
  // Answered after every action of the effects is out, so that the removes a failure brings
  // follow the installs they undo.
  for (auto refused = std::exchange(refused_, {}); auto& [sw, action_id, why] : refused) {
    on_answer(sw, action_id, &why, now);
  }
  persist();
}

void Controller::on_event(const GroupEvent& e, Millis now) {
  const auto status = [&](grpc::StatusCode code, const std::string& msg) {
    return e.error ? to_grpc(*e.error) : grpc::Status(code, msg);
  };
  const std::string gid = "group " + std::to_string(e.group_id);
  switch (e.kind) {
    case GroupEventKind::kQueued:
      return;
    case GroupEventKind::kInstalling:
      installing_since_[e.group_id] = now;
      return;
    case GroupEventKind::kReady:
      installing_since_.erase(e.group_id);
      log_->info("{} installed", gid);
      return answer_group(e.group_id);
    case GroupEventKind::kReclaimed:
      log_->info("{}: slots reclaimed (Temporal Mux)", gid);
      [[fallthrough]];
    case GroupEventKind::kFailed:
    case GroupEventKind::kBroken:
    case GroupEventKind::kTornDown:
      if (e.kind != GroupEventKind::kReclaimed) {
        installing_since_.erase(e.group_id);
        if (e.error) log_->warn("{}: {}", gid, e.error->to_string());
      }
      if (e.kind == GroupEventKind::kFailed || e.kind == GroupEventKind::kTornDown) {
        left_.erase(e.group_id);
      }
      if (auto it = waiting_.find(e.group_id); it != waiting_.end()) {
        // Not admitted after queue_timeout_ms (the group is gone from the core already).
        if (e.kind == GroupEventKind::kFailed && e.error &&
            answer_host_fallback(it->second, *e.error, gid)) {
          waiting_.erase(it);
          return;
        }
        fail_waiters(
            it->second,
            status(e.kind == GroupEventKind::kReclaimed ? grpc::StatusCode::RESOURCE_EXHAUSTED
                                                        : grpc::StatusCode::UNAVAILABLE,
                   e.kind == GroupEventKind::kReclaimed
                       ? "no INC memory: " + gid + " was reclaimed while installing"
                       : gid + " was torn down before it was ready"));
        waiting_.erase(it);
      }
      return;
  }
}

void Controller::answer_group(uint32_t group_id) {
  auto it = waiting_.find(group_id);
  if (it == waiting_.end()) return;
  auto answers = core_.answers(group_id);
  for (Waiter& w : it->second) {
    if (!answers.ok()) {
      w.reply(to_grpc(answers.error()), {});
    } else {
      w.reply(grpc::Status::OK, to_proto(answers.value().at(w.rank)));
    }
  }
  waiting_.erase(it);
}

void Controller::tick(Millis now) {
  if (stopping_) return;
  for (ExpiredRendezvous& e : rendezvous_.expire(now)) {
    auto it = forming_.find({e.tenant, e.group});
    if (it == forming_.end()) continue;
    fail_waiters(it->second.waiters, to_grpc(e.error));
    forming_.erase(it);
  }
  Effects fx = core_.tick(now);
  // Installs some agent never answered (it is away, or lost the action): roll them back.
  for (auto [id, since] : std::map<uint32_t, Millis>(installing_since_)) {
    if (now - since < options_.install_timeout) continue;
    const Group* g = core_.find_group(id);
    if (!g || g->pending.empty()) {
      installing_since_.erase(id);
      continue;
    }
    const SwitchId sw = *g->pending.begin();
    auto failed = core_.fail(id, sw,
                             "its agent did not acknowledge within " +
                                 std::to_string(options_.install_timeout.count()) + " ms",
                             now);
    installing_since_.erase(id);
    if (failed.ok()) fx.append(std::move(failed.value()));
  }
  // Agents: close silent streams; forget switches away for longer than the grace period.
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    Session& s = it->second;
    const SwitchId id = it->first;
    ++it;
    if (s.channel && now - s.last_seen >= options_.heartbeat_timeout) {
      log_->warn("switch {}: no message from its agent for {} ms; closing its stream", id,
                 (now - s.last_seen).count());
      s.channel->close(grpc::Status(
          grpc::StatusCode::UNAVAILABLE,
          "no heartbeat for " + std::to_string(options_.heartbeat_timeout.count()) + " ms"));
      s.channel.reset();
      s.away_since = now;
      drop_actions_of(id);
    }
    if (!s.channel && options_.switch_grace > Millis{0} &&
        now - s.away_since >= options_.switch_grace) {
      log_->warn("switch {}: agent away for {} ms; removing the switch", id,
                 (now - s.away_since).count());
      sessions_.erase(id);
      auto removed = core_.remove_switch(id, now);
      if (removed.ok()) fx.append(std::move(removed.value()));
    }
  }
  if (!fx.actions.empty() || !fx.events.empty()) {
    dispatch(std::move(fx), now);
  } else if (dirty_) {
    persist();
  }
}

}  // namespace epic::manager::service
