// Controller: the telemetry view — every switch's per-group counters as its agent reported
// them, and the job-wide straggler figure of each installed group (docs/telemetry.md).
#include <span>

#include "manager/core/job_telemetry.h"
#include "manager/service/controller.h"

namespace epic::manager::service {
namespace {

vocab::ChildTiming timing_from(const pb::ChildTiming& p) {
  vocab::ChildTiming t;
  t.child = static_cast<uint16_t>(p.child());
  t.is_rank = p.is_rank();
  t.first_rank = static_cast<uint16_t>(p.first_rank());
  t.rank_count = static_cast<uint16_t>(p.rank_count());
  t.last = p.last();
  t.lag_samples = p.lag_samples();
  t.lag_p50_ns = p.lag_p50_ns();
  t.lag_p99_ns = p.lag_p99_ns();
  return t;
}

}  // namespace

pb::JobTelemetry Controller::job_telemetry(const Group& g) const {
  pb::JobTelemetry out;
  out.set_group_id(g.id);
  out.set_tenant(g.request.tenant);
  out.set_name(g.request.name);
  std::map<SwitchId, SwitchGroupFigures> local;
  for (const TreeNode& n : g.tree.nodes) {
    pb::SwitchGroupTelemetry* st = out.add_switches();
    st->set_switch_id(n.switch_id);
    const auto s = sessions_.find(n.switch_id);
    if (s == sessions_.end()) continue;
    for (const pb::GroupCounters& c : s->second.last_heartbeat.groups()) {
      if (c.group_id() != g.id) continue;
      SwitchGroupFigures f;
      f.result_bytes = c.result_bytes();
      f.collectives_completed = c.collectives_completed();
      if (const auto gp = s->second.goodput.find(g.id); gp != s->second.goodput.end()) {
        f.rate_bytes_per_s = gp->second.rate;
      }
      for (const pb::ChildTiming& t : c.children()) f.children.push_back(timing_from(t));
      st->set_reported(true);
      st->set_result_bytes(f.result_bytes);
      st->set_collectives_completed(f.collectives_completed);
      st->set_rate_known(f.rate_bytes_per_s.has_value());
      st->set_rate_bytes_per_s(f.rate_bytes_per_s.value_or(0));
      *st->mutable_children() = c.children();
      const vocab::SlowestChild slow = vocab::slowest_child(f.children);
      if (slow.child >= 0) {
        st->set_slowest_child(vocab::child_name(f.children[static_cast<size_t>(slow.child)]));
      }
      st->set_slowest_share(slow.share);
      st->set_slots_timed(slow.slots);
      local.emplace(n.switch_id, std::move(f));
      break;
    }
  }
  const JobFigures job = combine_job(g.tree, local, &core_.policy().link_speeds);
  out.set_rate_known(job.rate_bytes_per_s.has_value());
  out.set_rate_bytes_per_s(job.rate_bytes_per_s.value_or(0));
  out.set_rate_switch(job.rate_switch);
  out.set_collectives_completed(job.collectives_completed);
  out.set_slowest(job.slowest);
  out.set_pinned(job.pinned);
  out.set_verdict(job.verdict);
  for (const PaceHop& h : job.path) {
    pb::PaceHop* p = out.add_path();
    p->set_switch_id(h.switch_id);
    p->set_child(h.child);
    p->set_share(h.share);
    p->set_slots(h.slots);
    p->set_threshold(h.threshold);
    p->set_pinned(h.pinned);
    p->set_lag_p50_ns(h.lag_p50_ns);
  }
  return out;
}

grpc::Status Controller::telemetry(const pb::GetTelemetryRequest& request,
                                   pb::GetTelemetryResponse& out, Millis now) const {
  const uint32_t only = request.group_id();
  if (only != 0) {
    const Group* g = core_.find_group(only);
    if (g == nullptr) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no group " + std::to_string(only));
    }
    if (g->state != GroupState::kInstalled) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "group " + std::to_string(only) + " is " +
                              std::string(group_state_name(g->state)) +
                              ": telemetry exists only while it is installed");
    }
  }
  for (const auto& [id, s] : sessions_) {
    auto* t = out.add_switches();
    t->set_switch_id(id);
    t->set_connected(s.channel != nullptr);
    t->set_last_seen_age_ms(age(now, s.last_seen));
    for (const pb::GroupCounters& c : s.last_heartbeat.groups()) {
      if (only == 0 || c.group_id() == only) *t->add_groups() = c;
    }
    t->set_learned_hosts(static_cast<uint32_t>(s.last_heartbeat.hosts_size()));
  }
  for (const auto& [id, g] : core_.groups()) {
    if (g.state != GroupState::kInstalled || (only != 0 && id != only)) continue;
    *out.add_jobs() = job_telemetry(g);
  }
  return grpc::Status::OK;
}

}  // namespace epic::manager::service
