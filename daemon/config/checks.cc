#include "daemon/config/checks.h"

namespace epic::incd {

std::vector<SwitchPort> switch_ports(const std::vector<PortConfig>& ports) {
  std::vector<SwitchPort> out;
  out.reserve(ports.size());
  for (const PortConfig& p : ports) out.push_back({p.name, p.mtu});
  return out;
}

SwitchView switch_view(const std::vector<PortConfig>& ports, const SwitchConfig& sw) {
  std::vector<std::pair<uint32_t, vocab::MacAddr>> inc;
  for (const switching::IncAddress& a : sw.inc_addresses) inc.emplace_back(a.ipv4, a.mac);
  return SwitchView::of(switch_ports(ports), inc);
}

}  // namespace epic::incd
