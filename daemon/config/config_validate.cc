// epic.inc.v1.IncdConfig → IncdConfig: defaults for absent fields, name resolution, and every
// semantic check, each error naming the field path. Checks never stop at the first failure;
// a failed field is left out of the result, and the result is returned only when no check
// failed.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "daemon/config/config_loader.h"
#include "datapath/wire/addr.h"

namespace epic::incd {
namespace {

using Msg = inc::v1::IncdConfig;

// Bytes a RoCEv2 packet carries besides its pmtu-sized payload, with margin: Ethernet 14,
// 802.1Q 4, IPv4 20, UDP 8, BTH 12, RETH/ImmDt up to 20, pad 3, ICRC 4 = 85.
inline constexpr uint32_t kRoceOverhead = 90;
inline constexpr uint32_t kPsnSpace = 1u << 24;  // QPNs and PSNs are 24-bit
inline constexpr uint32_t kMaxWindow = 1u << 20;
inline constexpr uint32_t kMaxBurst = 512;
inline constexpr uint32_t kMinMtu = 68;  // IPv4's minimum
inline constexpr uint32_t kMaxMtu = 9600;
inline constexpr uint32_t kMaxDescriptors = 32768;
inline constexpr uint32_t kMaxRanks = 65535;  // ChildLink ranks are 16-bit

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

// Counts the lcores of a plain DPDK lcore list ("0-3", "0,2,4-5"); nullopt when it uses more
// of DPDK's syntax (lcore@cpu groups), which is then left to DPDK to judge.
std::optional<size_t> count_lcores(std::string_view s) {
  std::set<unsigned long> cores;
  size_t i = 0;
  const auto number = [&]() -> std::optional<unsigned long> {
    const size_t start = i;
    unsigned long v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && v < 100000) {
      v = v * 10 + static_cast<unsigned long>(s[i] - '0');
      ++i;
    }
    if (i == start) return std::nullopt;
    return v;
  };
  while (i < s.size()) {
    const auto first = number();
    if (!first) return std::nullopt;
    unsigned long last = *first;
    if (i < s.size() && s[i] == '-') {
      ++i;
      const auto l = number();
      if (!l) return std::nullopt;
      last = *l;
    }
    for (unsigned long c = std::min(*first, last); c <= std::max(*first, last); ++c) {
      cores.insert(c);
    }
    if (i < s.size()) {
      if (s[i] != ',') return std::nullopt;
      ++i;
    }
  }
  return cores.size();
}

bool is_dpdk_log_level(const std::string& s) {
  constexpr std::array<std::string_view, 8> kNames = {"emergency", "alert",  "critical", "error",
                                                      "warning",   "notice", "info",     "debug"};
  if (std::find(kNames.begin(), kNames.end(), s) != kNames.end()) return true;
  return s.size() == 1 && s[0] >= '1' && s[0] <= '8';
}

// "host:port" or "[v6]:port", port 1..65535.
bool is_host_port(const std::string& s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
  const std::string port = s.substr(colon + 1);
  if (port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  const unsigned long p = std::stoul(port);
  if (p == 0 || p > 65535) return false;
  const std::string host = s.substr(0, colon);
  if (host.front() == '[') return host.size() > 2 && host.back() == ']';
  return host.find(':') == std::string::npos;  // a bare IPv6 address needs brackets
}

class Validator {
 public:
  explicit Validator(const Msg& m) : m_(m) {}

  LoadResult run() {
    IncdConfig c;
    c.eal = eal();
    workers_and_burst(c);
    c.ports = ports();
    c.sw = switch_config();
    c.faults = faults();
    c.groups = groups(c.ports);
    c.metrics = metrics();
    c.log = log();
    if (!errors_.empty()) return {std::nullopt, std::move(errors_)};
    return {std::move(c), {}};
  }

 private:
  void fail(std::string path, std::string message) {
    errors_.push_back({std::move(path), std::move(message)});
  }

  EalConfig eal() {
    const Msg::Eal& e = m_.eal();
    EalConfig out;
    if (e.has_lcores()) {
      out.lcores = e.lcores();
      if (out.lcores.empty())
        fail("eal.lcores", "must not be empty (a DPDK lcore list, e.g. \"0-1\")");
    }
    out.hugepages = e.hugepages();
    if (e.has_memory_mb()) {
      out.memory_mb = e.memory_mb();
      if (out.memory_mb == 0) fail("eal.memory_mb", "must be >= 1 (MiB)");
    }
    out.file_prefix = e.file_prefix();
    if (std::any_of(out.file_prefix.begin(), out.file_prefix.end(), [](char c) {
          return c == '/' || std::isspace(static_cast<unsigned char>(c));
        })) {
      fail("eal.file_prefix", quote(out.file_prefix) +
                                  " must not contain '/' or spaces (DPDK names runtime files "
                                  "after it)");
    }
    if (e.has_log_level()) {
      out.log_level = e.log_level();
      if (!is_dpdk_log_level(out.log_level)) {
        fail("eal.log_level",
             quote(out.log_level) +
                 " is not one of emergency|alert|critical|error|warning|notice|info|debug or 1..8");
      }
    }
    out.extra_args.assign(e.extra_args().begin(), e.extra_args().end());
    return out;
  }

  void workers_and_burst(IncdConfig& c) {
    if (m_.has_workers()) c.workers = m_.workers();
    if (c.workers == 0) {
      fail("workers", "must be >= 1");
    } else if (const auto lcores = count_lcores(c.eal.lcores); lcores && *lcores > 0) {
      if (c.workers + 1 > *lcores) {
        fail("workers", std::to_string(c.workers) + " workers need " +
                            std::to_string(c.workers + 1) +
                            " lcores (the main lcore plus one per worker), but eal.lcores " +
                            quote(c.eal.lcores) + " has " + std::to_string(*lcores));
      }
    }
    c.idle_sleep_us = m_.idle_sleep_us();
    if (c.idle_sleep_us > 100'000) fail("idle_sleep_us", "must be <= 100000 (100 ms)");
    if (m_.has_burst()) c.burst = m_.burst();
    if (c.burst == 0 || c.burst > kMaxBurst) {
      fail("burst", std::to_string(c.burst) + " is outside 1.." + std::to_string(kMaxBurst));
    }
  }

  std::vector<PortConfig> ports() {
    std::vector<PortConfig> out;
    if (m_.ports().empty()) fail("ports", "at least one port is required");
    std::map<std::string, size_t> devices;
    for (int i = 0; i < m_.ports_size(); ++i) {
      const Msg::Port& p = m_.ports(i);
      const std::string path = index("ports", static_cast<size_t>(i));
      PortConfig pc;
      pc.name = p.name();
      pc.device = p.device();
      if (pc.name.empty()) {
        fail(path + ".name", "required");
      } else if (const auto [it, fresh] = port_index_.emplace(pc.name, i); !fresh) {
        fail(path + ".name",
             quote(pc.name) + " is already the name of " + index("ports", it->second));
      }
      if (pc.device.empty()) {
        fail(path + ".device", "required (DPDK devargs: a vdev or a PCI address)");
      } else if (const auto [it, fresh] = devices.emplace(pc.device, i); !fresh) {
        fail(path + ".device",
             quote(pc.device) + " is already the device of " + index("ports", it->second));
      }
      if (p.has_mtu()) {
        if (p.mtu() < kMinMtu || p.mtu() > kMaxMtu) {
          fail(path + ".mtu", std::to_string(p.mtu()) + " is outside " + std::to_string(kMinMtu) +
                                  ".." + std::to_string(kMaxMtu));
        } else {
          pc.mtu = static_cast<uint16_t>(p.mtu());
        }
      }
      const auto descriptors = [&](bool has, uint32_t v, const char* name, uint16_t& field) {
        if (!has) return;
        if (v == 0 || v > kMaxDescriptors) {
          fail(path + "." + name,
               std::to_string(v) + " is outside 1.." + std::to_string(kMaxDescriptors));
        } else {
          field = static_cast<uint16_t>(v);
        }
      };
      descriptors(p.has_rx_descriptors(), p.rx_descriptors(), "rx_descriptors", pc.rx_descriptors);
      descriptors(p.has_tx_descriptors(), p.tx_descriptors(), "tx_descriptors", pc.tx_descriptors);
      out.push_back(std::move(pc));
    }
    return out;
  }

  std::optional<uint16_t> port_ref(const std::string& name, const std::string& path) {
    if (name.empty()) {
      fail(path, "required (the name of one of ports)");
      return std::nullopt;
    }
    if (const auto it = port_index_.find(name); it != port_index_.end()) {
      return static_cast<uint16_t>(it->second);
    }
    std::string known;
    for (const Msg::Port& p : m_.ports()) {
      if (p.name().empty()) continue;
      if (!known.empty()) known += ", ";
      known += p.name();
    }
    fail(path,
         "no port named " + quote(name) + " (ports: " + (known.empty() ? "none" : known) + ")");
    return std::nullopt;
  }

  std::optional<uint32_t> ipv4(const std::string& s, const std::string& path) {
    if (s.empty()) {
      fail(path, "required (dotted quad, e.g. 10.77.0.1)");
      return std::nullopt;
    }
    const std::optional<uint32_t> a = wire::parse_ipv4(s);
    if (!a) {
      fail(path, quote(s) + " is not an IPv4 address (dotted quad, e.g. 10.77.0.1)");
      return std::nullopt;
    }
    if (*a == 0 || *a == 0xffffffffu || (*a >> 28) == 0xe || (*a >> 24) == 127) {
      fail(path, quote(s) + " is not a unicast host address");
      return std::nullopt;
    }
    return a;
  }

  std::optional<wire::MacAddr> mac(const std::string& s, const std::string& path) {
    if (s.empty()) {
      fail(path, "required (e.g. 02:00:00:00:00:01)");
      return std::nullopt;
    }
    const std::optional<wire::MacAddr> m = wire::parse_mac(s);
    if (!m) {
      fail(path, quote(s) +
                     " is not a MAC address (six hex bytes separated by colons, e.g. "
                     "02:00:00:00:00:01)");
      return std::nullopt;
    }
    if (((*m)[0] & 1) != 0) {
      fail(path, quote(s) +
                     " is a multicast MAC (the low bit of the first byte is set); a unicast MAC "
                     "is required");
      return std::nullopt;
    }
    if (*m == wire::MacAddr{}) {
      fail(path, quote(s) + " is the all-zero MAC; a unicast MAC is required");
      return std::nullopt;
    }
    return m;
  }

  SwitchConfig switch_config() {
    const Msg::Switch& s = m_.switch_();
    SwitchConfig out;
    for (int i = 0; i < s.inc_addresses_size(); ++i) {
      const Msg::IncAddress& a = s.inc_addresses(i);
      const std::string path = index("switch.inc_addresses", static_cast<size_t>(i));
      const auto ip = ipv4(a.ipv4(), path + ".ipv4");
      const auto m = mac(a.mac(), path + ".mac");
      if (ip) {
        if (const auto [it, fresh] = inc_macs_.emplace(*ip, std::pair{m, i}); !fresh) {
          fail(path + ".ipv4", quote(a.ipv4()) + " is already " +
                                   index("switch.inc_addresses", it->second.second) + ".ipv4");
        }
      }
      if (ip && m) out.inc_addresses.push_back({*ip, *m});
    }
    if (s.has_l2_aging_s()) out.l2_aging_s = s.l2_aging_s();
    if (s.has_l2_table_size()) {
      out.l2_table_size = s.l2_table_size();
      if (out.l2_table_size == 0) fail("switch.l2_table_size", "must be >= 1");
    }
    out.bad_icrc = s.bad_icrc() == Msg::BAD_ICRC_DROP ? BadIcrc::kDrop : BadIcrc::kPass;
    return out;
  }

  std::vector<FaultConfig> faults() {
    std::vector<FaultConfig> out;
    std::map<std::pair<uint16_t, Direction>, int> used;
    for (int i = 0; i < m_.faults_size(); ++i) {
      const Msg::Fault& f = m_.faults(i);
      const std::string path = index("faults", static_cast<size_t>(i));
      FaultConfig fc;
      const auto port = port_ref(f.port(), path + ".port");
      fc.direction = f.direction() == Msg::FAULT_DIRECTION_TX ? Direction::kTx : Direction::kRx;
      const auto probability = [&](double v, const char* name) {
        if (!(v >= 0.0 && v <= 1.0)) {  // NaN fails too
          char text[32];
          std::snprintf(text, sizeof text, "%g", v);
          fail(path + "." + name, std::string("probability ") + text + " is outside [0, 1]");
        }
        return v;
      };
      fc.drop = probability(f.drop(), "drop");
      fc.duplicate = probability(f.duplicate(), "duplicate");
      fc.reorder = probability(f.reorder(), "reorder");
      fc.delay_us = f.delay_us();
      if (f.has_seed()) fc.seed = f.seed();
      if (port) {
        fc.port = *port;
        if (const auto [it, fresh] = used.emplace(std::pair{*port, fc.direction}, i); !fresh) {
          fail(path, "port " + quote(f.port()) + " already has a fault in direction " +
                         (fc.direction == Direction::kRx ? "rx" : "tx") + " (" +
                         index("faults", static_cast<size_t>(it->second)) +
                         "); merge them into one entry");
        }
      }
      out.push_back(fc);
    }
    return out;
  }

  // Checks an edge endpoint. `local`: this switch's side (mac optional, ipv4 one of
  // switch.inc_addresses); otherwise the peer's side (mac required, ipv4 not ours).
  std::optional<engine::Endpoint> endpoint(bool present, const Msg::Endpoint& e,
                                           const std::string& path, bool local) {
    if (!present) {
      fail(path, local ? "required (ipv4, qpn; mac optional)" : "required (mac, ipv4, qpn)");
      return std::nullopt;
    }
    engine::Endpoint out;
    bool ok = true;
    const auto ip = ipv4(e.ipv4(), path + ".ipv4");
    if (ip) {
      out.ipv4 = *ip;
      const auto inc = inc_macs_.find(*ip);
      if (local && inc == inc_macs_.end()) {
        std::string known;
        for (const Msg::IncAddress& a : m_.switch_().inc_addresses()) {
          if (!known.empty()) known += ", ";
          known += a.ipv4();
        }
        fail(path + ".ipv4", quote(e.ipv4()) + " is not one of switch.inc_addresses (" +
                                 (known.empty() ? "none" : known) + ")");
        ok = false;
      } else if (!local && inc != inc_macs_.end()) {
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
      if (const auto m = mac(e.mac(), path + ".mac")) {
        out.mac = *m;
      } else {
        ok = false;
      }
    }
    if (!e.has_qpn()) {
      fail(path + ".qpn", "required (a 24-bit queue pair number)");
      ok = false;
    } else if (e.qpn() >= kPsnSpace) {
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

  std::vector<engine::GroupConfig> groups(const std::vector<PortConfig>& ports) {
    std::vector<engine::GroupConfig> out;
    std::map<uint32_t, int> ids;
    for (int gi = 0; gi < m_.groups_size(); ++gi) {
      const Msg::Group& g = m_.groups(gi);
      const std::string path = index("groups", static_cast<size_t>(gi));
      engine::GroupConfig gc;
      if (!g.has_id()) {
        fail(path + ".id", "required");
      } else {
        gc.group_id = g.id();
        if (const auto [it, fresh] = ids.emplace(g.id(), gi); !fresh) {
          fail(path + ".id", "group id " + std::to_string(g.id()) + " is already used by " +
                                 index("groups", static_cast<size_t>(it->second)));
        }
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
      if (g.initial_psn() >= kPsnSpace) {
        fail(path + ".initial_psn",
             hex(g.initial_psn()) + " does not fit in 24 bits (must be < 0x1000000)");
      }
      gc.initial_psn = g.initial_psn();
      if (g.has_window()) {
        gc.window = g.window();
        if (gc.window == 0 || gc.window > kMaxWindow || (gc.window & (gc.window - 1)) != 0) {
          fail(path + ".window", std::to_string(gc.window) +
                                     " is not a power of two in 1..1048576 (the engine keeps "
                                     "2*window slots indexed by psn mod 2*window)");
        }
      }
      bool pmtu_ok = true;
      if (g.has_pmtu()) {
        const uint32_t p = g.pmtu();
        pmtu_ok = p == 256 || p == 512 || p == 1024 || p == 2048 || p == 4096;
        if (!pmtu_ok) {
          fail(path + ".pmtu", std::to_string(p) + " is not one of 256|512|1024|2048|4096");
        } else {
          gc.pmtu = static_cast<uint16_t>(p);
        }
      }

      std::vector<uint16_t> used_ports;
      if (g.children().empty() || g.children_size() > static_cast<int>(engine::kMaxChildren)) {
        fail(path + ".children", "a group has 1.." + std::to_string(engine::kMaxChildren) +
                                     " children at a switch, got " +
                                     std::to_string(g.children_size()));
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
        if (const auto port = port_ref(ch.port(), cpath + ".port")) {
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
            fail(below_path, (link.is_rank ? "rank " + std::to_string(first)
                                           : "ranks [" + std::to_string(first) + ", " +
                                                 std::to_string(end) + ")") +
                                 (link.is_rank ? " is" : " are") + " outside [0, " +
                                 std::to_string(gc.num_ranks) + ") (the group has " +
                                 std::to_string(gc.num_ranks) + " ranks)");
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
              fail(below_path, std::string(twice.size() == 1 ? "rank " : "ranks ") +
                                   rank_list(twice) + (twice.size() == 1 ? " is" : " are") +
                                   " already covered by " +
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
        const auto port = port_ref(p.port(), ppath + ".port");
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
          const PortConfig& pc = ports[port];
          if (uint32_t{gc.pmtu} + kRoceOverhead > pc.mtu) {
            fail(path + ".pmtu",
                 std::to_string(gc.pmtu) + " + " + std::to_string(kRoceOverhead) +
                     " bytes of RoCEv2 overhead (Ethernet, IPv4, UDP, BTH, RETH/ImmDt, ICRC, "
                     "with margin) exceeds mtu " +
                     std::to_string(pc.mtu) + " of port " + quote(pc.name) + " (" +
                     index("ports", port) + ")");
          }
        }
      }
      out.push_back(std::move(gc));
    }
    return out;
  }

  MetricsConfig metrics() {
    const Msg::Metrics& m = m_.metrics();
    MetricsConfig out;
    if (m.has_listen()) {
      out.listen = m.listen();
      if (!out.listen.empty() && !is_host_port(out.listen)) {
        fail("metrics.listen", quote(out.listen) +
                                   " is not host:port (e.g. 127.0.0.1:9464, [::1]:9464); \"\" "
                                   "disables metrics");
      }
    }
    if (m.has_stall_after_ms()) {
      out.stall_after_ms = m.stall_after_ms();
      if (out.stall_after_ms == 0) fail("metrics.stall_after_ms", "must be >= 1 (ms)");
    }
    return out;
  }

  LogConfig log() {
    LogConfig out;
    switch (m_.log().level()) {
      case Msg::LOG_LEVEL_TRACE:
        out.level = "trace";
        break;
      case Msg::LOG_LEVEL_DEBUG:
        out.level = "debug";
        break;
      case Msg::LOG_LEVEL_WARN:
        out.level = "warn";
        break;
      case Msg::LOG_LEVEL_ERROR:
        out.level = "error";
        break;
      case Msg::LOG_LEVEL_CRITICAL:
        out.level = "critical";
        break;
      case Msg::LOG_LEVEL_OFF:
        out.level = "off";
        break;
      default:
        out.level = "info";
        break;
    }
    out.file = m_.log().file();
    return out;
  }

  const Msg& m_;
  std::vector<ConfigError> errors_;
  std::map<std::string, int> port_index_;  // name → first port with it
  // inc address ipv4 → (its MAC if valid, index in switch.inc_addresses)
  std::map<uint32_t, std::pair<std::optional<wire::MacAddr>, int>> inc_macs_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> local_keys_;   // (ipv4, qpn) → path
  std::map<std::pair<uint32_t, uint32_t>, std::string> remote_keys_;  // (ipv4, qpn) → path
};

}  // namespace

LoadResult validate_config(const inc::v1::IncdConfig& message) { return Validator(message).run(); }

}  // namespace epic::incd
