#include "manager/core/group_validate.h"

#include <algorithm>
#include <set>

namespace epic::manager {
namespace {

Error invalid(std::string m) { return make_error(ErrorCode::kInvalidArgument, std::move(m)); }

std::string q(const std::string& s) { return "'" + s + "'"; }

std::string endpoint_text(uint32_t ipv4, uint32_t qpn) {
  return vocab::format_ipv4(ipv4) + " qpn " + vocab::format_qpn(qpn);
}

std::string group_text(const Group& g) {
  return "group " + std::to_string(g.id) + " (" + q(g.request.name) + " of tenant " +
         q(g.request.tenant) + ", " + std::string(group_state_name(g.state)) + ")";
}

bool valid_group_name(const std::string& s) {
  return !s.empty() && s.size() <= 128 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7F; });
}

}  // namespace

Result<std::vector<RankPlacement>> validate_request(const GroupRequest& r, const Topology& topology,
                                                    const std::map<std::string, Tenant>& tenants,
                                                    const std::map<uint32_t, Group>& live,
                                                    uint32_t self) {
  auto tenant_it = tenants.find(r.tenant);
  if (tenant_it == tenants.end()) {
    return make_error(ErrorCode::kNotFound, "unknown tenant " + q(r.tenant));
  }
  const Quota& quota = tenant_it->second.quota;
  if (!valid_group_name(r.name)) {
    return invalid("group name " + q(r.name) +
                   " must be 1-128 printable characters without spaces");
  }
  if (r.window != 0 && !valid_window(r.window)) {
    return invalid("window " + std::to_string(r.window) + " is not a power of two in 1.." +
                   std::to_string(vocab::kMaxWindow) + " (or unset: sized by the manager)");
  }
  if (r.pmtu != 0 && !valid_pmtu(r.pmtu)) {
    return invalid("pmtu " + std::to_string(r.pmtu) + " is not one of " +
                   std::string(vocab::kPmtuChoices) + " (or unset: chosen by the manager)");
  }
  const size_t size = r.ranks.size();
  if (size == 0 || size > kMaxRanks) {
    return invalid("a group has 1..65535 ranks; this one has " + std::to_string(size));
  }
  std::vector<const RankRequest*> by_rank(size, nullptr);
  for (const auto& rr : r.ranks) {
    const std::string who = "rank " + std::to_string(rr.rank);
    if (rr.rank >= size) {
      return invalid(who + " is out of range: the group has " + std::to_string(size) +
                     " ranks (0.." + std::to_string(size - 1) + ")");
    }
    if (by_rank[rr.rank]) return invalid(who + " is listed twice");
    by_rank[rr.rank] = &rr;
    if (!is_unicast_ipv4(rr.ipv4)) {
      return invalid(who + ": " + vocab::format_ipv4(rr.ipv4) + " is not a unicast host address");
    }
    if (rr.qpn >= kQpnLimit)
      return invalid(who + ": QPN " + vocab::format_qpn(rr.qpn) + " is not 24-bit");
    if (rr.qpn < 2) {
      return invalid(who + ": QPN " + std::to_string(rr.qpn) +
                     " is reserved (QP0 and QP1 are the management QPs)");
    }
    if (rr.mac && !is_unicast_mac(*rr.mac)) {
      return invalid(who + ": MAC " + vocab::format_mac(*rr.mac) + " is not a unicast MAC");
    }
  }
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> endpoints;
  for (const RankRequest* rr : by_rank) {
    auto [it, fresh] = endpoints.emplace(std::make_pair(rr->ipv4, rr->qpn), rr->rank);
    if (!fresh) {
      return invalid("ranks " + std::to_string(it->second) + " and " + std::to_string(rr->rank) +
                     " both use endpoint " + endpoint_text(rr->ipv4, rr->qpn));
    }
  }
  if (quota.max_ranks_per_group && size > *quota.max_ranks_per_group) {
    return make_error(ErrorCode::kFailedPrecondition,
                      "the group has " + std::to_string(size) + " ranks; tenant " + q(r.tenant) +
                          " allows at most " + std::to_string(*quota.max_ranks_per_group) +
                          " per group");
  }
  uint32_t tenant_groups = 0;
  for (const auto& [id, g] : live) {
    if (id == self) continue;
    if (g.request.tenant == r.tenant) ++tenant_groups;
    if (g.request.tenant == r.tenant && g.request.name == r.name) {
      return make_error(
          ErrorCode::kAlreadyExists,
          "group " + q(r.name) + " of tenant " + q(r.tenant) + " already exists: " + group_text(g));
    }
    if (g.state == GroupState::kBroken) continue;  // its contexts are gone
    for (const auto& other : g.request.ranks) {
      auto it = endpoints.find({other.ipv4, other.qpn});
      if (it != endpoints.end()) {
        return make_error(ErrorCode::kAlreadyExists,
                          "rank " + std::to_string(it->second) + "'s endpoint " +
                              endpoint_text(other.ipv4, other.qpn) + " is already rank " +
                              std::to_string(other.rank) + " of " + group_text(g));
      }
    }
  }
  if (quota.max_groups && tenant_groups >= *quota.max_groups) {
    return make_error(ErrorCode::kResourceExhausted, "tenant " + q(r.tenant) + " already has " +
                                                         std::to_string(tenant_groups) +
                                                         " groups, its quota");
  }
  std::vector<RankPlacement> out;
  out.reserve(size);
  for (const RankRequest* rr : by_rank) {
    const std::string who =
        "rank " + std::to_string(rr->rank) + " (" + vocab::format_ipv4(rr->ipv4) + ")";
    const RankAttachment* at = topology.find_rank(rr->ipv4);
    if (!at)
      return make_error(ErrorCode::kNotFound, who + ": no switch port is known for this address");
    if (rr->mac && *rr->mac != at->mac) {
      return invalid(who + ": MAC " + vocab::format_mac(*rr->mac) + " differs from " +
                     vocab::format_mac(at->mac) + " known behind " + to_string(at->at));
    }
    out.push_back({rr->rank, at->at, Endpoint{rr->ipv4, at->mac, rr->qpn}});
  }
  return out;
}

Status check_capabilities(const IncTree& tree, const Topology& topology, uint32_t window,
                          uint32_t pmtu, uint32_t partial_bytes) {
  const uint32_t need_mtu = pmtu + kRoceOverheadBytes;
  const uint32_t link_mtu = std::max(pmtu, partial_bytes) + kRoceOverheadBytes;
  auto check_port = [&](const SwitchPort& p, const std::string& use, bool link) -> Status {
    const PortSpec* port = topology.find_port(p);
    if (!port) return make_error(ErrorCode::kNotFound, "unknown port " + to_string(p));
    if (port->mtu < need_mtu) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "pmtu " + std::to_string(pmtu) + " needs an IP MTU of " +
                            std::to_string(need_mtu) + " but port " + to_string(p) + " (" + use +
                            ") has mtu " + std::to_string(port->mtu));
    }
    if (link && port->mtu < link_mtu) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "an exact partial of up to " + std::to_string(partial_bytes) +
                            " bytes (docs/arithmetic.md) needs an IP MTU of " +
                            std::to_string(link_mtu) + " but port " + to_string(p) + " (" + use +
                            ") has mtu " + std::to_string(port->mtu) +
                            ": give the switch-to-switch links jumbo frames, or the group a "
                            "smaller pmtu");
    }
    return {};
  };
  for (const auto& n : tree.nodes) {
    const SwitchSpec* sw = topology.find_switch(n.switch_id);
    if (!sw) return make_error(ErrorCode::kNotFound, "unknown switch " + q(n.switch_id));
    if (pmtu > sw->max_pmtu) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "pmtu " + std::to_string(pmtu) + " exceeds the max_pmtu " +
                            std::to_string(sw->max_pmtu) + " of switch " + q(n.switch_id));
    }
    if (window > sw->max_window) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "window " + std::to_string(window) + " exceeds the max_window " +
                            std::to_string(sw->max_window) + " of switch " + q(n.switch_id));
    }
    for (const auto& c : n.children) {
      const std::string use = c.is_rank ? "rank " + std::to_string(c.first_rank)
                                        : "link to " + q(c.child_port.switch_id);
      if (Status s = check_port({n.switch_id, c.port}, use, !c.is_rank); !s.ok()) return s;
      if (!c.is_rank) {
        if (Status s = check_port(c.child_port, "link to " + q(n.switch_id), true); !s.ok()) {
          return s;
        }
      }
    }
  }
  return {};
}

}  // namespace epic::manager
