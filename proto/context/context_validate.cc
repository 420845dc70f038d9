#include "proto/context/context_validate.h"

#include <algorithm>
#include <cstdio>

#include "proto/vocab/memory.h"
#include "proto/vocab/partial.h"
#include "proto/vocab/psn.h"

namespace epic::vocab {
namespace {

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

std::string field(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

std::string fits_24_bits(uint32_t v) {
  return v > kPsnMask ? hex(v) + " does not fit in 24 bits (must be < 0x1000000)" : "";
}

// A child's ranks [first, first + count) inside a group of `ranks`.
std::string range_error(uint32_t first, uint32_t count, bool is_rank, size_t ranks) {
  const uint64_t end = uint64_t{first} + count;
  if (end <= ranks) return "";
  return (is_rank ? "rank " + std::to_string(first) + " is"
                  : "ranks [" + std::to_string(first) + ", " + std::to_string(end) + ") are") +
         " outside [0, " + std::to_string(ranks) + ") (the group has " + std::to_string(ranks) +
         " ranks)";
}

void add(ContextErrors& errors, const std::string& path, std::string message) {
  if (!message.empty()) errors.push_back({path, std::move(message)});
}

void check_endpoint(const Endpoint& e, const std::string& path, ContextErrors& errors,
                    const SwitchView* sw, bool local) {
  add(errors, path + ".qpn", qpn_error(e.qpn));
  add(errors, path + ".mac", mac_error(e.mac));
  if (std::string err = ipv4_error(e.ipv4); !err.empty()) {
    add(errors, path + ".ipv4", std::move(err));
    return;
  }
  if (sw != nullptr) {
    add(errors, path + ".ipv4", edge_side_error(*sw, e.ipv4, format_ipv4(e.ipv4), local));
  }
}

}  // namespace

std::string ContextError::to_string() const {
  return path.empty() ? message : path + ": " + message;
}

std::string join(const ContextErrors& errors) {
  std::string s;
  for (const auto& e : errors) s += (s.empty() ? "" : "; ") + e.to_string();
  return s;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

SwitchView SwitchView::of(std::vector<SwitchPort> ports,
                          const std::vector<std::pair<uint32_t, MacAddr>>& inc_addresses) {
  SwitchView v;
  v.ports = std::move(ports);
  for (size_t i = 0; i < v.ports.size(); ++i) {
    if (!v.ports[i].name.empty()) v.port_of.emplace(v.ports[i].name, i);
  }
  for (size_t i = 0; i < inc_addresses.size(); ++i) {
    const auto& [ipv4, mac] = inc_addresses[i];
    v.inc_macs.emplace(ipv4, std::pair{std::optional{mac}, static_cast<int>(i)});
    v.inc_address_text.push_back(format_ipv4(ipv4));
  }
  return v;
}

std::string ranks_error(uint32_t ranks) {
  if (ranks >= 1 && ranks <= kMaxRanks) return "";
  return std::to_string(ranks) + " is outside 1.." + std::to_string(kMaxRanks);
}

std::string psn_error(uint32_t psn) { return fits_24_bits(psn); }

std::string qpn_error(uint32_t qpn) { return fits_24_bits(qpn); }

std::string window_error(uint32_t window) {
  if (valid_window(window)) return "";
  // 2*MW must divide 2^24 so that "PSN mod 2*MW" stays continuous across the PSN wrap.
  return std::to_string(window) + " is not a power of two in 1.." + std::to_string(kMaxWindow) +
         " (the engine keeps 2*window slots indexed by psn mod 2*window)";
}

std::string pmtu_error(uint32_t pmtu) {
  if (valid_pmtu(pmtu)) return "";
  return std::to_string(pmtu) + " is not one of " + std::string(kPmtuChoices);
}

std::string children_count_error(size_t children) {
  if (children >= 1 && children <= kMaxChildren) return "";
  return "a group has 1.." + std::to_string(kMaxChildren) + " children at a switch, got " +
         std::to_string(children);
}

std::string mode_error(GroupMode mode) {
  if (mode == GroupMode::kMode2 || mode == GroupMode::kMode3) return "";
  return std::to_string(static_cast<unsigned>(mode)) + " is not a mode (2: Mode-II, 3: Mode-III)";
}

std::string hop_timeout_error(uint32_t us) {
  if (valid_hop_timeout_us(us)) return "";
  return std::to_string(us) + " us is outside " + std::to_string(kMinHopTimeoutUs) + ".." +
         std::to_string(kMaxHopTimeoutUs) + " us (Mode-III's per-hop ACK timeout)";
}

std::string mode3_ranks_error(const GroupContext& g) {
  if (g.mode != GroupMode::kMode3 || g.children.empty()) return "";
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // (first, end)
  for (const ChildLink& c : g.children) {
    ranges.emplace_back(c.first_rank, uint32_t{c.first_rank} + c.rank_count);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first != ranges[i - 1].second) {
      return "in Mode-III the children's ranks must be one contiguous range (ranks " +
             std::to_string(ranges[i - 1].second) + ".." + std::to_string(ranges[i].first - 1) +
             " lie between two children): each hop numbers what its subtree sends";
    }
  }
  return "";
}

std::string_view mode_name(GroupMode mode) {
  switch (mode) {
    case GroupMode::kMode2:
      return "Mode-II";
    case GroupMode::kMode3:
      return "Mode-III";
  }
  return "?";
}

std::string ipv4_error(uint32_t ipv4) {
  if (is_unicast_ipv4(ipv4)) return "";
  return quote(format_ipv4(ipv4)) + " is not a unicast host address";
}

std::string mac_error(const MacAddr& mac) {
  if ((mac[0] & 1) != 0) {
    return quote(format_mac(mac)) +
           " is a multicast MAC (the low bit of the first byte is set); a unicast MAC is "
           "required";
  }
  if (mac == MacAddr{})
    return quote(format_mac(mac)) + " is the all-zero MAC; a unicast MAC is required";
  return "";
}

std::string rank_child_count_error(uint32_t rank_count) {
  if (rank_count == 1) return "";
  return "a rank child is one rank NIC; rank_count " + std::to_string(rank_count) + " must be 1";
}

std::string edge_side_error(const SwitchView& sw, uint32_t ipv4, std::string_view text,
                            bool local) {
  const bool inc = sw.inc_macs.contains(ipv4);
  if (local && !inc) {
    std::string known;
    for (const std::string& a : sw.inc_address_text) known += (known.empty() ? "" : ", ") + a;
    return quote(text) + " is not one of switch.inc_addresses (" +
           (known.empty() ? "none" : known) + ")";
  }
  if (!local && inc) {
    return quote(text) + " is this switch's own inc address; remote is the other end of the edge";
  }
  return "";
}

std::string port_mtu_error(uint32_t pmtu, const SwitchView& sw, size_t id) {
  const SwitchPort& p = sw.ports[id];
  if (pmtu + kRoceOverheadBytes <= p.mtu) return "";
  return std::to_string(pmtu) + " + " + std::to_string(kRoceOverheadBytes) +
         " bytes of RoCEv2 overhead (Ethernet, IPv4, UDP, BTH, RETH/ImmDt, ICRC, with margin) "
         "exceeds mtu " +
         std::to_string(p.mtu) + " of port " + quote(p.name) + " (" + index("ports", id) + ")";
}

std::string grant_error(const GroupContext& g, uint64_t memory_bytes) {
  const uint64_t need = group_memory_bytes(g.window, g.pmtu, g.arith, g.num_ranks);
  if (memory_bytes == need) return "";
  const bool plain = g.arith == GroupArith{};
  return "memory_bytes " + std::to_string(memory_bytes) + " granted, but window " +
         std::to_string(g.window) + " and pmtu " + std::to_string(g.pmtu) +
         (plain ? std::string()
                : " with accumulator " + std::string(to_string(g.arith.profile)) +
                      (g.arith.dtype ? " " + std::string(to_string(*g.arith.dtype)) : "")) +
         " need exactly " + std::to_string(need) + " (2*window slots of " +
         std::to_string(slot_bytes(g.pmtu, g.arith, g.num_ranks)) + " bytes)";
}

// A switch-to-switch port of an exact group must carry the largest exact partial.
static std::string partial_mtu_error(const GroupContext& g, const SwitchView& sw, uint16_t id) {
  const uint32_t partial = max_group_partial_bytes(g.pmtu, g.arith, g.num_ranks);
  if (partial == 0 || id >= sw.ports.size()) return "";
  const uint32_t need = partial + kRoceOverheadBytes;
  const auto& p = sw.ports[id];
  if (need <= p.mtu) return "";
  return "an exact partial of a " + std::to_string(g.pmtu) + "-byte packet of this group (" +
         std::string(to_string(g.arith.profile)) + ", dtype " +
         (g.arith.dtype ? std::string(to_string(*g.arith.dtype)) : "unset") + ") takes up to " +
         std::to_string(need) + " bytes with headers (docs/arithmetic.md), more than mtu " +
         std::to_string(p.mtu) + " of port " + quote(p.name) +
         ": give the switch-to-switch ports jumbo frames, or the group a smaller pmtu";
}

std::string RankCover::add(size_t child, uint32_t first, uint32_t count, bool is_rank,
                           const std::string& children_path) {
  const uint64_t end = uint64_t{first} + count;
  if (std::string err = range_error(first, count, is_rank, owner_.size()); !err.empty()) {
    return err;
  }
  std::vector<uint32_t> twice;
  int other = -1;
  for (uint32_t r = first; r < end; ++r) {
    if (owner_[r] >= 0) {
      twice.push_back(r);
      if (other < 0) other = owner_[r];
    } else {
      owner_[r] = static_cast<int>(child);
    }
  }
  if (twice.empty()) return "";
  return std::string(twice.size() == 1 ? "rank " : "ranks ") + rank_list(twice) +
         (twice.size() == 1 ? " is" : " are") + " already covered by " +
         index(children_path, static_cast<size_t>(other));
}

std::string RankCover::missing() const {
  std::vector<uint32_t> missing;
  for (uint32_t r = 0; r < owner_.size(); ++r) {
    if (owner_[r] < 0) missing.push_back(r);
  }
  if (missing.empty()) return "";
  return std::string(missing.size() == 1 ? "rank " : "ranks ") + rank_list(missing) +
         (missing.size() == 1 ? " is" : " are") +
         " not covered by any child; at the root switch (no parent) the children must cover "
         "all " +
         std::to_string(owner_.size()) + " ranks";
}

void check_shape(const GroupContext& g, const std::string& path, ContextErrors& errors) {
  add(errors, field(path, "ranks"), ranks_error(g.num_ranks));
  add(errors, field(path, "window"), window_error(g.window));
  add(errors, field(path, "pmtu"), pmtu_error(g.pmtu));
  add(errors, field(path, "mode"), mode_error(g.mode));
  add(errors, field(path, "hop_timeout_us"), hop_timeout_error(g.hop_timeout_us));
  if (g.pkey) add(errors, field(path, "pkey"), pkey_error(*g.pkey));
  add(errors, field(path, "dscp"), dscp_error(g.dscp));
  add(errors, field(path, "children"), children_count_error(g.children.size()));
  for (size_t i = 0; i < g.children.size(); ++i) {
    const ChildLink& c = g.children[i];
    const std::string below =
        index(field(path, "children"), i) + (c.is_rank ? ".rank" : ".rank_range");
    if (c.is_rank) {
      add(errors, below + "_count", rank_child_count_error(c.rank_count));
    } else if (c.rank_count == 0) {
      add(errors, below + ".count", "must be >= 1");
    }
    if (ranks_error(g.num_ranks).empty()) {
      add(errors, below, range_error(c.first_rank, c.rank_count, c.is_rank, g.num_ranks));
    }
  }
  add(errors, field(path, "children"), mode3_ranks_error(g));
  if (g.arith.profile == AccumProfile::kKulischFixed) {
    if (!g.arith.dtype) {
      add(errors, field(path, "dtype"),
          "required with accumulator kulisch_fixed (the element type its exact accumulators are "
          "sized for)");
    }
    const bool switches_below = std::any_of(g.children.begin(), g.children.end(),
                                            [](const ChildLink& c) { return !c.is_rank; });
    if (g.mode == GroupMode::kMode3 && (g.parent || switches_below)) {
      add(errors, field(path, "accumulator"),
          "an exact sum (kulisch_fixed) on a Mode-III tree of several switches is not "
          "supported: use Mode-II, or one switch");
    }
  }
}

void check_context(const GroupContext& g, const std::string& path, ContextErrors& errors,
                   const SwitchView* sw) {
  const size_t before = errors.size();
  check_shape(g, path, errors);
  const bool shape_ok = errors.size() == before;
  add(errors, field(path, "initial_psn"), psn_error(g.initial_psn));
  const std::string children = field(path, "children");
  RankCover cover(g.num_ranks);
  std::vector<uint16_t> ports;
  const auto check_port = [&](uint16_t port, const std::string& at) {
    if (sw == nullptr) return;
    if (port >= sw->ports.size()) {
      add(errors, at,
          "port id " + std::to_string(port) + " is not below the switch's " +
              std::to_string(sw->ports.size()) + " ports");
    } else {
      ports.push_back(port);
    }
  };
  for (size_t i = 0; i < g.children.size(); ++i) {
    const ChildLink& c = g.children[i];
    const std::string at = index(children, i);
    if (shape_ok) {
      add(errors, at + (c.is_rank ? ".rank" : ".rank_range"),
          cover.add(i, c.first_rank, c.rank_count, c.is_rank, children));
    }
    check_port(c.port, at + ".port");
    check_endpoint(c.remote, at + ".remote", errors, sw, false);
    check_endpoint(c.local, at + ".local", errors, sw, true);
  }
  if (g.parent) {
    check_port(g.parent->port, field(path, "parent.port"));
    check_endpoint(g.parent->remote, field(path, "parent.remote"), errors, sw, false);
    check_endpoint(g.parent->local, field(path, "parent.local"), errors, sw, true);
  } else if (shape_ok) {
    add(errors, children, cover.missing());
  }
  if (sw != nullptr && valid_pmtu(g.pmtu)) {
    std::sort(ports.begin(), ports.end());
    ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
    for (const uint16_t p : ports) add(errors, field(path, "pmtu"), port_mtu_error(g.pmtu, *sw, p));
    // Exact partials travel on switch-to-switch edges (up from a switch child, up to a parent).
    for (size_t i = 0; i < g.children.size(); ++i) {
      if (!g.children[i].is_rank) {
        add(errors, index(children, i) + ".port", partial_mtu_error(g, *sw, g.children[i].port));
      }
    }
    if (g.parent)
      add(errors, field(path, "parent.port"), partial_mtu_error(g, *sw, g.parent->port));
  }
}

}  // namespace epic::vocab
