#include "daemon/config/manager_validate.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "proto/vocab/addr.h"
#include "proto/vocab/grpc_target.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/memory.h"

namespace epic::incd {

std::optional<ManagerConfig> validate_manager(const inc::v1::IncdConfig::Manager& m,
                                              const SwitchConfig& sw,
                                              const std::vector<engine::GroupConfig>& groups,
                                              Errors& errors) {
  const size_t errors_before = errors.size();
  const auto fail = [&](const char* field, std::string message) {
    errors.push_back({std::string("manager.") + field, std::move(message)});
  };
  ManagerConfig c;
  c.address = m.address();
  if (c.address.empty())
    fail("address",
         "required (inc-manager's gRPC target: host:port, dns:///name:port or "
         "unix:/path)");
  c.switch_id = m.switch_id();
  const bool id_chars = std::all_of(c.switch_id.begin(), c.switch_id.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
  });
  if (c.switch_id.empty() || c.switch_id.size() > 64 || !id_chars)
    fail("switch_id", quote(c.switch_id) + " is not 1..64 of [A-Za-z0-9._-] (e.g. leaf0)");

  if (sw.inc_addresses.empty()) {
    fail("inc_ipv4", "the manager needs an INC address: switch.inc_addresses is empty");
  } else if (m.inc_ipv4().empty()) {
    c.inc = sw.inc_addresses.front();
  } else if (const auto ip = check_ipv4(m.inc_ipv4(), "manager.inc_ipv4", errors)) {
    const auto it = std::find_if(sw.inc_addresses.begin(), sw.inc_addresses.end(),
                                 [&](const auto& a) { return a.ipv4 == *ip; });
    if (it == sw.inc_addresses.end()) {
      fail("inc_ipv4", quote(m.inc_ipv4()) + " is not one of switch.inc_addresses");
    } else {
      c.inc = *it;
    }
  }

  if (m.has_max_window()) c.max_window = m.max_window();
  if (!vocab::valid_window(c.max_window))
    fail("max_window", std::to_string(c.max_window) + " is not a power of two in 1.." +
                           std::to_string(vocab::kMaxWindow));
  if (m.has_max_pmtu()) {
    const uint32_t p = m.max_pmtu();
    if (vocab::valid_pmtu(p)) {
      c.max_pmtu = static_cast<uint16_t>(p);
    } else {
      fail("max_pmtu", std::to_string(p) + " is not one of " + std::string(vocab::kPmtuChoices));
    }
  }
  if (m.has_slot_capacity()) {
    fail("slot_capacity",
         "slots are no longer counted: set manager.memory_capacity_bytes (bytes; a group "
         "with window W and pmtu P holds 2*W*(3*P + 32))");
  }
  if (m.has_memory_capacity_bytes()) c.memory_capacity_bytes = m.memory_capacity_bytes();
  if (c.memory_capacity_bytes == 0) fail("memory_capacity_bytes", "must be >= 1");
  // The static groups take their memory first, in file order: the first that does not fit is
  // named.
  uint64_t used = 0;
  for (size_t i = 0; i < groups.size() && c.memory_capacity_bytes > 0; ++i) {
    const engine::GroupConfig& g = groups[i];
    const uint64_t need = vocab::group_memory_bytes(g.window, g.pmtu, g.arith, g.num_ranks);
    if (need > c.memory_capacity_bytes - used) {
      fail("memory_capacity_bytes",
           "static group " + std::to_string(g.group_id) + " needs " + std::to_string(need) +
               " bytes (window " + std::to_string(g.window) + ", pmtu " + std::to_string(g.pmtu) +
               "), " + std::to_string(c.memory_capacity_bytes - used) + " free (capacity " +
               std::to_string(c.memory_capacity_bytes) + ", " + std::to_string(used) +
               " held by the static groups before it)");
      break;
    }
    used += need;
  }

  if (m.has_heartbeat_ms()) c.heartbeat_ms = m.heartbeat_ms();
  if (c.heartbeat_ms == 0 || c.heartbeat_ms > 60000)
    fail("heartbeat_ms", std::to_string(c.heartbeat_ms) + " is outside 1..60000");
  if (m.has_reconnect_initial_ms()) c.reconnect_initial_ms = m.reconnect_initial_ms();
  if (m.has_reconnect_max_ms()) c.reconnect_max_ms = m.reconnect_max_ms();
  if (c.reconnect_initial_ms == 0) fail("reconnect_initial_ms", "must be >= 1");
  if (c.reconnect_max_ms < c.reconnect_initial_ms)
    fail("reconnect_max_ms", std::to_string(c.reconnect_max_ms) +
                                 " is below reconnect_initial_ms " +
                                 std::to_string(c.reconnect_initial_ms));
  if (m.has_reconnect_jitter()) c.reconnect_jitter = m.reconnect_jitter();
  if (!(c.reconnect_jitter >= 0.0 && c.reconnect_jitter <= 1.0)) {  // NaN fails too
    char text[32];
    std::snprintf(text, sizeof text, "%g", c.reconnect_jitter);
    fail("reconnect_jitter", std::string(text) + " is outside [0, 1]");
  }
  if (m.has_keepalive_ms()) c.keepalive_ms = m.keepalive_ms();
  if (c.keepalive_ms != 0 && (c.keepalive_ms < 1000 || c.keepalive_ms > 3'600'000))
    fail("keepalive_ms", std::to_string(c.keepalive_ms) + " is outside 1000..3600000 (0: off)");

  const auto& t = m.tls();
  c.tls = {
      t.enabled() || !t.root_ca_file().empty() || !t.cert_file().empty() || !t.key_file().empty(),
      t.root_ca_file(), t.cert_file(), t.key_file(), t.server_name()};
  if (!c.tls.enabled && !m.insecure() && !c.address.empty() &&
      !vocab::is_local_grpc_target(c.address)) {
    fail("address", quote(c.address) +
                        " is not a unix socket or loopback address: set manager.tls (root_ca_file, "
                        "and cert_file/key_file for mutual TLS), or manager.insecure: true for "
                        "plaintext");
  }
  if (c.tls.cert_file.empty() != c.tls.key_file.empty())
    fail(c.tls.cert_file.empty() ? "tls.cert_file" : "tls.key_file",
         "a client certificate and its key go together (set both cert_file and key_file)");

  if (errors.size() != errors_before) return std::nullopt;
  return c;
}

}  // namespace epic::incd
