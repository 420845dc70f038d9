#include "manager/core/store_codec.h"

#include "proto/context/context_validate.h"
#include "proto/vocab/addr.h"

namespace epic::manager::store_codec {

using json = nlohmann::ordered_json;

namespace {

[[noreturn]] void fail(const std::string& m) { throw CodecError{m}; }

const json& field(const json& j, const char* key) {
  if (!j.is_object()) fail("expected an object holding \"" + std::string(key) + "\"");
  auto it = j.find(key);
  if (it == j.end()) fail("missing field \"" + std::string(key) + "\"");
  return *it;
}

const json& get_array(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_array()) fail("field \"" + std::string(key) + "\" is not an array");
  return v;
}

const json& get_object(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_object()) fail("field \"" + std::string(key) + "\" is not an object");
  return v;
}

uint32_t get_ipv4(const json& j, const char* key) {
  const std::string s = get_string(j, key);
  auto ip = vocab::parse_ipv4(s);
  if (!ip) fail("field \"" + std::string(key) + "\": \"" + s + "\" is not an IPv4 address");
  return *ip;
}

vocab::MacAddr get_mac(const json& j, const char* key) {
  const std::string s = get_string(j, key);
  auto mac = vocab::parse_mac(s);
  if (!mac) fail("field \"" + std::string(key) + "\": \"" + s + "\" is not a MAC address");
  return *mac;
}

std::optional<uint64_t> get_optional_uint(const json& j, const char* key, uint64_t max) {
  if (!j.contains(key)) return std::nullopt;
  return get_uint(j, key, max);
}

json encode_port(const SwitchPort& p) { return {{"switch", p.switch_id}, {"port", p.port}}; }

SwitchPort decode_port(const json& j) { return {get_string(j, "switch"), get_string(j, "port")}; }

json encode_endpoint(const Endpoint& e) {
  return {{"ipv4", vocab::format_ipv4(e.ipv4)}, {"mac", vocab::format_mac(e.mac)}, {"qpn", e.qpn}};
}

Endpoint decode_endpoint(const json& j) {
  return {get_ipv4(j, "ipv4"), get_mac(j, "mac"),
          static_cast<uint32_t>(get_uint(j, "qpn", kQpnLimit - 1))};
}

json encode_tree(const IncTree& t) {
  json nodes = json::array();
  for (const TreeNode& n : t.nodes) {
    json children = json::array();
    for (const TreeChild& c : n.children) {
      json cj = {{"port", c.port},
                 {"remote", encode_endpoint(c.remote)},
                 {"local", encode_endpoint(c.local)}};
      if (c.is_rank) {
        cj["rank"] = c.first_rank;
      } else {
        cj["rank_range"] = {{"first", c.first_rank}, {"count", c.rank_count}};
        cj["child"] = encode_port(c.child_port);
      }
      children.push_back(std::move(cj));
    }
    json nj = {{"switch", n.switch_id}, {"level", n.level}, {"children", std::move(children)}};
    if (n.parent) {
      nj["parent"] = {{"port", n.parent->port},
                      {"to", encode_port(n.parent->parent_port)},
                      {"remote", encode_endpoint(n.parent->remote)},
                      {"local", encode_endpoint(n.parent->local)}};
    }
    nodes.push_back(std::move(nj));
  }
  return {{"root", t.root}, {"depth", t.depth}, {"nodes", std::move(nodes)}};
}

IncTree decode_tree(const json& j) {
  IncTree t;
  t.root = get_string(j, "root");
  t.depth = static_cast<uint32_t>(get_uint(j, "depth", 1u << 16));
  for (const json& nj : get_array(j, "nodes")) {
    TreeNode n;
    n.switch_id = get_string(nj, "switch");
    n.level = static_cast<uint32_t>(get_uint(nj, "level", 1u << 16));
    for (const json& cj : get_array(nj, "children")) {
      TreeChild c;
      c.port = get_string(cj, "port");
      c.remote = decode_endpoint(get_object(cj, "remote"));
      c.local = decode_endpoint(get_object(cj, "local"));
      if (cj.contains("rank")) {
        c.is_rank = true;
        c.first_rank = static_cast<uint32_t>(get_uint(cj, "rank", kMaxRanks - 1));
        c.rank_count = 1;
      } else {
        const json& range = get_object(cj, "rank_range");
        c.first_rank = static_cast<uint32_t>(get_uint(range, "first", kMaxRanks - 1));
        c.rank_count = static_cast<uint32_t>(get_uint(range, "count", kMaxRanks));
        c.child_port = decode_port(get_object(cj, "child"));
      }
      n.children.push_back(std::move(c));
    }
    if (nj.contains("parent")) {
      const json& pj = get_object(nj, "parent");
      n.parent = TreeParent{.port = get_string(pj, "port"),
                            .parent_port = decode_port(get_object(pj, "to")),
                            .remote = decode_endpoint(get_object(pj, "remote")),
                            .local = decode_endpoint(get_object(pj, "local"))};
    }
    t.nodes.push_back(std::move(n));
  }
  return t;
}

const char* op_name(PendingOp op) {
  switch (op) {
    case PendingOp::kNone:
      return "none";
    case PendingOp::kInstall:
      return "install";
    case PendingOp::kAttach:
      return "attach";
  }
  return "none";
}

json string_set(const std::set<SwitchId>& s) {
  json a = json::array();
  for (const auto& x : s) a.push_back(x);
  return a;
}

std::set<SwitchId> decode_string_set(const json& j, const char* key) {
  std::set<SwitchId> out;
  for (const json& x : get_array(j, key)) {
    if (!x.is_string()) fail("field \"" + std::string(key) + "\" holds a non-string");
    out.insert(x.get<std::string>());
  }
  return out;
}

}  // namespace

uint64_t get_uint(const json& j, const char* key, uint64_t max) {
  const json& v = field(j, key);
  if (!v.is_number_unsigned()) {
    fail("field \"" + std::string(key) + "\" is not a non-negative integer");
  }
  const uint64_t x = v.get<uint64_t>();
  if (x > max) {
    fail("field \"" + std::string(key) + "\" = " + std::to_string(x) + " exceeds " +
         std::to_string(max));
  }
  return x;
}

std::string get_string(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) fail("field \"" + std::string(key) + "\" is not a string");
  return v.get<std::string>();
}

json encode(const SwitchSpec& s) {
  json ports = json::array();
  for (const auto& p : s.ports) ports.push_back({{"name", p.name}, {"mtu", p.mtu}});
  return {{"record", "switch"},
          {"id", s.id},
          {"inc_ipv4", vocab::format_ipv4(s.inc_ipv4)},
          {"inc_mac", vocab::format_mac(s.inc_mac)},
          {"capacity_bytes", s.capacity_bytes},
          {"max_window", s.max_window},
          {"max_pmtu", s.max_pmtu},
          {"ports", std::move(ports)}};
}

SwitchSpec decode_switch(const json& j) {
  SwitchSpec s;
  s.id = get_string(j, "id");
  s.inc_ipv4 = get_ipv4(j, "inc_ipv4");
  s.inc_mac = get_mac(j, "inc_mac");
  s.capacity_bytes = get_uint(j, "capacity_bytes", UINT64_MAX);
  s.max_window = static_cast<uint32_t>(get_uint(j, "max_window", UINT32_MAX));
  s.max_pmtu = static_cast<uint16_t>(get_uint(j, "max_pmtu", UINT16_MAX));
  for (const json& p : get_array(j, "ports")) {
    s.ports.push_back(
        {get_string(p, "name"), static_cast<uint16_t>(get_uint(p, "mtu", UINT16_MAX))});
  }
  return s;
}

json encode(const Link& l) {
  return {{"record", "link"}, {"a", encode_port(l.a)}, {"b", encode_port(l.b)}};
}

Link decode_link(const json& j) {
  return {decode_port(get_object(j, "a")), decode_port(get_object(j, "b"))};
}

json encode(const RankAttachment& r) {
  return {{"record", "rank"},
          {"ipv4", vocab::format_ipv4(r.ipv4)},
          {"mac", vocab::format_mac(r.mac)},
          {"at", encode_port(r.at)}};
}

RankAttachment decode_rank(const json& j) {
  return {get_ipv4(j, "ipv4"), get_mac(j, "mac"), decode_port(get_object(j, "at"))};
}

json encode(const Tenant& t) {
  json quota = json::object();
  if (t.quota.max_bytes_per_switch) quota["max_bytes_per_switch"] = *t.quota.max_bytes_per_switch;
  if (t.quota.max_bytes_total) quota["max_bytes_total"] = *t.quota.max_bytes_total;
  if (t.quota.max_groups) quota["max_groups"] = *t.quota.max_groups;
  if (t.quota.max_ranks_per_group) quota["max_ranks_per_group"] = *t.quota.max_ranks_per_group;
  json reserved = json::object();
  for (const auto& [sw, n] : t.reserved) reserved[sw] = n;
  json out = {{"record", "tenant"},
              {"name", t.name},
              {"quota", std::move(quota)},
              {"reserved_bytes", std::move(reserved)}};
  if (t.default_dscp) out["default_dscp"] = *t.default_dscp;
  return out;
}

Tenant decode_tenant(const json& j) {
  Tenant t;
  t.name = get_string(j, "name");
  const json& q = get_object(j, "quota");
  auto u32 = [](std::optional<uint64_t> v) -> std::optional<uint32_t> {
    if (!v) return std::nullopt;
    return static_cast<uint32_t>(*v);
  };
  t.quota.max_bytes_per_switch = get_optional_uint(q, "max_bytes_per_switch", UINT64_MAX);
  t.quota.max_bytes_total = get_optional_uint(q, "max_bytes_total", UINT64_MAX);
  t.quota.max_groups = u32(get_optional_uint(q, "max_groups", UINT32_MAX));
  t.quota.max_ranks_per_group = u32(get_optional_uint(q, "max_ranks_per_group", UINT32_MAX));
  const json& reserved = get_object(j, "reserved_bytes");
  for (auto it = reserved.begin(); it != reserved.end(); ++it) {
    if (!it->is_number_unsigned()) {
      fail("reserved bytes on \"" + it.key() + "\" are not an unsigned integer");
    }
    t.reserved[it.key()] = it->get<uint64_t>();
  }
  if (j.contains("default_dscp")) {
    t.default_dscp = static_cast<uint8_t>(get_uint(j, "default_dscp", vocab::kMaxDscp));
  }
  return t;
}

json encode(const Group& g) {
  json ranks = json::array();
  for (const auto& r : g.request.ranks) {
    json rj = {{"rank", r.rank}, {"ipv4", vocab::format_ipv4(r.ipv4)}, {"qpn", r.qpn}};
    if (r.mac) rj["mac"] = vocab::format_mac(*r.mac);
    ranks.push_back(std::move(rj));
  }
  json grants = json::array();
  for (const auto& s : g.grants) {
    grants.push_back(
        {{"switch", s.switch_id}, {"bytes", s.bytes}, {"from_partition", s.from_partition}});
  }
  json out{{"record", "group"},
           {"id", g.id},
           {"tenant", g.request.tenant},
           {"name", g.request.name},
           {"state", std::string(group_state_name(g.state))},
           {"window", g.request.window},
           {"pmtu", g.request.pmtu},
           {"mode", static_cast<unsigned>(mode_of(g.request))},
           {"queue_timeout_ms", g.request.queue_timeout.count()},
           {"initial_psn", g.initial_psn},
           {"hop_timeout_us", g.hop_timeout_us},
           {"created_ms", g.created.count()},
           {"last_activity_ms", g.last_activity.count()},
           {"ranks", std::move(ranks)},
           {"tree", encode_tree(g.tree)},
           {"grants", std::move(grants)},
           {"pending_op", op_name(g.pending_op)},
           {"pending", string_set(g.pending)},
           {"acked", string_set(g.acked)},
           {"broken_reason", g.broken_reason}};
  if (g.request.pkey) out["pkey"] = *g.request.pkey;
  // The arithmetic by name; absent for the default (the stores written before it existed).
  if (g.request.arith.profile != vocab::AccumProfile::kFp32Arrival) {
    out["accumulator"] = std::string(vocab::to_string(g.request.arith.profile));
  }
  if (g.request.arith.dtype) out["dtype"] = std::string(vocab::to_string(*g.request.arith.dtype));
  if (g.request.dscp.value_or(0) != 0) out["dscp"] = *g.request.dscp;  // absent: 0, as before
  return out;
}

Group decode_group(const json& j) {
  Group g;
  g.id = static_cast<uint32_t>(get_uint(j, "id", UINT32_MAX));
  g.request.tenant = get_string(j, "tenant");
  g.request.name = get_string(j, "name");
  const std::string state = get_string(j, "state");
  bool known = false;
  for (GroupState s : {GroupState::kQueued, GroupState::kInstalling, GroupState::kInstalled,
                       GroupState::kReclaimed, GroupState::kBroken}) {
    if (state == group_state_name(s)) {
      g.state = s;
      known = true;
    }
  }
  if (!known) fail("unknown state \"" + state + "\"");
  g.request.window = static_cast<uint32_t>(get_uint(j, "window", UINT32_MAX));
  g.request.pmtu = static_cast<uint32_t>(get_uint(j, "pmtu", UINT32_MAX));
  // Stores written before groups had a mode hold Mode-II groups.
  g.request.mode = vocab::GroupMode::kMode2;
  if (j.contains("mode")) {
    const auto mode = static_cast<vocab::GroupMode>(get_uint(j, "mode", UINT8_MAX));
    if (!vocab::mode_error(mode).empty()) fail("mode: " + vocab::mode_error(mode));
    g.request.mode = mode;
  }
  if (j.contains("hop_timeout_us")) {
    g.hop_timeout_us = static_cast<uint32_t>(get_uint(j, "hop_timeout_us", UINT32_MAX));
    if (!vocab::hop_timeout_error(g.hop_timeout_us).empty()) {
      fail("hop_timeout_us: " + vocab::hop_timeout_error(g.hop_timeout_us));
    }
  }
  if (j.contains("pkey")) {
    const uint64_t key = get_uint(j, "pkey", UINT16_MAX);
    if (!vocab::pkey_error(static_cast<uint32_t>(key)).empty()) {
      fail("pkey: " + vocab::pkey_error(static_cast<uint32_t>(key)));
    }
    g.request.pkey = static_cast<uint16_t>(key);
  }
  if (j.contains("accumulator")) {
    const std::string name = get_string(j, "accumulator");
    const auto p = vocab::parse_profile(name);
    if (!p) fail("accumulator: \"" + name + "\" is not fp32_arrival or kulisch_fixed");
    g.request.arith.profile = *p;
  }
  if (j.contains("dtype")) {
    const std::string name = get_string(j, "dtype");
    const auto t = vocab::parse_dtype(name);
    if (!t) fail("dtype: \"" + name + "\" is not an element type");
    g.request.arith.dtype = *t;
  }
  // Stores written before groups had a traffic class hold best-effort (DSCP 0) groups.
  g.request.dscp =
      static_cast<uint8_t>(j.contains("dscp") ? get_uint(j, "dscp", vocab::kMaxDscp) : 0);
  g.request.queue_timeout =
      Millis{static_cast<int64_t>(get_uint(j, "queue_timeout_ms", INT64_MAX))};
  g.initial_psn = static_cast<uint32_t>(get_uint(j, "initial_psn", kQpnLimit - 1));
  g.created = Millis{static_cast<int64_t>(get_uint(j, "created_ms", INT64_MAX))};
  g.last_activity = Millis{static_cast<int64_t>(get_uint(j, "last_activity_ms", INT64_MAX))};
  for (const json& rj : get_array(j, "ranks")) {
    RankRequest r;
    r.rank = static_cast<uint32_t>(get_uint(rj, "rank", kMaxRanks - 1));
    r.ipv4 = get_ipv4(rj, "ipv4");
    r.qpn = static_cast<uint32_t>(get_uint(rj, "qpn", kQpnLimit - 1));
    if (rj.contains("mac")) r.mac = get_mac(rj, "mac");
    g.request.ranks.push_back(r);
  }
  g.tree = decode_tree(get_object(j, "tree"));
  for (const json& sj : get_array(j, "grants")) {
    g.grants.push_back({get_string(sj, "switch"), get_uint(sj, "bytes", UINT64_MAX),
                        get_uint(sj, "from_partition", UINT64_MAX)});
  }
  const std::string op = get_string(j, "pending_op");
  if (op == "none") {
    g.pending_op = PendingOp::kNone;
  } else if (op == "install") {
    g.pending_op = PendingOp::kInstall;
  } else if (op == "attach") {
    g.pending_op = PendingOp::kAttach;
  } else {
    fail("unknown pending_op \"" + op + "\"");
  }
  g.pending = decode_string_set(j, "pending");
  g.acked = decode_string_set(j, "acked");
  g.broken_reason = get_string(j, "broken_reason");
  return g;
}

}  // namespace epic::manager::store_codec
