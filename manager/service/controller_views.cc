// Controller: the operators' writes (tenants, links, rank attachments) and every read view.
#include "manager/service/controller.h"
#include "manager/service/convert_in.h"
#include "manager/service/convert_out.h"

namespace epic::manager::service {
uint64_t age(Millis now, Millis then) {
  return then.count() == 0 || now < then ? 0 : static_cast<uint64_t>((now - then).count());
}

grpc::Status Controller::set_tenant(const pb::SetTenantRequest& request, Millis now) {
  if (Status s = check_running(); !s.ok()) return to_grpc(s);
  if (!request.has_tenant()) return to_grpc(invalid("tenant", "required"));
  auto t = tenant_from("tenant", request.tenant());
  if (!t.ok()) return to_grpc(t.error());
  if (Status s = core_.set_tenant(t.value()); !s.ok()) return to_grpc(s);
  // A larger quota or partition may admit queued groups.
  dispatch(core_.tick(now), now);
  return grpc::Status::OK;
}

grpc::Status Controller::add_link(const pb::AddLinkRequest& request, Millis now) {
  if (Status s = check_running(); !s.ok()) return to_grpc(s);
  auto l = link_from("link", request.link());
  if (!l.ok()) return to_grpc(l.error());
  if (Status s = core_.add_link(l.value()); !s.ok()) return to_grpc(s);
  declared_links_.insert(l.value());  // re-applied if a switch is removed and comes back
  dispatch(core_.tick(now), now);
  return grpc::Status::OK;
}

grpc::Status Controller::attach_rank(const pb::AttachRankRequest& request, Millis now) {
  if (Status s = check_running(); !s.ok()) return to_grpc(s);
  auto r = attachment_from("rank", request.rank());
  if (!r.ok()) return to_grpc(r.error());
  if (Status s = core_.attach_rank(r.value()); !s.ok()) return to_grpc(s);
  declared_ranks_.push_back(r.value());
  dispatch(core_.tick(now), now);
  return grpc::Status::OK;
}

void Controller::list_switches(pb::ListSwitchesResponse& out, Millis now) const {
  for (const auto& [id, spec] : core_.topology().switches()) {
    pb::SwitchInfo info = switch_info(spec, core_);
    if (auto it = sessions_.find(id); it != sessions_.end()) {
      info.set_connected(it->second.channel != nullptr);
      info.set_last_seen_age_ms(age(now, it->second.last_seen));
      info.set_agent_peer(it->second.peer);
      info.set_agent_version(it->second.version);
    }
    *out.add_switches() = std::move(info);
  }
}

void Controller::list_groups(const pb::ListGroupsRequest& request,
                             pb::ListGroupsResponse& out) const {
  for (const auto& [id, g] : core_.groups()) {
    if (!request.tenant().empty() && g.request.tenant != request.tenant()) continue;
    if (request.group_id() != 0 && id != request.group_id()) continue;
    pb::GroupInfo info = group_info(g, core_);
    if (auto it = left_.find(id); it != left_.end()) {
      for (auto& r : *info.mutable_ranks()) r.set_left(it->second.count(r.rank()) > 0);
    }
    *out.add_groups() = std::move(info);
  }
  if (request.group_id() != 0) return;
  for (const auto& [key, f] : forming_) {
    if (!request.tenant().empty() && key.first != request.tenant()) continue;
    auto* p = out.add_pending();
    p->set_tenant(key.first);
    p->set_name(key.second);
    p->set_size(f.size);
    std::set<uint32_t> joined;
    for (const Waiter& w : f.waiters) joined.insert(w.rank);
    for (uint32_t r : joined) p->add_joined(r);
  }
}

void Controller::list_tenants(pb::ListTenantsResponse& out) const {
  for (const auto& [name, t] : core_.tenants()) *out.add_tenants() = to_proto(t);
}

void Controller::memory(pb::GetMemoryResponse& out) const {
  for (const auto& [id, book] : core_.ledger().books()) {
    *out.add_switches() = switch_memory(id, book, core_);
  }
  for (const auto& [name, t] : core_.tenants()) {
    auto* total = out.add_tenants();
    total->set_tenant(name);
    total->set_held_bytes(core_.ledger().held_total(name));
    uint32_t groups = 0;
    for (const auto& [id, g] : core_.groups()) groups += g.request.tenant == name ? 1 : 0;
    total->set_groups(groups);
  }
}

void Controller::topology(pb::GetTopologyResponse& out, Millis now) const {
  pb::ListSwitchesResponse sw;
  list_switches(sw, now);
  *out.mutable_switches() = std::move(*sw.mutable_switches());
  for (const Link& l : core_.topology().links()) *out.add_links() = to_proto(l);
  for (const auto& [ip, r] : core_.topology().ranks()) *out.add_ranks() = to_proto(r);
  for (const LinkLoad& x : core_.link_loads()) {
    pb::LinkLoad* p = out.add_link_loads();
    *p->mutable_link() = to_proto(x.link);
    p->set_measured(x.measured);
    p->set_a_to_b_bytes_per_s(x.a_to_b_bps);
    p->set_b_to_a_bytes_per_s(x.b_to_a_bps);
    p->set_load(x.load);
    p->set_hot(x.hot);
    p->set_a_queue_bytes(x.a_queue_bytes);
    p->set_b_queue_bytes(x.b_queue_bytes);
  }
}

}  // namespace epic::manager::service
