#include "agent/core/heartbeat.h"

#include "proto/vocab/addr.h"
#include "proto/vocab/counters.h"

namespace epic::agent {

inc::v1::AgentMessage make_heartbeat(const TelemetrySource& source) {
  inc::v1::AgentMessage m;
  inc::v1::Heartbeat& h = *m.mutable_heartbeat();
  for (const GroupReport& g : source.groups()) {
    inc::v1::GroupCounters* c = h.add_groups();
    c->set_group_id(g.group_id);
    c->set_last_progress_age_ms(g.last_progress_age_ms);
#define EPIC_SET(name, help) c->set_##name(g.stats.name);
    EPIC_GROUP_COUNTERS(EPIC_SET)
#undef EPIC_SET
    for (const vocab::ChildTiming& t : g.children) {
      inc::v1::ChildTiming* p = c->add_children();
      p->set_child(t.child);
      p->set_is_rank(t.is_rank);
      p->set_first_rank(t.first_rank);
      p->set_rank_count(t.rank_count);
      p->set_last(t.last);
      p->set_lag_samples(t.lag_samples);
      p->set_lag_p50_ns(t.lag_p50_ns);
      p->set_lag_p99_ns(t.lag_p99_ns);
    }
  }
  for (const PortReport& port : source.ports()) {
    inc::v1::PortLoad* l = h.add_ports();
    l->set_port(port.port);
    l->set_tx_bytes(port.tx_bytes);
    l->set_tx_frames(port.tx_frames);
    l->set_tx_dropped(port.tx_dropped);
    l->set_queue_bytes(port.queue_bytes);
  }
  for (const HostReport& host : source.hosts()) {
    inc::v1::LearnedHost* l = h.add_hosts();
    l->set_ipv4(vocab::format_ipv4(host.ipv4));
    l->set_mac(vocab::format_mac(host.mac));
    l->set_port(host.port);
  }
  return m;
}

}  // namespace epic::agent
