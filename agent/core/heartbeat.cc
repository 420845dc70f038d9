#include "agent/core/heartbeat.h"

#include "datapath/wire/addr.h"

namespace epic::agent {

inc::v1::AgentMessage make_heartbeat(const TelemetrySource& source) {
  inc::v1::AgentMessage m;
  inc::v1::Heartbeat& h = *m.mutable_heartbeat();
  for (const GroupReport& g : source.groups()) {
    inc::v1::GroupCounters* c = h.add_groups();
    c->set_group_id(g.group_id);
    c->set_aggregations_completed(g.stats.aggregations_completed);
    c->set_retransmissions(g.stats.retransmissions);
    c->set_last_progress_age_ms(g.last_progress_age_ms);
    c->set_rx_frames(g.stats.rx_frames);
    c->set_upward_accepted(g.stats.upward_accepted);
    c->set_downward_accepted(g.stats.downward_accepted);
    c->set_results_replicated(g.stats.results_replicated);
    c->set_acks_from_ranks(g.stats.acks_from_ranks);
    c->set_dropped(g.stats.dropped);
  }
  for (const HostReport& host : source.hosts()) {
    inc::v1::LearnedHost* l = h.add_hosts();
    l->set_ipv4(wire::format_ipv4(host.ipv4));
    l->set_mac(wire::format_mac(host.mac));
    l->set_port(host.port);
  }
  return m;
}

}  // namespace epic::agent
