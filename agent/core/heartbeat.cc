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
