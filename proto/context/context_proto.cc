#include "proto/context/context_proto.h"

#include <algorithm>
#include <vector>

namespace epic::vocab {
namespace {

using Msg = inc::v1::GroupContext;

}  // namespace

std::optional<GroupMode> mode_from_proto(int value) {
  switch (value) {
    case inc::v1::GROUP_MODE_UNSPECIFIED:
    case inc::v1::GROUP_MODE_2:
      return GroupMode::kMode2;
    case inc::v1::GROUP_MODE_3:
      return GroupMode::kMode3;
    default:
      return std::nullopt;
  }
}

std::string proto_mode_error(int value) {
  if (mode_from_proto(value)) return "";
  return std::to_string(value) + " is not a mode (2: Mode-II, 3: Mode-III; unset: Mode-II)";
}

void write_pkey(const GroupContext& g, GroupContextMsg& out) {
  out.clear_pkey();
  if (g.pkey) out.set_pkey(*g.pkey);
}

void write_dscp(const GroupContext& g, GroupContextMsg& out) { out.set_dscp(g.dscp); }

std::optional<AccumProfile> profile_from_proto(int value) {
  switch (value) {
    case inc::v1::ACCUM_UNSPECIFIED:
    case inc::v1::ACCUM_FP32_ARRIVAL:
      return AccumProfile::kFp32Arrival;
    case inc::v1::ACCUM_KULISCH_FIXED:
      return AccumProfile::kKulischFixed;
    default:
      return std::nullopt;
  }
}

std::optional<std::optional<DType>> dtype_from_proto(int value) {
  // Built with emplace: gcc 12 -O3 sees a nested optional returned from a
  // temporary as maybe-uninitialised (-Werror), although it is not.
  std::optional<std::optional<DType>> out;
  if (value == inc::v1::ELEMENT_UNSPECIFIED) {
    out.emplace();
    return out;
  }
  if (value < 1 || value > 255) return out;
  const auto t = dtype_from_code(static_cast<uint8_t>(value - 1));
  if (t) out.emplace(*t);
  return out;
}

int dtype_to_proto(std::optional<DType> t) { return t ? static_cast<int>(*t) + 1 : 0; }

std::string proto_profile_error(int value) {
  if (profile_from_proto(value)) return "";
  return std::to_string(value) +
         " is not an accumulator profile (0: fp32_arrival, 1: kulisch_fixed)";
}

std::string proto_dtype_error(int value) {
  if (dtype_from_proto(value)) return "";
  return std::to_string(value) +
         " is not an element type (1 int32, 2 fp32, 3 fp16, 4 bf16, 5 int8, 6 fp8_e4m3, "
         "7 fp8_e5m2; unset: none named)";
}

void write_arith(const GroupContext& g, GroupContextMsg& out) {
  out.set_accumulator(g.arith.profile == AccumProfile::kKulischFixed ? inc::v1::ACCUM_KULISCH_FIXED
                                                                     : inc::v1::ACCUM_UNSPECIFIED);
  out.set_dtype(static_cast<inc::v1::ElementType>(dtype_to_proto(g.arith.dtype)));
}

void write_mode(const GroupContext& g, GroupContextMsg& out) {
  out.clear_mode();
  out.clear_hop_timeout_us();
  if (g.mode != GroupMode::kMode3) return;
  out.set_mode(inc::v1::GROUP_MODE_3);
  out.set_hop_timeout_us(g.hop_timeout_us);
}

std::optional<uint32_t> check_ipv4(const std::string& s, const std::string& path,
                                   ContextErrors& errors) {
  if (s.empty()) {
    errors.push_back({path, "required (dotted quad, e.g. 10.77.0.1)"});
    return std::nullopt;
  }
  const std::optional<uint32_t> a = parse_ipv4(s);
  if (!a) {
    errors.push_back({path, quote(s) + " is not an IPv4 address (dotted quad, e.g. 10.77.0.1)"});
    return std::nullopt;
  }
  if (std::string err = ipv4_error(*a); !err.empty()) {
    errors.push_back({path, std::move(err)});
    return std::nullopt;
  }
  return a;
}

std::optional<MacAddr> check_mac(const std::string& s, const std::string& path,
                                 ContextErrors& errors) {
  if (s.empty()) {
    errors.push_back({path, "required (e.g. 02:00:00:00:00:01)"});
    return std::nullopt;
  }
  const std::optional<MacAddr> m = parse_mac(s);
  if (!m) {
    errors.push_back({path, quote(s) +
                                " is not a MAC address (six hex bytes separated by colons, e.g. "
                                "02:00:00:00:00:01)"});
    return std::nullopt;
  }
  if (std::string err = mac_error(*m); !err.empty()) {
    errors.push_back({path, std::move(err)});
    return std::nullopt;
  }
  return m;
}

std::optional<uint16_t> port_ref(const SwitchView& sw, const std::string& name,
                                 const std::string& path, ContextErrors& errors) {
  if (name.empty()) {
    errors.push_back({path, "required (the name of one of ports)"});
    return std::nullopt;
  }
  if (const auto it = sw.port_of.find(name); it != sw.port_of.end()) {
    return static_cast<uint16_t>(it->second);
  }
  std::string known;
  for (const SwitchPort& p : sw.ports) {
    if (p.name.empty()) continue;
    if (!known.empty()) known += ", ";
    known += p.name;
  }
  errors.push_back({path, "no port named " + quote(name) +
                              " (ports: " + (known.empty() ? "none" : known) + ")"});
  return std::nullopt;
}

void ContextReader::reserve(const GroupContext& g, const std::string& name) {
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

// Reads an edge endpoint. `local`: this switch's side (mac optional, ipv4 one of
// switch.inc_addresses); otherwise the peer's side (mac required, ipv4 not ours).
std::optional<Endpoint> ContextReader::endpoint(bool present, const Msg::Endpoint& e,
                                                const std::string& path, bool local) {
  if (!present) {
    fail(path, local ? "required (ipv4, qpn; mac optional)" : "required (mac, ipv4, qpn)");
    return std::nullopt;
  }
  Endpoint out;
  bool ok = true;
  const auto ip = check_ipv4(e.ipv4(), path + ".ipv4", errors_);
  if (ip) {
    out.ipv4 = *ip;
    const auto inc = sw_.inc_macs.find(*ip);
    if (std::string err = edge_side_error(sw_, *ip, e.ipv4(), local); !err.empty()) {
      fail(path + ".ipv4", std::move(err));
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
  } else if (std::string err = qpn_error(e.qpn()); !err.empty()) {
    fail(path + ".qpn", std::move(err));
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

std::optional<GroupContext> ContextReader::read(const Msg& g, const std::string& path) {
  const size_t errors_before = errors_.size();
  GroupContext gc;
  if (!g.has_id()) {
    fail(path + ".id", "required");
  } else {
    gc.group_id = g.id();
  }
  bool ranks_ok = false;
  if (!g.has_ranks()) {
    fail(path + ".ranks", "required (ranks in the whole group)");
  } else if (std::string err = ranks_error(g.ranks()); !err.empty()) {
    fail(path + ".ranks", std::move(err));
  } else {
    gc.num_ranks = static_cast<uint16_t>(g.ranks());
    ranks_ok = true;
  }
  fail(path + ".initial_psn", psn_error(g.initial_psn()));
  gc.initial_psn = g.initial_psn();
  if (g.has_window()) {
    gc.window = g.window();
    fail(path + ".window", window_error(gc.window));
  }
  bool pmtu_ok = true;
  if (g.has_pmtu()) {
    const std::string err = pmtu_error(g.pmtu());
    pmtu_ok = err.empty();
    if (pmtu_ok) gc.pmtu = static_cast<uint16_t>(g.pmtu());
    fail(path + ".pmtu", err);
  }
  const std::optional<GroupMode> mode = mode_from_proto(g.mode());
  fail(path + ".mode", proto_mode_error(g.mode()));
  if (mode) gc.mode = *mode;
  if (g.has_hop_timeout_us() && mode) {
    if (*mode != GroupMode::kMode3) {
      fail(path + ".hop_timeout_us",
           "set, but the group is Mode-II, which keeps no per-hop timer (set mode: 3 for "
           "Mode-III, or leave hop_timeout_us out)");
    } else {
      gc.hop_timeout_us = g.hop_timeout_us();
      fail(path + ".hop_timeout_us", hop_timeout_error(gc.hop_timeout_us));
    }
  }
  if (g.has_pkey()) {
    fail(path + ".pkey", pkey_error(g.pkey()));
    if (pkey_valid(g.pkey())) gc.pkey = static_cast<uint16_t>(g.pkey());
  }
  fail(path + ".dscp", dscp_error(g.dscp()));
  if (g.dscp() <= kMaxDscp) gc.dscp = static_cast<uint8_t>(g.dscp());
  fail(path + ".accumulator", proto_profile_error(g.accumulator()));
  if (const auto p = profile_from_proto(g.accumulator())) gc.arith.profile = *p;
  fail(path + ".dtype", proto_dtype_error(g.dtype()));
  if (const auto t = dtype_from_proto(g.dtype())) gc.arith.dtype = *t;

  std::vector<uint16_t> used_ports;
  bool whole = true;  // every child and the parent read (a bad INC address MAC is reported there)
  fail(path + ".children", children_count_error(static_cast<size_t>(g.children_size())));
  const std::string children_path = path + ".children";
  RankCover cover(ranks_ok ? gc.num_ranks : 0);
  for (int ci = 0; ci < g.children_size(); ++ci) {
    const Msg::Child& ch = g.children(ci);
    const std::string cpath = index(children_path, static_cast<size_t>(ci));
    ChildLink link;
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
      if (std::string err =
              cover.add(static_cast<size_t>(ci), first, count, link.is_rank, children_path);
          !err.empty()) {
        fail(below_path, std::move(err));
        ok = false;
      } else {
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
    } else {
      whole = false;
    }
  }

  if (g.has_parent()) {
    const Msg::Parent& p = g.parent();
    const std::string ppath = path + ".parent";
    ParentLink link;
    const auto port = port_ref(sw_, p.port(), ppath + ".port", errors_);
    if (port) used_ports.push_back(*port);
    const auto remote = endpoint(p.has_remote(), p.remote(), ppath + ".remote", false);
    const auto local = endpoint(p.has_local(), p.local(), ppath + ".local", true);
    if (port && remote && local) {
      link.port = *port;
      link.remote = *remote;
      link.local = *local;
      gc.parent = link;
    } else {
      whole = false;
    }
  } else if (ranks_ok && !g.children().empty()) {
    fail(children_path, cover.missing());
  }

  if (pmtu_ok) {
    std::sort(used_ports.begin(), used_ports.end());
    used_ports.erase(std::unique(used_ports.begin(), used_ports.end()), used_ports.end());
    for (const uint16_t port : used_ports) fail(path + ".pmtu", port_mtu_error(gc.pmtu, sw_, port));
  }
  if (errors_.size() != errors_before || !whole) return std::nullopt;
  // Every rule was applied field by field above; the value must now pass the value checks as a
  // whole (what the engine and inc-manager apply to it), or reading and checking disagree.
  check_context(gc, path, errors_, &sw_);
  if (errors_.size() != errors_before) return std::nullopt;
  return gc;
}

}  // namespace epic::vocab
