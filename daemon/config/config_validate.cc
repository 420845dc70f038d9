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

#include "daemon/config/checks.h"
#include "daemon/config/config_loader.h"
#include "daemon/config/manager_validate.h"
#include "daemon/config/traffic_class_validate.h"
#include "proto/vocab/addr.h"

namespace epic::incd {
namespace {

using Msg = inc::v1::IncdConfig;

inline constexpr uint32_t kMaxBurst = 512;
inline constexpr uint32_t kMinMtu = 68;  // IPv4's minimum
inline constexpr uint32_t kMaxMtu = 9600;
inline constexpr uint32_t kMaxDescriptors = 32768;

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

// "any", or "FIRST-LAST" with 0 <= FIRST <= LAST <= 65535 (decimal); `why` says what is wrong.
std::optional<vocab::UdpPortRange> parse_udp_port_range(const std::string& s, std::string& why) {
  if (s == "any") return vocab::UdpPortRange{};
  const size_t dash = s.find('-');
  auto number = [](const std::string& t) -> std::optional<uint32_t> {
    if (t.empty() || t.size() > 5 ||
        !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    return static_cast<uint32_t>(std::stoul(t));
  };
  const auto first = dash == std::string::npos ? std::nullopt : number(s.substr(0, dash));
  const auto last = dash == std::string::npos ? std::nullopt : number(s.substr(dash + 1));
  if (!first || !last) {
    why = "must be \"FIRST-LAST\" (decimal UDP ports, e.g. \"49152-65535\") or \"any\"";
    return std::nullopt;
  }
  if (*first > 65535 || *last > 65535) {
    why = "a UDP port is at most 65535";
    return std::nullopt;
  }
  if (*first > *last) {
    why = "FIRST " + std::to_string(*first) + " is above LAST " + std::to_string(*last);
    return std::nullopt;
  }
  return vocab::UdpPortRange{static_cast<uint16_t>(*first), static_cast<uint16_t>(*last)};
}

class Validator {
 public:
  explicit Validator(const Msg& m) : m_(m) {}

  LoadResult run() {
    IncdConfig c;
    c.eal = eal();
    workers_and_burst(c);
    c.ports = ports();
    sv_.ports = switch_ports(c.ports);
    c.sw = switch_config();
    c.faults = faults();
    c.groups = groups();
    c.metrics = metrics();
    c.log = log();
    c.traffic_classes = validate_traffic_classes(m_.traffic_classes(), errors_);
    if (m_.has_manager()) c.manager = validate_manager(m_.manager(), c.sw, c.groups, errors_);
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
      } else if (const auto [it, fresh] = sv_.port_of.emplace(pc.name, i); !fresh) {
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
      pc.rate_mbps = p.rate_mbps();
      if (pc.rate_mbps > kMaxRateMbps) {
        fail(path + ".rate_mbps", std::to_string(pc.rate_mbps) + " is above " +
                                      std::to_string(kMaxRateMbps) + " (400 Gbit/s)");
      }
      out.push_back(std::move(pc));
    }
    return out;
  }

  std::optional<uint16_t> port_ref(const std::string& name, const std::string& path) {
    return incd::port_ref(sv_, name, path, errors_);
  }

  SwitchConfig switch_config() {
    const Msg::Switch& s = m_.switch_();
    SwitchConfig out;
    for (int i = 0; i < s.inc_addresses_size(); ++i) {
      const Msg::IncAddress& a = s.inc_addresses(i);
      const std::string path = index("switch.inc_addresses", static_cast<size_t>(i));
      sv_.inc_address_text.push_back(a.ipv4());
      const auto ip = check_ipv4(a.ipv4(), path + ".ipv4", errors_);
      const auto m = check_mac(a.mac(), path + ".mac", errors_);
      if (ip) {
        if (const auto [it, fresh] = sv_.inc_macs.emplace(*ip, std::pair{m, i}); !fresh) {
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
    if (s.has_udp_source_ports()) {
      std::string why;
      if (const auto r = parse_udp_port_range(s.udp_source_ports(), why)) {
        out.udp_source_ports = *r;
      } else {
        fail("switch.udp_source_ports", quote(s.udp_source_ports()) + ": " + why);
      }
    }
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
      fc.mark_ce = probability(f.mark_ce(), "mark_ce");
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

  std::vector<engine::GroupConfig> groups() {
    std::vector<engine::GroupConfig> out;
    std::map<uint32_t, int> ids;
    vocab::ContextReader check(sv_, errors_);
    for (int gi = 0; gi < m_.groups_size(); ++gi) {
      const inc::v1::GroupContext& g = m_.groups(gi);
      const std::string path = index("groups", static_cast<size_t>(gi));
      if (g.has_id()) {
        if (const auto [it, fresh] = ids.emplace(g.id(), gi); !fresh) {
          fail(path + ".id", "group id " + std::to_string(g.id()) + " is already used by " +
                                 index("groups", static_cast<size_t>(it->second)));
        }
      }
      if (auto gc = check.read(g, path)) out.push_back(std::move(*gc));
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
  SwitchView sv_;  // filled by ports() and switch_config(), for faults and groups
};

}  // namespace

LoadResult validate_config(const inc::v1::IncdConfig& message) { return Validator(message).run(); }

}  // namespace epic::incd
