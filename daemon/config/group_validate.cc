#include "daemon/config/group_validate.h"

#include <algorithm>

#include "proto/vocab/limits.h"
#include "proto/vocab/psn.h"

namespace epic::incd {
namespace {

using Msg = inc::v1::IncdConfig;

using vocab::kMaxRanks;
using vocab::kRoceOverheadBytes;

// Lists ranks "2, 3, 5" (at most `limit`, then "…").
std::string rank_list(const std::vector<uint32_t>& ranks, size_t limit = 8) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < limit; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(ranks[i]);
  }
  if (ranks.size() > limit) s += ", … (" + std::to_string(ranks.size()) + " in all)";
  return s;
}

}  // namespace

void GroupValidator::reserve(const engine::GroupConfig& g, const std::string& name) {
  for (size_t i = 0; i < g.children.size(); ++i) {
    const std::string at = name + " (" + index("children", i);
    local_keys_.emplace(std::pair{g.children[i].local.ipv4, g.children[i].local.qpn},
                        at + ".local)");
    remote_keys_.emplace(std::pair{g.children[i].remote.ipv4, g.children[i].remote.qpn},
                         at + ".remote)");
  }
  if (g.parent) {
    local_keys_.emplace(std::pair{g.parent->local.ipv4, g.parent->local.qpn},
                        name + " (parent.local)");
    remote_keys_.emplace(std::pair{g.parent->remote.ipv4, g.parent->remote.qpn},
                         name + " (parent.remote)");
  }
}

// Checks an edge endpoint. `local`: this switch's side (mac optional, ipv4 one of
// switch.inc_addresses); otherwise the peer's side (mac required, ipv4 not ours).
std::optional<engine::Endpoint> GroupValidator::endpoint(bool present, const Msg::Endpoint& e,
                                                         const std::string& path, bool local) {
  if (!present) {
    fail(path, local ? "required (ipv4, qpn; mac optional)" : "required (mac, ipv4, qpn)");
    return std::nullopt;
  }
  engine::Endpoint out;
  bool ok = true;
  const auto ip = check_ipv4(e.ipv4(), path + ".ipv4", errors_);
  if (ip) {
    out.ipv4 = *ip;
    const auto inc = sw_.inc_macs.find(*ip);
    if (local && inc == sw_.inc_macs.end()) {
      std::string known;
      for (const std::string& a : sw_.inc_address_text) {
        if (!known.empty()) known += ", ";
        known += a;
      }
      fail(path + ".ipv4", quote(e.ipv4()) + " is not one of switch.inc_addresses (" +
                               (known.empty() ? "none" : known) + ")");
      ok = false;
    } else if (!local && inc != sw_.inc_macs.end()) {
      fail(path + ".ipv4", quote(e.ipv4()) +
                               " is this switch's own inc address; remote is the other end "
                               "of the edge");
      ok = false;
    } else if (local && e.mac().empty()) {
      if (inc->second.first) {
        out.mac = *inc->second.first;
      } else {
        ok = false;  // the inc address's own MAC is bad, and reported there
      }
    }
  } else {
    ok = false;
  }
  if (!local || !e.mac().empty()) {
    if (const auto m = check_mac(e.mac(), path + ".mac", errors_)) {
      out.mac = *m;
    } else {
      ok = false;
    }
  }
  if (!e.has_qpn()) {
    fail(path + ".qpn", "required (a 24-bit queue pair number)");
    ok = false;
  } else if (e.qpn() > vocab::kQpnMask) {
    fail(path + ".qpn", hex(e.qpn()) + " does not fit in 24 bits (must be < 0x1000000)");
    ok = false;
  } else {
    out.qpn = e.qpn();
  }
  if (!ok) return std::nullopt;
  // Every (ipv4, qpn) names one RC queue pair, at one end of one edge.
  auto& seen = local ? local_keys_ : remote_keys_;
  if (const auto [it, fresh] = seen.emplace(std::pair{out.ipv4, out.qpn}, path); !fresh) {
    fail(path, "(" + e.ipv4() + ", qpn " + hex(out.qpn) + ") is already used by " + it->second +
                   (local ? "; the switch finds a group's edge by its local (ipv4, qpn), so "
                            "each must be unique"
                          : "; a queue pair connects to exactly one peer"));
    return std::nullopt;
  }
  return out;
}

std::optional<engine::GroupConfig> GroupValidator::check(const Msg::Group& g,
                                                         const std::string& path) {
  const size_t errors_before = errors_.size();
  engine::GroupConfig gc;
  if (!g.has_id()) {
    fail(path + ".id", "required");
  } else {
    gc.group_id = g.id();
  }
  bool ranks_ok = false;
  if (!g.has_ranks()) {
    fail(path + ".ranks", "required (ranks in the whole group)");
  } else if (g.ranks() == 0 || g.ranks() > kMaxRanks) {
    fail(path + ".ranks",
         std::to_string(g.ranks()) + " is outside 1.." + std::to_string(kMaxRanks));
  } else {
    gc.num_ranks = static_cast<uint16_t>(g.ranks());
    ranks_ok = true;
  }
  if (g.initial_psn() > vocab::kPsnMask) {
    fail(path + ".initial_psn",
         hex(g.initial_psn()) + " does not fit in 24 bits (must be < 0x1000000)");
  }
  gc.initial_psn = g.initial_psn();
  if (g.has_window()) {
    gc.window = g.window();
    if (!vocab::valid_window(gc.window)) {
      fail(path + ".window", std::to_string(gc.window) + " is not a power of two in 1.." +
                                 std::to_string(vocab::kMaxWindow) +
                                 " (the engine keeps "
                                 "2*window slots indexed by psn mod 2*window)");
    }
  }
  bool pmtu_ok = true;
  if (g.has_pmtu()) {
    const uint32_t p = g.pmtu();
    pmtu_ok = vocab::valid_pmtu(p);
    if (!pmtu_ok) {
      fail(path + ".pmtu",
           std::to_string(p) + " is not one of " + std::string(vocab::kPmtuChoices));
    } else {
      gc.pmtu = static_cast<uint16_t>(p);
    }
  }

  std::vector<uint16_t> used_ports;
  if (g.children().empty() || g.children_size() > static_cast<int>(engine::kMaxChildren)) {
    fail(path + ".children", "a group has 1.." + std::to_string(engine::kMaxChildren) +
                                 " children at a switch, got " + std::to_string(g.children_size()));
  }
  std::vector<int> owner(ranks_ok ? gc.num_ranks : 0, -1);  // child covering each rank
  for (int ci = 0; ci < g.children_size(); ++ci) {
    const Msg::Child& ch = g.children(ci);
    const std::string cpath = index(path + ".children", static_cast<size_t>(ci));
    engine::ChildLink link;
    // The ranks below a child are checked apart from its port and endpoints, so that a bad
    // port does not also leave its ranks "not covered".
    bool ok = true;
    bool port_ok = true;
    if (const auto port = port_ref(sw_, ch.port(), cpath + ".port", errors_)) {
      link.port = *port;
      used_ports.push_back(*port);
    } else {
      port_ok = false;
    }
    std::string below_path;
    uint32_t first = 0, count = 0;
    switch (ch.below_case()) {
      case Msg::Child::kRank:
        below_path = cpath + ".rank";
        link.is_rank = true;
        first = ch.rank();
        count = 1;
        break;
      case Msg::Child::kRankRange: {
        below_path = cpath + ".rank_range";
        link.is_rank = false;
        const Msg::RankRange& rr = ch.rank_range();
        if (!rr.has_first()) {
          fail(below_path + ".first", "required");
          ok = false;
        }
        if (!rr.has_count()) {
          fail(below_path + ".count", "required");
          ok = false;
        } else if (rr.count() == 0) {
          fail(below_path + ".count", "must be >= 1");
          ok = false;
        }
        first = rr.first();
        count = rr.count();
        break;
      }
      case Msg::Child::BELOW_NOT_SET:
        fail(cpath, "set exactly one of rank (a rank NIC) or rank_range (a lower switch)");
        ok = false;
        break;
    }
    if (ok && ranks_ok) {
      const uint64_t end = uint64_t{first} + count;
      if (end > gc.num_ranks) {
        fail(below_path,
             (link.is_rank ? "rank " + std::to_string(first)
                           : "ranks [" + std::to_string(first) + ", " + std::to_string(end) + ")") +
                 (link.is_rank ? " is" : " are") + " outside [0, " + std::to_string(gc.num_ranks) +
                 ") (the group has " + std::to_string(gc.num_ranks) + " ranks)");
        ok = false;
      } else {
        std::vector<uint32_t> twice;
        int other = -1;
        for (uint32_t r = first; r < end; ++r) {
          if (owner[r] >= 0) {
            twice.push_back(r);
            if (other < 0) other = owner[r];
          } else {
            owner[r] = ci;
          }
        }
        if (!twice.empty()) {
          fail(below_path, std::string(twice.size() == 1 ? "rank " : "ranks ") + rank_list(twice) +
                               (twice.size() == 1 ? " is" : " are") + " already covered by " +
                               index(path + ".children", static_cast<size_t>(other)));
          ok = false;
        }
        link.first_rank = static_cast<uint16_t>(first);
        link.rank_count = static_cast<uint16_t>(count);
      }
    }
    const auto remote = endpoint(ch.has_remote(), ch.remote(), cpath + ".remote", false);
    const auto local = endpoint(ch.has_local(), ch.local(), cpath + ".local", true);
    if (remote && local && ok && port_ok) {
      link.remote = *remote;
      link.local = *local;
      gc.children.push_back(link);
    }
  }

  if (g.has_parent()) {
    const Msg::Parent& p = g.parent();
    const std::string ppath = path + ".parent";
    engine::ParentLink link;
    const auto port = port_ref(sw_, p.port(), ppath + ".port", errors_);
    if (port) used_ports.push_back(*port);
    const auto remote = endpoint(p.has_remote(), p.remote(), ppath + ".remote", false);
    const auto local = endpoint(p.has_local(), p.local(), ppath + ".local", true);
    if (port && remote && local) {
      link.port = *port;
      link.remote = *remote;
      link.local = *local;
      gc.parent = link;
    }
  } else if (ranks_ok) {
    std::vector<uint32_t> missing;
    for (uint32_t r = 0; r < owner.size(); ++r) {
      if (owner[r] < 0) missing.push_back(r);
    }
    if (!missing.empty() && !g.children().empty()) {
      fail(path + ".children",
           std::string(missing.size() == 1 ? "rank " : "ranks ") + rank_list(missing) +
               (missing.size() == 1 ? " is" : " are") +
               " not covered by any child; at the root switch (no parent) the children "
               "must cover all " +
               std::to_string(gc.num_ranks) + " ranks");
    }
  }

  if (pmtu_ok) {
    std::sort(used_ports.begin(), used_ports.end());
    used_ports.erase(std::unique(used_ports.begin(), used_ports.end()), used_ports.end());
    for (const uint16_t port : used_ports) {
      const PortConfig& pc = sw_.ports[port];
      if (uint32_t{gc.pmtu} + kRoceOverheadBytes > pc.mtu) {
        fail(path + ".pmtu",
             std::to_string(gc.pmtu) + " + " + std::to_string(kRoceOverheadBytes) +
                 " bytes of RoCEv2 overhead (Ethernet, IPv4, UDP, BTH, RETH/ImmDt, ICRC, "
                 "with margin) exceeds mtu " +
                 std::to_string(pc.mtu) + " of port " + quote(pc.name) + " (" +
                 index("ports", port) + ")");
      }
    }
  }
  if (errors_.size() != errors_before) return std::nullopt;
  return gc;
}

}  // namespace epic::incd
