#include "host/inc/manager_config.h"

#include <charconv>

#include "proto/vocab/grpc_target.h"
#include "proto/vocab/psn.h"

namespace epic::inc {

namespace {

const char* const kManagerOnly[] = {
    "INC_TENANT",           "INC_GROUP",         "INC_QUEUE_TIMEOUT_MS",
    "INC_JOIN_TIMEOUT_MS",  "INC_MANAGER_CA",    "INC_MANAGER_CERT",
    "INC_MANAGER_KEY",      "INC_HOST_FALLBACK", "INC_HOST_QPN",
    "INC_MANAGER_INSECURE", "INC_MODE",          "INC_DSCP"};

// The peer parameters inc-manager answers: setting them as well is a conflict.
const char* const kStaticPeer[] = {"INC_SWITCH_IP", "INC_SWITCH_QPN", "INC_PSN"};

// Decimal, or hexadecimal with 0x (as comm_config.cc's keys).
bool parse_u32(const std::string& s, uint32_t max, uint32_t& out) {
  uint64_t v = 0;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char* b = s.data() + (hex ? 2 : 0);
  const char* e = s.data() + s.size();
  auto [p, ec] = std::from_chars(b, e, v, hex ? 16 : 10);
  if (ec != std::errc() || p != e || b == e || v > max) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool valid_name(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char ch : s) {
    if (ch <= ' ' || ch >= 127) return false;
  }
  return true;
}

}  // namespace

std::string parse_manager_key(const std::string& key, const std::string& value,
                              ManagerOptions& out) {
  uint32_t v = 0;
  if (key == "INC_MANAGER") {
    const bool unix_path = value.rfind("unix:", 0) == 0 && value.size() > 5;
    const size_t colon = value.rfind(':');
    const bool host_port = !unix_path && colon != std::string::npos && colon > 0 &&
                           parse_u32(value.substr(colon + 1), 65535, v) && v != 0;
    if (!unix_path && !host_port) return "expected host:port or unix:/path of inc-manager";
    out.address = value;
  } else if (key == "INC_TENANT") {
    if (!valid_name(value, 64)) return "expected a tenant name (1-64 printable characters)";
    out.tenant = value;
  } else if (key == "INC_GROUP") {
    if (!valid_name(value, 128)) return "expected a group name (1-128 printable characters)";
    out.group = value;
  } else if (key == "INC_QUEUE_TIMEOUT_MS") {
    if (!parse_u32(value, 86'400'000, v)) return "expected milliseconds 0..86400000";
    out.queue_timeout_ms = v;
  } else if (key == "INC_JOIN_TIMEOUT_MS") {
    if (!parse_u32(value, 86'400'000, v) || v == 0) return "expected milliseconds 1..86400000";
    out.join_timeout = std::chrono::milliseconds(v);
  } else if (key == "INC_MANAGER_CA" || key == "INC_MANAGER_CERT" || key == "INC_MANAGER_KEY") {
    if (value.empty()) return "expected a PEM file";
    (key == "INC_MANAGER_CA"     ? out.ca_file
     : key == "INC_MANAGER_CERT" ? out.cert_file
                                 : out.key_file) = value;
  } else if (key == "INC_MANAGER_INSECURE") {
    if (value != "0" && value != "1") return "expected 1 (plaintext to any address) or 0";
    out.insecure = value == "1";
  } else if (key == "INC_HOST_FALLBACK") {
    if (value != "0" && value != "1") return "expected 1 (accept host collectives) or 0";
    out.host_fallback = value == "1";
  } else if (key == "INC_MODE") {
    // The group's EPIC mode, asked of the manager (context.proto GroupMode: the value is the
    // mode's number). A static peer's mode is the switch's config, not the rank's.
    if (value != "2" && value != "3") return "expected 2 (Mode-II) or 3 (Mode-III)";
    out.mode = value == "3" ? 3 : 2;
  } else if (key == "INC_HOST_QPN") {
    if (!parse_u32(value, 0xFFFFFE, v) || v == 0) return "expected a QPN 1..0xfffffe (and +1)";
    out.host_qpn = v;
  }
  return "";
}

std::string check_manager_keys(const std::map<std::string, std::string>& pairs, CommConfig& c) {
  ManagerOptions& m = c.manager;
  for (const char* k : kStaticPeer) {
    if (pairs.count(k)) {
      return std::string(k) + " conflicts with INC_MANAGER=" + m.address +
             " (the manager answers the switch's peer parameters): remove one of them";
    }
  }
  if (m.group.empty()) {
    return "INC_MANAGER=" + m.address +
           " needs INC_GROUP (the group's name, the same on every "
           "rank)";
  }
  if (m.ca_file.empty() && m.cert_file.empty() && !m.insecure &&
      !vocab::is_local_grpc_target(m.address)) {
    return "INC_MANAGER=" + m.address +
           " is not a unix socket or loopback address: set INC_MANAGER_CA (and "
           "INC_MANAGER_CERT/INC_MANAGER_KEY for mutual TLS), or INC_MANAGER_INSECURE=1 for "
           "plaintext";
  }
  if (m.cert_file.empty() != m.key_file.empty()) {
    return std::string(m.cert_file.empty() ? "INC_MANAGER_KEY" : "INC_MANAGER_CERT") + " needs " +
           (m.cert_file.empty() ? "INC_MANAGER_CERT" : "INC_MANAGER_KEY") +
           " (a client certificate comes with its key)";
  }
  const host::TransportOptions& t = c.transport;
  if (t.kind == "soft") {
    if (const std::string why = host::validate_local(t); !why.empty()) {
      return why + " (INC_TRANSPORT=soft needs INC_IFACE, INC_MAC, INC_IP and INC_QPN)";
    }
    if (m.host_fallback && m.host_qpn == 0) {
      if (t.qpn + 3 > vocab::kQpnMask)
        return "INC_QPN leaves no room for the host ring's QPNs +2, +3";
      m.host_qpn = t.qpn + 2;
    }
  }
  return "";
}

std::string manager_only_key(const std::map<std::string, std::string>& pairs) {
  for (const char* k : kManagerOnly) {
    if (pairs.count(k)) return k;
  }
  return "";
}

}  // namespace epic::inc
