#include "manager/core/topology.h"

#include <algorithm>

#include "manager/core/limits.h"

namespace epic::manager {
namespace {

// Names appear in messages, the store and metrics labels: keep them plain.
bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '/';
  });
}

Error invalid(std::string m) { return make_error(ErrorCode::kInvalidArgument, std::move(m)); }

}  // namespace

std::string to_string(const Link& l) { return to_string(l.a) + " - " + to_string(l.b); }

Status Topology::add_switch(SwitchSpec spec) {
  const std::string who = "switch '" + spec.id + "'";
  if (!valid_name(spec.id)) {
    return invalid("switch id '" + spec.id + "' is not a name (1-64 of [A-Za-z0-9._/-])");
  }
  if (switches_.count(spec.id)) {
    return make_error(ErrorCode::kAlreadyExists, who + " already exists");
  }
  if (!is_unicast_ipv4(spec.inc_ipv4)) {
    return invalid(who + ": INC address " + vocab::format_ipv4(spec.inc_ipv4) +
                   " is not a unicast host address");
  }
  if (!is_unicast_mac(spec.inc_mac)) {
    return invalid(who + ": INC MAC " + vocab::format_mac(spec.inc_mac) + " is not a unicast MAC");
  }
  if (auto it = std::find_if(switches_.begin(), switches_.end(),
                             [&](const auto& kv) { return kv.second.inc_ipv4 == spec.inc_ipv4; });
      it != switches_.end()) {
    return make_error(ErrorCode::kAlreadyExists, who + ": INC address " +
                                                     vocab::format_ipv4(spec.inc_ipv4) +
                                                     " is already switch '" + it->first + "''s");
  }
  if (const auto* r = find_rank(spec.inc_ipv4)) {
    return make_error(ErrorCode::kAlreadyExists,
                      who + ": INC address " + vocab::format_ipv4(spec.inc_ipv4) +
                          " is a rank address behind " + to_string(r->at));
  }
  if (spec.ports.empty()) return invalid(who + " has no ports");
  std::set<std::string> names;
  for (const auto& p : spec.ports) {
    if (!valid_name(p.name)) {
      return invalid(who + ": port name '" + p.name + "' is not a name (1-64 of [A-Za-z0-9._/-])");
    }
    if (!names.insert(p.name).second) {
      return invalid(who + ": port '" + p.name + "' is listed twice");
    }
    if (p.mtu < kMinPortMtu || p.mtu > kMaxPortMtu) {
      return invalid(who + ": port '" + p.name + "' mtu " + std::to_string(p.mtu) + " is outside " +
                     std::to_string(kMinPortMtu) + ".." + std::to_string(kMaxPortMtu));
    }
  }
  if (!valid_window(spec.max_window)) {
    return invalid(who + ": max_window " + std::to_string(spec.max_window) +
                   " is not a power of two in 1.." + std::to_string(vocab::kMaxWindow));
  }
  if (!valid_pmtu(spec.max_pmtu)) {
    return invalid(who + ": max_pmtu " + std::to_string(spec.max_pmtu) + " is not one of " +
                   std::string(vocab::kPmtuChoices));
  }
  switches_.emplace(spec.id, std::move(spec));
  return {};
}

Status Topology::check_port_free(const SwitchPort& p) const {
  if (const SwitchPort* peer = link_peer(p)) {
    Link l = link_between(p, *peer);
    return make_error(ErrorCode::kAlreadyExists,
                      "port " + to_string(p) + " already carries link " + to_string(l));
  }
  return {};
}

Status Topology::add_link(Link link) {
  const std::string what = "link " + to_string(link);
  for (const SwitchPort* end : {&link.a, &link.b}) {
    if (!find_switch(end->switch_id)) {
      return make_error(ErrorCode::kNotFound, what + ": unknown switch '" + end->switch_id + "'");
    }
    if (!find_port(*end)) {
      return make_error(ErrorCode::kNotFound,
                        what + ": switch '" + end->switch_id + "' has no port '" + end->port + "'");
    }
  }
  if (link.a.switch_id == link.b.switch_id) {
    return invalid(what + ": both ends are on switch '" + link.a.switch_id + "'");
  }
  for (const SwitchPort* end : {&link.a, &link.b}) {
    if (Status s = check_port_free(*end); !s.ok())
      return make_error(s.error().code, what + ": " + s.error().message);
    for (const auto& [ip, r] : ranks_) {
      if (r.at == *end) {
        return make_error(ErrorCode::kAlreadyExists, what + ": port " + to_string(*end) +
                                                         " already has rank address " +
                                                         vocab::format_ipv4(ip) + " behind it");
      }
    }
  }
  if (link.b < link.a) std::swap(link.a, link.b);
  peer_[link.a] = link.b;
  peer_[link.b] = link.a;
  links_.insert(std::move(link));
  return {};
}

Status Topology::attach_rank(RankAttachment rank) {
  const std::string who = "rank address " + vocab::format_ipv4(rank.ipv4);
  if (!is_unicast_ipv4(rank.ipv4)) return invalid(who + " is not a unicast host address");
  if (!is_unicast_mac(rank.mac)) {
    return invalid(who + ": MAC " + vocab::format_mac(rank.mac) + " is not a unicast MAC");
  }
  if (!find_switch(rank.at.switch_id)) {
    return make_error(ErrorCode::kNotFound, who + ": unknown switch '" + rank.at.switch_id + "'");
  }
  if (!find_port(rank.at)) {
    return make_error(ErrorCode::kNotFound, who + ": switch '" + rank.at.switch_id +
                                                "' has no port '" + rank.at.port + "'");
  }
  if (const auto* r = find_rank(rank.ipv4)) {
    return make_error(ErrorCode::kAlreadyExists,
                      who + " is already attached behind " + to_string(r->at));
  }
  if (auto it = std::find_if(switches_.begin(), switches_.end(),
                             [&](const auto& kv) { return kv.second.inc_ipv4 == rank.ipv4; });
      it != switches_.end()) {
    return make_error(ErrorCode::kAlreadyExists,
                      who + " is the INC address of switch '" + it->first + "'");
  }
  if (Status s = check_port_free(rank.at); !s.ok()) {
    return make_error(s.error().code, who + ": " + s.error().message);
  }
  ranks_.emplace(rank.ipv4, std::move(rank));
  return {};
}

Status Topology::remove_switch(const SwitchId& id) {
  if (!switches_.erase(id)) {
    return make_error(ErrorCode::kNotFound, "unknown switch '" + id + "'");
  }
  for (auto it = links_.begin(); it != links_.end();) {
    if (it->a.switch_id == id || it->b.switch_id == id) {
      peer_.erase(it->a);
      peer_.erase(it->b);
      it = links_.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(ranks_, [&](const auto& kv) { return kv.second.at.switch_id == id; });
  return {};
}

const SwitchSpec* Topology::find_switch(const SwitchId& id) const {
  auto it = switches_.find(id);
  return it == switches_.end() ? nullptr : &it->second;
}

const PortSpec* Topology::find_port(const SwitchPort& p) const {
  const SwitchSpec* sw = find_switch(p.switch_id);
  if (!sw) return nullptr;
  for (const auto& port : sw->ports) {
    if (port.name == p.port) return &port;
  }
  return nullptr;
}

const RankAttachment* Topology::find_rank(uint32_t ipv4) const {
  auto it = ranks_.find(ipv4);
  return it == ranks_.end() ? nullptr : &it->second;
}

const SwitchPort* Topology::link_peer(const SwitchPort& p) const {
  auto it = peer_.find(p);
  return it == peer_.end() ? nullptr : &it->second;
}

std::vector<Neighbour> Topology::neighbours(const SwitchId& id) const {
  std::vector<Neighbour> out;
  for (auto it = peer_.lower_bound(SwitchPort{id, ""});
       it != peer_.end() && it->first.switch_id == id; ++it) {
    out.push_back({it->first.port, it->second});
  }
  return out;
}

}  // namespace epic::manager
