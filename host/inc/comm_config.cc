#include "host/inc/comm_config.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "host/inc/manager_config.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/dscp.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/pkey.h"
#include "proto/vocab/psn.h"

extern char** environ;

namespace epic::inc {

namespace {

const std::vector<std::pair<std::string, std::string>> kKeys = {
    {"INC_RANK", "this rank's index in the group, 0..INC_RANKS-1 (required)"},
    {"INC_RANKS", "number of ranks in the group, 1..65535 (required)"},
    {"INC_TRANSPORT", "verbs | soft | auto (default auto: verbs when an RDMA device exists)"},
    {"INC_SWITCH_IP", "the switch's INC address for this group, IPv4 (required)"},
    {"INC_SWITCH_QPN", "the switch's virtual QPN for this rank (required)"},
    {"INC_PSN", "the group's initial PSN (default 0)"},
    {"INC_PMTU", "path MTU: 256, 512, 1024, 2048, 4096 (default 1024)"},
    {"INC_TRAFFIC_CLASS",
     "IP TOS / GRH traffic class of the QP's packets, DSCP << 2 | ECN (default 0; 2 = ECT(0): "
     "ECN-capable, so congestion marks CE and the ranks answer with CNPs)"},
    {"INC_DSCP",
     "with INC_MANAGER: the group's traffic class asked of the manager, a DSCP 0..63 (default: "
     "the tenant's); the manager's answer replaces the DSCP bits of INC_TRAFFIC_CLASS"},
    {"INC_WINDOW",
     "the group's window MW in packets (default " + std::to_string(vocab::kDefaultWindow) +
         "; with INC_MANAGER: the manager sizes it from the path's bandwidth-delay product)"},
    {"INC_IFACE", "soft: the Linux interface of the endpoint"},
    {"INC_MAC", "soft: the endpoint's own MAC (not the kernel's)"},
    {"INC_IP", "soft: the endpoint's own IPv4 address; verbs: selects the GID (optional)"},
    {"INC_QPN", "soft: this rank's QPN"},
    {"INC_UDP_SPORT", "soft: UDP source port of our packets (default 49152)"},
    {"INC_PKEY",
     "the group's RoCE partition key (BTH P_Key) the QP sends, 0x0001..0xffff (default 0xffff); "
     "with INC_MANAGER also asked of the manager, whose switches then check it on every packet"},
    {"INC_DEVICE", "verbs: RDMA device name (default: the first with an active RoCEv2 port)"},
    {"INC_IB_PORT", "verbs: port number (default 1)"},
    {"INC_GID_INDEX", "verbs: GID index (default -1: the RoCEv2 GID of INC_IP)"},
    {"INC_TIMEOUT_MS", "give up when no collective finished for this long (default 30000)"},
    {"INC_RETRANSMIT_TIMEOUT_US", "soft: RC retransmission timeout (default 20000)"},
    {"INC_TIMEOUT_CODE", "verbs: RC local ACK timeout code, 4.096 us * 2^code (default 14)"},
    {"INC_RETRY_COUNT", "RC retry count 0..7 (default 7)"},
    {"INC_MAX_COLLECTIVE_BYTES",
     "split calls larger than this (default 67108864, at most 536870912)"},
    {"INC_COPY_SEND_BYTES",
     "copy inputs up to this size so calls need not wait for upload ACKs (default 65536)"},
    {"INC_LINGER_MS", "keep acknowledging at close for this long (default 200)"},
    {"INC_MANAGER",
     "inc-manager address, host:port or unix:/path: join through it (then INC_SWITCH_IP, "
     "INC_SWITCH_QPN and INC_PSN must be absent; INC_PMTU/INC_WINDOW are requests)"},
    {"INC_TENANT", "with INC_MANAGER: the tenant (default \"default\")"},
    {"INC_GROUP", "with INC_MANAGER: the group's name, the same on every rank (required)"},
    {"INC_QUEUE_TIMEOUT_MS", "with INC_MANAGER: wait this long for INC memory (default 0)"},
    {"INC_JOIN_TIMEOUT_MS", "with INC_MANAGER: deadline of the join call (default 60000)"},
    {"INC_MANAGER_CA",
     "with INC_MANAGER: TLS root CA file (PEM); without it, plaintext (local only)"},
    {"INC_MANAGER_CERT", "with INC_MANAGER: TLS client certificate file (PEM, with _KEY)"},
    {"INC_MANAGER_KEY", "with INC_MANAGER: TLS client key file (PEM, with _CERT)"},
    {"INC_MANAGER_INSECURE",
     "with INC_MANAGER: 1 = plaintext to an address that is not a unix socket or loopback "
     "(default 0: such an address needs INC_MANAGER_CA)"},
    {"INC_HOST_FALLBACK",
     "with INC_MANAGER: 1|0, accept host collectives when there is no INC memory (default 1)"},
    {"INC_HOST_QPN", "with INC_MANAGER, soft: the host ring's base QPN (default INC_QPN + 2)"},
    {"INC_ACCUMULATOR",
     "the group's accumulator profile: fp32_arrival (default; float sums in arrival order) or "
     "kulisch_fixed (exact float sums, rounded once: the same bits on every run), the same on "
     "every rank and on the switches"},
    {"INC_DTYPE",
     "the element type the group's switch memory is sized for: int32, fp32, fp16, bf16, int8, "
     "fp8_e4m3, fp8_e5m2 (required with kulisch_fixed; default: none named, every type but fp8)"},
    {"INC_MODE",
     "with INC_MANAGER: the group's mode, 2 (Mode-II) or 3 (Mode-III), the same on every rank "
     "(default: the fabric's)"},
};

template <typename T>
std::optional<T> parse_uint(const std::string& s, T max) {
  uint64_t v = 0;
  const char* b = s.data();
  const char* e = b + s.size();
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    b += 2;
    base = 16;
  }
  auto [p, ec] = std::from_chars(b, e, v, base);
  if (ec != std::errc() || p != e || b == e || v > max) return std::nullopt;
  return static_cast<T>(v);
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::map<std::string, std::string> env_pairs() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("INC_", 0) != 0) continue;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& config_keys() { return kKeys; }

ConfigResult config_from_pairs(const std::map<std::string, std::string>& pairs) {
  ConfigResult r;
  CommConfig& c = r.config;
  host::TransportOptions& t = c.transport;
  auto bad = [&](const std::string& key, const std::string& value, const std::string& want) {
    r.error = key + "=" + value + ": " + want;
    return r;
  };
  bool have_rank = false, have_ranks = false;
  for (const auto& kv : pairs) {
    const std::string& key = kv.first;
    const std::string& value = kv.second;  // (lambdas may not capture structured bindings)
    bool known = false;
    for (const auto& k : kKeys) known = known || k.first == key;
    if (!known) {
      std::string all;
      for (const auto& k : kKeys) all += (all.empty() ? "" : ", ") + k.first;
      r.error = "unknown key " + key + " (known: " + all + ")";
      return r;
    }
    auto u32 = [&](uint32_t max) { return parse_uint<uint32_t>(value, max); };
    if (key == "INC_RANK") {
      auto v = u32(0xFFFE);
      if (!v) return bad(key, value, "expected a rank index 0..65534");
      c.rank = static_cast<uint16_t>(*v);
      have_rank = true;
    } else if (key == "INC_RANKS") {
      auto v = u32(0xFFFF);
      if (!v || *v == 0) return bad(key, value, "expected a group size 1..65535");
      c.ranks = static_cast<uint16_t>(*v);
      have_ranks = true;
    } else if (key == "INC_TRANSPORT") {
      if (value != "soft" && value != "verbs" && value != "auto")
        return bad(key, value, "expected verbs, soft or auto");
      t.kind = value;
    } else if (key == "INC_SWITCH_IP" || key == "INC_IP") {
      auto v = vocab::parse_ipv4(value);
      if (!v) return bad(key, value, "expected an IPv4 address like 10.0.0.1");
      (key == "INC_IP" ? t.ip : t.switch_ip) = *v;
    } else if (key == "INC_SWITCH_QPN" || key == "INC_QPN") {
      auto v = u32(vocab::kQpnMask);
      if (!v || *v == 0) return bad(key, value, "expected a QPN 1..0xffffff");
      (key == "INC_QPN" ? t.qpn : t.switch_qpn) = *v;
    } else if (key == "INC_PSN") {
      auto v = u32(vocab::kPsnMask);
      if (!v) return bad(key, value, "expected a 24-bit PSN");
      t.initial_psn = *v;
    } else if (key == "INC_PMTU") {
      auto v = u32(vocab::kMaxPmtu);
      if (!v || !vocab::valid_pmtu(*v))
        return bad(key, value, "expected one of " + std::string(vocab::kPmtuChoices));
      t.pmtu = static_cast<uint16_t>(*v);
    } else if (key == "INC_TRAFFIC_CLASS") {
      auto v = u32(255);
      if (!v) return bad(key, value, "expected 0..255: DSCP << 2 | ECN (2 = ECT(0), ECN-capable)");
      t.traffic_class = static_cast<uint8_t>(*v);
    } else if (key == "INC_DSCP") {
      auto v = u32(vocab::kMaxDscp);
      if (!v) return bad(key, value, "expected a DSCP 0..63 (46: expedited forwarding)");
      c.manager.dscp = static_cast<uint8_t>(*v);
    } else if (key == "INC_WINDOW") {
      auto v = u32(vocab::kMaxWindow);
      if (!v || !vocab::valid_window(*v))
        return bad(key, value,
                   "expected a power of two in 1.." + std::to_string(vocab::kMaxWindow));
      t.window = *v;
    } else if (key == "INC_IFACE" || key == "INC_DEVICE") {
      if (value.empty()) return bad(key, value, "expected a name");
      (key == "INC_IFACE" ? t.iface : t.device) = value;
    } else if (key == "INC_MAC") {
      auto v = vocab::parse_mac(value);
      if (!v) return bad(key, value, "expected a MAC like 02:00:00:00:00:01");
      t.mac = *v;
    } else if (key == "INC_UDP_SPORT") {
      auto v = u32(0xFFFF);
      if (!v) return bad(key, value, "expected a UDP port");
      t.udp_sport = static_cast<uint16_t>(*v);
    } else if (key == "INC_PKEY") {
      auto v = u32(0xFFFF);
      if (!v || !vocab::pkey_valid(*v))
        return bad(key, value, "expected a P_Key 0x0001..0xffff (a partition number other than 0)");
      t.pkey = static_cast<uint16_t>(*v);
      c.manager.pkey = t.pkey;
    } else if (key == "INC_ACCUMULATOR") {
      const auto p = vocab::parse_profile(value);
      if (!p) return bad(key, value, "expected fp32_arrival or kulisch_fixed");
      c.arith.profile = *p;
      c.manager.arith.profile = *p;
    } else if (key == "INC_DTYPE") {
      const auto d = vocab::parse_dtype(value);
      if (!d)
        return bad(key, value, "expected int32, fp32, fp16, bf16, int8, fp8_e4m3 or fp8_e5m2");
      c.arith.dtype = *d;
      c.manager.arith.dtype = *d;
    } else if (key == "INC_IB_PORT") {
      auto v = u32(255);
      if (!v || *v == 0) return bad(key, value, "expected a port number 1..255");
      t.ib_port = static_cast<uint8_t>(*v);
    } else if (key == "INC_GID_INDEX") {
      if (value == "-1") {
        t.gid_index = -1;
      } else {
        auto v = u32(0xFFFF);
        if (!v) return bad(key, value, "expected a GID index, or -1 for automatic");
        t.gid_index = static_cast<int>(*v);
      }
    } else if (key == "INC_TIMEOUT_MS") {
      auto v = u32(86'400'000);
      if (!v || *v == 0) return bad(key, value, "expected milliseconds 1..86400000");
      c.timeout = std::chrono::milliseconds(*v);
    } else if (key == "INC_RETRANSMIT_TIMEOUT_US") {
      auto v = u32(60'000'000);
      if (!v || *v == 0) return bad(key, value, "expected microseconds 1..60000000");
      t.retransmit_timeout_us = *v;
    } else if (key == "INC_TIMEOUT_CODE") {
      auto v = u32(31);
      if (!v) return bad(key, value, "expected 0..31");
      t.timeout_code = static_cast<uint8_t>(*v);
    } else if (key == "INC_RETRY_COUNT") {
      auto v = u32(7);
      if (!v) return bad(key, value, "expected 0..7");
      t.retry_count = static_cast<uint8_t>(*v);
    } else if (key == "INC_MAX_COLLECTIVE_BYTES") {
      auto v = parse_uint<uint64_t>(value, vocab::kMaxCollectiveBytes);
      if (!v || *v < 4096) {
        return bad(key, value,
                   "expected bytes in 4096.." + std::to_string(vocab::kMaxCollectiveBytes) +
                       " (a collective has at most 2^22 packets: vocab::kMaxCollectivePackets)");
      }
      c.max_collective_bytes = static_cast<size_t>(*v);
    } else if (key == "INC_COPY_SEND_BYTES") {
      auto v = parse_uint<uint64_t>(value, uint64_t{1} << 32);
      if (!v) return bad(key, value, "expected bytes (0 = never copy)");
      c.copy_send_bytes = static_cast<size_t>(*v);
    } else if (key.rfind("INC_MANAGER", 0) == 0 || key == "INC_TENANT" || key == "INC_GROUP" ||
               key == "INC_QUEUE_TIMEOUT_MS" || key == "INC_JOIN_TIMEOUT_MS" ||
               key == "INC_HOST_FALLBACK" || key == "INC_HOST_QPN" || key == "INC_MODE") {
      if (std::string why = parse_manager_key(key, value, c.manager); !why.empty()) {
        return bad(key, value, why);
      }
    } else if (key == "INC_LINGER_MS") {
      auto v = u32(600'000);
      if (!v) return bad(key, value, "expected milliseconds");
      c.linger = std::chrono::milliseconds(*v);
    }
  }
  if (!have_rank || !have_ranks) {
    r.error = std::string("missing ") + (!have_rank ? "INC_RANK" : "INC_RANKS") +
              " (the rank's index and the group size are required)";
    return r;
  }
  if (c.rank >= c.ranks) {
    r.error =
        "INC_RANK=" + std::to_string(c.rank) + " is not below INC_RANKS=" + std::to_string(c.ranks);
    return r;
  }
  if (c.arith.profile == vocab::AccumProfile::kKulischFixed && !c.arith.dtype) {
    r.error =
        "INC_ACCUMULATOR=kulisch_fixed needs INC_DTYPE (the element type the switches' "
        "exact accumulators are sized for)";
    return r;
  }
  if (c.manager.enabled()) {
    if (pairs.count("INC_WINDOW")) c.manager.window = t.window;
    if (pairs.count("INC_PMTU")) c.manager.pmtu = t.pmtu;
    r.error = check_manager_keys(pairs, c);
    return r;
  }
  if (const std::string stray = manager_only_key(pairs); !stray.empty()) {
    r.error = stray + " needs INC_MANAGER (the inc-manager to join through)";
    return r;
  }
  if (t.switch_ip == 0) {
    r.error = "missing INC_SWITCH_IP (the switch's INC address for this group)";
    return r;
  }
  if (t.switch_qpn == 0) {
    r.error = "missing INC_SWITCH_QPN (the switch's virtual QPN for this rank)";
    return r;
  }
  if (t.kind == "soft") {
    if (const std::string why = host::validate(t); !why.empty()) {
      r.error = why + " (INC_TRANSPORT=soft needs INC_IFACE, INC_MAC, INC_IP and INC_QPN)";
      return r;
    }
  }
  return r;
}

ConfigResult config_from_env() { return config_from_pairs(env_pairs()); }

ConfigResult config_from_file(const std::string& path, bool env_overrides) {
  ConfigResult r;
  std::ifstream in(path);
  if (!in) {
    r.error = "cannot read " + path + ": " + std::strerror(errno);
    return r;
  }
  std::map<std::string, std::string> pairs;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line.rfind("export ", 0) == 0) line = trim(line.substr(7));
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {
      r.error = path + ":" + std::to_string(n) + ": expected KEY=VALUE, got '" + line + "'";
      return r;
    }
    pairs[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  if (env_overrides) {
    for (auto& [k, v] : env_pairs()) pairs[k] = v;
  }
  r = config_from_pairs(pairs);
  if (!r.ok()) r.error = path + ": " + r.error;
  return r;
}

}  // namespace epic::inc
