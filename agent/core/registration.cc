#include "agent/core/registration.h"

#include "proto/vocab/addr.h"

namespace epic::agent {

inc::v1::AgentMessage make_register(const SwitchIdentity& id, const ActionApplier& applier) {
  inc::v1::AgentMessage m;
  inc::v1::Register& r = *m.mutable_registration();
  r.set_switch_id(id.switch_id);
  r.set_inc_ipv4(vocab::format_ipv4(id.inc.ipv4));
  r.set_inc_mac(vocab::format_mac(id.inc.mac));
  for (const auto& p : id.ports) {
    inc::v1::Port* port = r.add_ports();
    port->set_name(p.name);
    port->set_mtu(p.mtu);
  }
  const GroupTable& t = applier.table();
  r.set_capacity_bytes(t.manager_capacity());
  r.set_max_window(t.limits().max_window);
  r.set_max_pmtu(t.limits().max_pmtu);
  applier.list_installed(r);
  r.set_agent_version(id.agent_version);
  return m;
}

}  // namespace epic::agent
