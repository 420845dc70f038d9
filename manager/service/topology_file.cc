#include "manager/service/topology_file.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "manager/service/convert_in.h"

namespace epic::manager::service {
namespace {

// Bounds of a declared link speed: 10 Tb/s, 1 s.
constexpr double kMaxLinkGbps = 10'000;
constexpr double kMaxLinkRttUs = 1'000'000;

struct Context {
  const std::string& file;
  Error error(const std::string& path, const std::string& why) const {
    return make_error(ErrorCode::kInvalidArgument, file + ": " + path + ": " + why);
  }
};

Status only_keys(const Context& c, const YAML::Node& n, const std::string& path,
                 const std::set<std::string>& allowed) {
  if (!n.IsMap()) return c.error(path, "expected a mapping");
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    if (!allowed.count(key)) return c.error(path, "unknown key '" + key + "'");
  }
  return {};
}

Result<std::string> scalar(const Context& c, const YAML::Node& n, const std::string& path) {
  if (!n || !n.IsScalar()) return c.error(path, "required (a string)");
  return n.as<std::string>();
}

template <class T>
Result<T> number(const Context& c, const YAML::Node& n, const std::string& path) {
  try {
    const auto v = n.as<long long>();
    if (v < 0 || static_cast<unsigned long long>(v) > std::numeric_limits<T>::max()) {
      return c.error(path, "out of range");
    }
    return static_cast<T>(v);
  } catch (const YAML::Exception&) {
    return c.error(path, "expected a non-negative integer");
  }
}

// A link's bandwidth_gbps / rtt_us: a number > 0 and at most `most`.
Result<double> positive(const Context& c, const YAML::Node& n, const std::string& path, double most,
                        const char* unit) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    return c.error(path, "expected a number of " + std::string(unit) + " > 0");
  }
  if (!std::isfinite(v) || v <= 0) {
    return c.error(path, "must be > 0 (" + std::string(unit) + "), not " + n.as<std::string>());
  }
  if (v > most) {
    return c.error(path, n.as<std::string>() + " " + unit + " is out of range (at most " +
                             std::to_string(static_cast<long long>(most)) + ")");
  }
  return v;
}

// The optional bandwidth_gbps and rtt_us of the link declared at `n` (kDefaultLinkSpeed's
// otherwise); nullopt when it declares neither.
Result<std::optional<LinkSpeed>> link_speed(const Context& c, const YAML::Node& n,
                                            const std::string& path) {
  if (!n.IsMap() || (!n["bandwidth_gbps"] && !n["rtt_us"])) return std::optional<LinkSpeed>{};
  LinkSpeed speed = kDefaultLinkSpeed;
  if (n["bandwidth_gbps"]) {
    auto v = positive(c, n["bandwidth_gbps"], path + ".bandwidth_gbps", kMaxLinkGbps, "Gb/s");
    if (!v.ok()) return v.error();
    speed.bandwidth_gbps = v.value();
  }
  if (n["rtt_us"]) {
    auto v = positive(c, n["rtt_us"], path + ".rtt_us", kMaxLinkRttUs, "µs");
    if (!v.ok()) return v.error();
    speed.rtt_us = v.value();
  }
  return std::optional<LinkSpeed>{speed};
}

// Errors from convert_in carry "field: why"; prefix them with the file.
Error in_file(const Context& c, const std::string& path, const Error& e) {
  return c.error(path, e.message);
}

Status parse_links(const Context& c, const YAML::Node& links, Declared& out) {
  if (!links.IsSequence()) return c.error("links", "expected a list");
  for (size_t i = 0; i < links.size(); ++i) {
    const std::string path = "links[" + std::to_string(i) + "]";
    const YAML::Node& n = links[i];
    YAML::Node a, b;
    if (n.IsSequence() && n.size() == 2) {
      a = n[0];
      b = n[1];
    } else {
      if (Status s = only_keys(c, n, path, {"a", "b", "bandwidth_gbps", "rtt_us"}); !s.ok()) {
        return s;
      }
      a = n["a"];
      b = n["b"];
    }
    auto as = scalar(c, a, path + ".a");
    if (!as.ok()) return as.error();
    auto bs = scalar(c, b, path + ".b");
    if (!bs.ok()) return bs.error();
    auto pa = parse_switch_port("a", as.value());
    if (!pa.ok()) return in_file(c, path, pa.error());
    auto pb = parse_switch_port("b", bs.value());
    if (!pb.ok()) return in_file(c, path, pb.error());
    Link l{pa.value(), pb.value()};
    if (l.a == l.b) return c.error(path, "a link joins two different ports");
    if (l.b < l.a) std::swap(l.a, l.b);
    auto speed = link_speed(c, n, path);
    if (!speed.ok()) return speed.error();
    if (speed.value()) out.speeds.links[l] = *speed.value();
    out.links.push_back(l);
  }
  return {};
}

Status parse_ranks(const Context& c, const YAML::Node& ranks, Declared& out) {
  if (!ranks.IsSequence()) return c.error("ranks", "expected a list");
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string path = "ranks[" + std::to_string(i) + "]";
    const YAML::Node& n = ranks[i];
    if (Status s = only_keys(c, n, path, {"ipv4", "mac", "at", "bandwidth_gbps", "rtt_us"});
        !s.ok()) {
      return s;
    }
    pb::RankAttachment r;
    for (const char* key : {"ipv4", "mac", "at"}) {
      auto v = scalar(c, n[key], path + "." + key);
      if (!v.ok()) return v.error();
      if (std::string(key) == "ipv4") r.set_ipv4(v.value());
      if (std::string(key) == "mac") r.set_mac(v.value());
      if (std::string(key) == "at") {
        auto at = parse_switch_port("at", v.value());
        if (!at.ok()) return in_file(c, path, at.error());
        r.mutable_at()->set_switch_id(at.value().switch_id);
        r.mutable_at()->set_port(at.value().port);
      }
    }
    auto a = attachment_from("", r);
    if (!a.ok()) return in_file(c, path, a.error());
    auto speed = link_speed(c, n, path);
    if (!speed.ok()) return speed.error();
    if (speed.value()) out.speeds.ranks[a.value().ipv4] = *speed.value();
    out.ranks.push_back(a.value());
  }
  return {};
}

Status parse_tenants(const Context& c, const YAML::Node& tenants, Declared& out) {
  if (!tenants.IsSequence()) return c.error("tenants", "expected a list");
  const size_t first = out.tenants.size();
  for (size_t i = 0; i < tenants.size(); ++i) {
    const std::string path = "tenants[" + std::to_string(i) + "]";
    const YAML::Node& n = tenants[i];
    for (const char* old : {"max_slots_per_switch", "max_slots_total", "reserved"}) {
      if (n.IsMap() && n[old]) {
        return c.error(path + "." + old,
                       std::string("slots are no longer counted: use ") +
                           (std::string(old) == "reserved" ? "reserved_bytes"
                                                           : "max_bytes" + std::string(old + 9)) +
                           " (bytes of switch memory)");
      }
    }
    if (Status s = only_keys(c, n, path,
                             {"name", "max_bytes_per_switch", "max_bytes_total", "max_groups",
                              "max_ranks_per_group", "reserved_bytes", "default_dscp"});
        !s.ok()) {
      return s;
    }
    pb::Tenant t;
    auto name = scalar(c, n["name"], path + ".name");
    if (!name.ok()) return name.error();
    t.set_name(name.value());
    auto* q = t.mutable_quota();
    if (n["max_bytes_per_switch"]) {
      auto v = number<uint64_t>(c, n["max_bytes_per_switch"], path + ".max_bytes_per_switch");
      if (!v.ok()) return v.error();
      q->set_max_bytes_per_switch(v.value());
    }
    if (n["max_bytes_total"]) {
      auto v = number<uint64_t>(c, n["max_bytes_total"], path + ".max_bytes_total");
      if (!v.ok()) return v.error();
      q->set_max_bytes_total(v.value());
    }
    if (n["max_groups"]) {
      auto v = number<uint32_t>(c, n["max_groups"], path + ".max_groups");
      if (!v.ok()) return v.error();
      q->set_max_groups(v.value());
    }
    if (n["max_ranks_per_group"]) {
      auto v = number<uint32_t>(c, n["max_ranks_per_group"], path + ".max_ranks_per_group");
      if (!v.ok()) return v.error();
      q->set_max_ranks_per_group(v.value());
    }
    if (n["default_dscp"]) {
      auto v = number<uint32_t>(c, n["default_dscp"], path + ".default_dscp");
      if (!v.ok()) return v.error();
      t.set_default_dscp(v.value());  // checked (0..63) with the rest of the tenant
    }
    if (const YAML::Node& r = n["reserved_bytes"]) {
      if (!r.IsMap()) return c.error(path + ".reserved_bytes", "expected a mapping switch: bytes");
      for (const auto& kv : r) {
        const std::string sw = kv.first.as<std::string>();
        auto v = number<uint64_t>(c, kv.second, path + ".reserved_bytes." + sw);
        if (!v.ok()) return v.error();
        (*t.mutable_reserved_bytes())[sw] = v.value();
      }
    }
    for (size_t k = first; k < out.tenants.size(); ++k) {
      if (out.tenants[k].name == t.name()) {  // never silently the second one
        return c.error(path + ".name", "'" + t.name() + "' is declared twice (also tenants[" +
                                           std::to_string(k - first) + "])");
      }
    }
    auto tenant = tenant_from("", t);
    if (!tenant.ok()) return in_file(c, path, tenant.error());
    out.tenants.push_back(tenant.value());
  }
  return {};
}

// defaults: {mode: 2|3} — the mode of a group whose ranks do not ask for one.
Status parse_defaults(const Context& c, const YAML::Node& n, Declared& out) {
  if (Status s = only_keys(c, n, "defaults", {"mode"}); !s.ok()) return s;
  if (const YAML::Node& m = n["mode"]) {
    const std::string text = m.IsScalar() ? m.as<std::string>() : "(not a number)";
    if (text != "2" && text != "3") {
      return c.error("defaults.mode", "expected 2 (Mode-II) or 3 (Mode-III), not '" + text + "'");
    }
    out.default_mode = text == "3" ? vocab::GroupMode::kMode3 : vocab::GroupMode::kMode2;
  }
  return {};
}

}  // namespace

Result<Declared> parse_declarations(std::string_view text, const std::string& name) {
  const Context c{name};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kInvalidArgument, name + ": " + e.what());
  }
  Declared out;
  if (root.IsNull()) return out;
  if (Status s = only_keys(c, root, "(top)", {"defaults", "links", "ranks", "tenants"}); !s.ok()) {
    return s.error();
  }
  if (root["defaults"]) {
    if (Status s = parse_defaults(c, root["defaults"], out); !s.ok()) return s.error();
  }
  if (root["links"]) {
    if (Status s = parse_links(c, root["links"], out); !s.ok()) return s.error();
  }
  if (root["ranks"]) {
    if (Status s = parse_ranks(c, root["ranks"], out); !s.ok()) return s.error();
  }
  if (root["tenants"]) {
    if (Status s = parse_tenants(c, root["tenants"], out); !s.ok()) return s.error();
  }
  return out;
}

Result<Declared> load_declarations(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return parse_declarations(s.str(), path);
}

}  // namespace epic::manager::service
