// Controller: the IncAgents' streams — registration and re-synchronisation, heartbeats
// (activity, Temporal Mux resume, learned hosts), and the answers to actions.
#include <spdlog/spdlog.h>

#include "manager/core/context_check.h"
#include "manager/service/authorize.h"
#include "manager/service/controller.h"
#include "manager/service/convert_in.h"
#include "manager/service/convert_out.h"
#include "proto/vocab/addr.h"

namespace epic::manager::service {

void Controller::agent_opened(const ChannelPtr& channel) {
  if (stopping_) {
    channel->close(grpc::Status(grpc::StatusCode::UNAVAILABLE, "inc-manager is shutting down"));
    return;
  }
  if (!channel->caller()) {
    log_->warn("agent stream from {} refused: {}", channel->peer(), channel->identity_error());
    channel->close(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, channel->identity_error()));
    return;
  }
  if (grpc::Status s = authorize_agent_stream(*channel->caller()); !s.ok()) {
    log_->warn("agent stream from {} refused: {}", channel->peer(), s.error_message());
    channel->close(s);
    return;
  }
  if (const size_t open = open_agent_streams(); open >= options_.max_agent_streams) {
    log_->warn("agent stream from {} refused: {} streams open, the cap is {}", channel->peer(),
               open, options_.max_agent_streams);
    channel->close(
        grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                     "agent streams: " + std::to_string(open) + " are open, the cap is " +
                         std::to_string(options_.max_agent_streams) + " (--max-agent-streams)"));
    return;
  }
  unregistered_.insert(channel);
}

size_t Controller::open_agent_streams() const {
  size_t n = unregistered_.size();
  for (const auto& [id, s] : sessions_) n += s.channel != nullptr;
  return n;
}

std::optional<SwitchId> Controller::switch_of(const ChannelPtr& channel) const {
  for (const auto& [id, s] : sessions_) {
    if (s.channel == channel) return id;
  }
  return std::nullopt;
}

void Controller::agent_closed(const ChannelPtr& channel, Millis now) {
  unregistered_.erase(channel);
  auto id = switch_of(channel);
  if (!id) return;
  Session& s = sessions_.at(*id);
  s.channel.reset();
  s.away_since = now;
  drop_actions_of(*id);
  log_->warn("switch {}: agent disconnected; its groups stay installed for up to {} ms", *id,
             options_.switch_grace.count());
}

// Actions in flight to an agent that went away are settled by its next registration's
// re-synchronisation (or by the install timeout), not by answers on a new stream.
void Controller::drop_actions_of(const SwitchId& id) {
  std::erase_if(sent_, [&](const auto& kv) { return kv.second.switch_id == id; });
}

void Controller::agent_message(const ChannelPtr& channel, const pb::AgentMessage& m, Millis now) {
  if (stopping_) return;
  if (unregistered_.count(channel)) {
    if (!m.has_registration()) {
      unregistered_.erase(channel);
      channel->close(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                  "the first message of an agent stream must be a Register"));
      return;
    }
    unregistered_.erase(channel);
    return on_register(channel, m.registration(), now);
  }
  auto id = switch_of(channel);
  if (!id) return;  // replaced by a newer stream of the same switch
  sessions_.at(*id).last_seen = now;
  switch (m.msg_case()) {
    case pb::AgentMessage::kRegistration:
      channel->close(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                  "Register may only be the first message of a stream"));
      return agent_closed(channel, now);
    case pb::AgentMessage::kHeartbeat:
      return on_heartbeat(*id, m.heartbeat(), now);
    case pb::AgentMessage::kAck:
      return on_answer(*id, m.ack().action_id(), nullptr, now);
    case pb::AgentMessage::kFail:
      return on_answer(*id, m.fail().action_id(), &m.fail().reason(), now);
    case pb::AgentMessage::MSG_NOT_SET:
      return;
  }
}

void Controller::on_register(const ChannelPtr& channel, const pb::Register& reg, Millis now) {
  auto spec = switch_spec_from(reg);
  if (!spec.ok()) return channel->close(to_grpc(spec.error()));
  const SwitchId id = spec.value().id;
  if (grpc::Status denied = authorize_switch(*channel->caller(), id); !denied.ok()) {
    log_->warn("agent from {} refused: {}", channel->peer(), denied.error_message());
    return channel->close(denied);
  }
  Effects fx;
  if (const SwitchSpec* known = core_.topology().find_switch(id)) {
    if (!(*known == spec.value())) {
      // Ports, address or capacity changed: the old view of the switch, and every group on
      // it, is void.
      log_->warn("switch {} re-registered with a different description; its groups break", id);
      auto removed = core_.remove_switch(id, now);
      if (!removed.ok()) return channel->close(to_grpc(removed.error()));
      fx.append(std::move(removed.value()));
    }
  }
  if (!core_.topology().find_switch(id)) {
    if (Status s = core_.add_switch(spec.value()); !s.ok()) {
      channel->close(to_grpc(s));
      return dispatch(std::move(fx), now);
    }
  }
  Session& s = sessions_[id];
  if (s.channel && s.channel != channel) {
    s.channel->close(grpc::Status(
        grpc::StatusCode::ABORTED,
        "replaced by a newer registration of switch " + id + " from " + channel->peer()));
    drop_actions_of(id);
  }
  s.channel = channel;
  s.last_seen = now;
  s.peer = channel->peer();
  s.version = reg.agent_version();
  log_->info("switch {} registered from {} ({} port(s), {} bytes of memory, {} installed group(s))",
             id, s.peer, reg.ports_size(), reg.capacity_bytes(), reg.installed_size());
  pb::ManagerMessage hello;
  hello.mutable_registered()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(options_.heartbeat_interval.count()));
  hello.mutable_registered()->set_heartbeat_timeout_ms(
      static_cast<uint32_t>(options_.heartbeat_timeout.count()));
  channel->send(hello);
  apply_declared();
  resync(id, reg);
  dispatch(std::move(fx), now);
}

// Tells the agent which groups to keep and sends what brings each kept context in line with
// the manager's: an install for a missing or different context, a detach for a reclaimed
// group whose slots are still attached. Installs the core waits for are re-sent as such.
void Controller::resync(const SwitchId& id, const pb::Register& reg) {
  std::map<uint32_t, const pb::InstalledGroup*> has;
  for (const pb::InstalledGroup& g : reg.installed()) has[g.group_id()] = &g;
  pb::ManagerMessage keep;
  keep.mutable_resync();                               // sent even when empty: "remove everything"
  std::vector<std::pair<SwitchAction, bool>> actions;  // (action, repair)
  for (const auto& [group_id, group] : core_.groups()) {
    const uint32_t gid = group_id;  // lambdas cannot capture structured bindings (C++20)
    const Group& g = group;
    if (g.state == GroupState::kQueued || g.state == GroupState::kBroken) continue;
    auto ctx = context_on(g, id);
    if (!ctx) continue;
    keep.mutable_resync()->add_keep_group_ids(gid);
    const pb::InstalledGroup* mine = has.count(gid) ? has[gid] : nullptr;
    const bool same = mine && same_context(mine->context(), to_proto(*ctx));
    const bool pending = g.pending.count(id) > 0;
    const auto action = [&](ActionKind kind, uint64_t bytes) {
      return SwitchAction{.kind = kind,
                          .switch_id = id,
                          .group_id = gid,
                          .context = kind == ActionKind::kInstallContext ? ctx : std::nullopt,
                          .memory_bytes = bytes};
    };
    // The agent refuses to replace a context: one that differs from ours goes first.
    if (mine && !same) actions.emplace_back(action(ActionKind::kRemoveContext, 0), true);
    if (g.state == GroupState::kInstalling && pending) {
      // The core waits for this switch: its answer completes the operation.
      const bool attach = g.pending_op == PendingOp::kAttach && same;
      actions.emplace_back(attach ? action(ActionKind::kAttachSlots, ctx->memory_bytes)
                                  : action(ActionKind::kInstallContext, ctx->memory_bytes),
                           false);
      continue;
    }
    if (g.state == GroupState::kReclaimed) {
      if (!same) actions.emplace_back(action(ActionKind::kInstallContext, 0), true);
      if (!same || mine->slots_attached()) {
        actions.emplace_back(action(ActionKind::kDetachSlots, 0), true);
      }
      continue;
    }
    if (!same || !mine->slots_attached()) {
      actions.emplace_back(action(ActionKind::kInstallContext, ctx->memory_bytes), true);
    }
  }
  keep_foreign_groups(id, reg, *keep.mutable_resync());
  sessions_.at(id).channel->send(keep);
  for (auto& [a, repair] : actions) send_action(a, repair);
}

// Groups the agent serves that we have no record of. Removed only when we know they are gone:
// our store was loaded and issued the id (below next_group_id) and nobody kept it as foreign.
// Anything else — a manager started without its state, an id we never issued — is kept and
// held as foreign (IncManager::keep_foreign), so a lost state never wipes running jobs.
void Controller::keep_foreign_groups(const SwitchId& id, const pb::Register& reg,
                                     pb::Resync& keep) {
  for (const pb::InstalledGroup& g : reg.installed()) {
    const uint32_t gid = g.group_id();
    if (gid == 0 || core_.find_group(gid)) continue;
    const bool known_gone = store_loaded_ && gid < core_.next_group_id() && !core_.is_foreign(gid);
    if (known_gone) continue;
    std::vector<uint32_t> qpns;
    for (const auto& c : g.context().children()) qpns.push_back(c.local().qpn());
    if (g.context().has_parent()) qpns.push_back(g.context().parent().local().qpn());
    if (!core_.is_foreign(gid) || !core_.foreign().at(gid).count(id)) {
      log_->warn(
          "switch {} serves group {}, which this manager has no record of ({}): kept, "
          "not removed; `incctl destroy {}` removes it",
          id, gid, store_loaded_ ? "an id it never issued" : "it started without its state", gid);
    }
    core_.keep_foreign(gid, id, qpns);
    keep.add_keep_group_ids(gid);
  }
}

void Controller::send_action(const SwitchAction& a, bool repair) {
  const uint64_t action_id = next_action_id_++;
  auto it = sessions_.find(a.switch_id);
  if (it == sessions_.end() || !it->second.channel) {
    log_->info("switch {} is away: action {} for group {} waits for its re-registration",
               a.switch_id, action_id, a.group_id);
    return;
  }
  sent_[action_id] = {a.switch_id, a.group_id, a.kind, repair};
  if (a.kind == ActionKind::kInstallContext && a.context) {
    const SwitchSpec* spec = core_.topology().find_switch(a.switch_id);
    std::string err = spec ? context_errors(*a.context, *spec) : "";
    if (!err.empty()) {
      err = "inc-manager refused to send an invalid context: " + err;
      log_->error("switch {}: action {} for group {}: {}", a.switch_id, action_id, a.group_id, err);
      refused_.emplace_back(a.switch_id, action_id, std::move(err));
      return;
    }
  }
  pb::ManagerMessage m;
  *m.mutable_action() = to_proto(a, action_id);
  it->second.channel->send(m);
}

void Controller::on_answer(const SwitchId& id, uint64_t action_id, const std::string* failure,
                           Millis now) {
  auto it = sent_.find(action_id);
  if (it == sent_.end() || it->second.switch_id != id) {
    log_->warn("switch {}: answer to unknown action {}", id, action_id);
    return;
  }
  const SentAction a = it->second;
  sent_.erase(it);
  const bool awaited =
      !a.repair && (a.kind == ActionKind::kInstallContext || a.kind == ActionKind::kAttachSlots);
  if (failure) {
    log_->warn("switch {}: action {} on group {} failed: {}", id, action_id, a.group_id, *failure);
  }
  if (!awaited) return;
  auto fx = failure ? core_.fail(a.group_id, id, *failure, now) : core_.ack(a.group_id, id, now);
  if (!fx.ok()) {
    log_->debug("switch {}: answer to action {}: {}", id, action_id, fx.error().to_string());
    return;
  }
  dispatch(std::move(fx.value()), now);
}

void Controller::Session::RateSample::update(uint64_t now_bytes, Millis now) {
  // A counter that went back (incd restarted) starts a new series.
  if (at.count() > 0 && now > at && now_bytes >= bytes) {
    rate =
        static_cast<double>(now_bytes - bytes) * 1000.0 / static_cast<double>((now - at).count());
  }
  bytes = now_bytes;
  at = now;
}

void Controller::on_heartbeat(const SwitchId& id, const pb::Heartbeat& beat, Millis now) {
  Session& s = sessions_.at(id);
  s.last_heartbeat = beat;
  // Port loads for load-aware placement: the rates of the ports that have one yet.
  std::map<std::string, double> rates;
  std::map<std::string, uint64_t> queues;
  for (const pb::PortLoad& p : beat.ports()) {
    Session::RateSample& r = s.port_tx[p.port()];
    r.update(p.tx_bytes(), now);
    if (r.rate) rates[p.port()] = *r.rate;
    if (p.queue_bytes() > 0) queues[p.port()] = p.queue_bytes();
  }
  if (beat.ports_size() > 0) {
    core_.report_port_rates(id, rates);
    core_.report_port_queues(id, queues);
  }
  Effects fx;
  for (const pb::GroupCounters& c : beat.groups()) {
    const Group* g = core_.find_group(c.group_id());
    if (!g) continue;
    const uint64_t progress = c.upward_accepted() + c.aggregations_completed() +
                              c.downward_accepted() + c.acks_from_ranks();
    const bool moved = s.progress.count(c.group_id()) && s.progress[c.group_id()] != progress;
    const bool knocked =
        s.rx_frames.count(c.group_id()) && s.rx_frames[c.group_id()] != c.rx_frames();
    s.progress[c.group_id()] = progress;
    s.rx_frames[c.group_id()] = c.rx_frames();
    s.goodput[c.group_id()].update(c.result_bytes(), now);
    if (g->state == GroupState::kInstalled && moved) {
      core_.report_activity(c.group_id(), now);
      dirty_ = true;
    } else if (g->state == GroupState::kReclaimed && knocked) {
      // Ranks sent to the switch again: they want INC back. Resume if memory allows.
      auto resumed = core_.resume(c.group_id(), now);
      if (resumed.ok()) fx.append(std::move(resumed.value()));
    }
  }
  // Hosts the switch learned are rank addresses behind its ports, unless the operator placed
  // them already or the port carries a switch-to-switch link.
  bool attached = false;
  for (const pb::LearnedHost& h : beat.hosts()) {
    auto ip = vocab::parse_ipv4(h.ipv4());
    auto mac = vocab::parse_mac(h.mac());
    if (!ip || !mac || core_.topology().find_rank(*ip)) continue;
    const SwitchPort at{id, h.port()};
    if (!core_.topology().find_port(at) || core_.topology().link_peer(at)) continue;
    attached = core_.attach_rank(RankAttachment{*ip, *mac, at}).ok() || attached;
  }
  if (attached) dirty_ = true;
  if (!fx.actions.empty() || !fx.events.empty()) dispatch(std::move(fx), now);
}

void Controller::apply_declared() {
  for (const auto& [name, wanted] : declared_reservations_) {
    auto it = core_.tenants().find(name);
    if (it == core_.tenants().end()) continue;  // removed by an operator since
    Tenant t = it->second;
    bool changed = false;
    for (const auto& [sw, bytes] : wanted) {
      if (!core_.topology().find_switch(sw) || t.reserved.count(sw)) continue;
      t.reserved[sw] = bytes;
      changed = true;
    }
    if (!changed) continue;
    if (Status s = core_.set_tenant(t); !s.ok()) {
      log_->warn("declared partitions of tenant {}: {}", name, s.error().to_string());
    } else {
      dirty_ = true;
    }
  }
  for (const Link& l : declared_links_) {
    if (core_.topology().links().count(l)) continue;
    const auto& sw = core_.topology().switches();
    if (!sw.count(l.a.switch_id) || !sw.count(l.b.switch_id)) continue;
    if (Status s = core_.add_link(l); !s.ok()) {
      log_->warn("declared link {}: {}", to_string(l), s.error().to_string());
    } else {
      dirty_ = true;
    }
  }
  for (const RankAttachment& r : declared_ranks_) {
    const RankAttachment* known = core_.topology().find_rank(r.ipv4);
    if (known || !core_.topology().find_switch(r.at.switch_id)) continue;
    if (Status s = core_.attach_rank(r); !s.ok()) {
      log_->warn("declared rank {}: {}", vocab::format_ipv4(r.ipv4), s.error().to_string());
    } else {
      dirty_ = true;
    }
  }
}

}  // namespace epic::manager::service
