#include "manager/core/context_check.h"

#include <optional>
#include <vector>

#include "proto/context/context_validate.h"

namespace epic::manager {
namespace {

vocab::Endpoint value(const Endpoint& e) { return {e.mac, e.ipv4, e.qpn}; }

}  // namespace

std::string context_errors(const SwitchContext& c, const SwitchSpec& sw) {
  std::vector<vocab::SwitchPort> ports;
  for (const PortSpec& p : sw.ports) ports.push_back({p.name, p.mtu});
  const vocab::SwitchView view =
      vocab::SwitchView::of(std::move(ports), {{sw.inc_ipv4, sw.inc_mac}});
  vocab::ContextErrors errors;
  const auto port_id = [&](const std::string& name, const std::string& path) -> uint16_t {
    if (const auto it = view.port_of.find(name); it != view.port_of.end()) {
      return static_cast<uint16_t>(it->second);
    }
    errors.push_back(
        {path, "no port named " + vocab::quote(name) + " on switch " + vocab::quote(sw.id)});
    return 0;
  };
  vocab::GroupContext g;
  g.group_id = c.group_id;
  if (const std::string err = vocab::ranks_error(c.num_ranks); !err.empty()) {
    errors.push_back({"context.ranks", err});
  }
  g.num_ranks = static_cast<uint16_t>(c.num_ranks);
  g.initial_psn = c.initial_psn;
  g.window = c.window;
  if (const std::string err = vocab::pmtu_error(c.pmtu); !err.empty()) {
    errors.push_back({"context.pmtu", err});
  }
  g.pmtu = static_cast<uint16_t>(c.pmtu);
  g.mode = c.mode;
  g.hop_timeout_us = c.hop_timeout_us;
  g.pkey = c.pkey;
  g.arith = c.arith;
  g.dscp = c.dscp;
  if (const std::string err = vocab::dscp_error(c.dscp); !err.empty()) {
    errors.push_back({"context.dscp", err});
  }
  for (size_t i = 0; i < c.children.size(); ++i) {
    const TreeChild& t = c.children[i];
    vocab::ChildLink l;
    l.port = port_id(t.port, vocab::index("context.children", i) + ".port");
    l.is_rank = t.is_rank;
    l.first_rank = static_cast<uint16_t>(t.first_rank);
    l.rank_count = static_cast<uint16_t>(t.rank_count);
    l.remote = value(t.remote);
    l.local = value(t.local);
    g.children.push_back(l);
  }
  if (c.parent) {
    g.parent = vocab::ParentLink{value(c.parent->remote), value(c.parent->local),
                                 port_id(c.parent->port, "context.parent.port")};
  }
  if (errors.empty()) vocab::check_context(g, "context", errors, &view);
  if (errors.empty() && c.memory_bytes != 0) {
    if (const std::string err = vocab::grant_error(g, c.memory_bytes); !err.empty()) {
      errors.push_back({"context.memory_bytes", err});
    }
  }
  return vocab::join(errors);
}

}  // namespace epic::manager
