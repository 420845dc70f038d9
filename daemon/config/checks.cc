#include "daemon/config/checks.h"

#include <cstdio>

#include "proto/vocab/addr.h"

namespace epic::incd {

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

std::optional<uint32_t> check_ipv4(const std::string& s, const std::string& path, Errors& errors) {
  if (s.empty()) {
    errors.push_back({path, "required (dotted quad, e.g. 10.77.0.1)"});
    return std::nullopt;
  }
  const std::optional<uint32_t> a = vocab::parse_ipv4(s);
  if (!a) {
    errors.push_back({path, quote(s) + " is not an IPv4 address (dotted quad, e.g. 10.77.0.1)"});
    return std::nullopt;
  }
  if (!vocab::is_unicast_ipv4(*a)) {
    errors.push_back({path, quote(s) + " is not a unicast host address"});
    return std::nullopt;
  }
  return a;
}

std::optional<vocab::MacAddr> check_mac(const std::string& s, const std::string& path,
                                        Errors& errors) {
  if (s.empty()) {
    errors.push_back({path, "required (e.g. 02:00:00:00:00:01)"});
    return std::nullopt;
  }
  const std::optional<vocab::MacAddr> m = vocab::parse_mac(s);
  if (!m) {
    errors.push_back({path, quote(s) +
                                " is not a MAC address (six hex bytes separated by colons, e.g. "
                                "02:00:00:00:00:01)"});
    return std::nullopt;
  }
  if (((*m)[0] & 1) != 0) {
    errors.push_back({path, quote(s) +
                                " is a multicast MAC (the low bit of the first byte is set); a "
                                "unicast MAC is required"});
    return std::nullopt;
  }
  if (*m == vocab::MacAddr{}) {
    errors.push_back({path, quote(s) + " is the all-zero MAC; a unicast MAC is required"});
    return std::nullopt;
  }
  return m;
}

SwitchView SwitchView::of(const std::vector<PortConfig>& ports, const SwitchConfig& sw) {
  SwitchView v;
  v.ports = ports;
  for (size_t i = 0; i < ports.size(); ++i) {
    if (!ports[i].name.empty()) v.port_of.emplace(ports[i].name, i);
  }
  for (size_t i = 0; i < sw.inc_addresses.size(); ++i) {
    const switching::IncAddress& a = sw.inc_addresses[i];
    v.inc_macs.emplace(a.ipv4, std::pair{std::optional{a.mac}, static_cast<int>(i)});
    v.inc_address_text.push_back(vocab::format_ipv4(a.ipv4));
  }
  return v;
}

std::optional<uint16_t> port_ref(const SwitchView& sw, const std::string& name,
                                 const std::string& path, Errors& errors) {
  if (name.empty()) {
    errors.push_back({path, "required (the name of one of ports)"});
    return std::nullopt;
  }
  if (const auto it = sw.port_of.find(name); it != sw.port_of.end()) {
    return static_cast<uint16_t>(it->second);
  }
  std::string known;
  for (const PortConfig& p : sw.ports) {
    if (p.name.empty()) continue;
    if (!known.empty()) known += ", ";
    known += p.name;
  }
  errors.push_back({path, "no port named " + quote(name) +
                              " (ports: " + (known.empty() ? "none" : known) + ")"});
  return std::nullopt;
}

}  // namespace epic::incd
