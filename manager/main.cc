// inc-manager: the EPIC control plane's central controller (docs/design.md, docs/manager.md).
// Serves the rank rendezvous (JoinGroup) and the operators' API to incctl, and the IncAgents'
// streams; keeps its state in an embedded store under --state-dir; runs until SIGINT/SIGTERM.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "manager/service/server.h"
#include "manager/service/topology_file.h"

namespace {

using namespace epic::manager;
using namespace epic::manager::service;

int fail(const std::string& message) {
  std::fprintf(stderr, "inc-manager: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  ServerOptions o;
  ServiceOptions& s = o.service;
  std::string topology_file, tenants_file, edge_disjoint = "prefer", log_level = "info";
  std::string socket_mode = "0600";
  bool no_state = false;
  s.state_dir = kDefaultStateDir;
  uint64_t reclaim_idle_ms = 0, max_queue_wait_ms = 60'000, rendezvous_ms = 60'000;
  uint64_t heartbeat_timeout_ms = 10'000, switch_grace_ms = 600'000, install_timeout_ms = 15'000;
  // Every duration flag is checked against a range (a negative number must not wrap to 2^64):
  // at most 30 days.
  constexpr uint64_t kMaxMs = 30ull * 24 * 3600 * 1000;

  CLI::App app{
      "inc-manager: EPIC's control plane — rank rendezvous, IncTrees, INC memory grants, "
      "IncAgents.\nCallers are authorised by role (docs/security.md): with mutual TLS "
      "(--tls-cert, --tls-key, --tls-ca) by the role their certificate names (admin, "
      "tenant:T, agent:S); without client certificates every caller is the operator, which "
      "is served only on a unix socket (mode --socket-mode) unless --insecure."};
  app.add_option("--listen", o.listen, "unix:/path or host:port (TCP needs mutual TLS)")
      ->capture_default_str();
  app.add_option("--socket-mode", socket_mode,
                 "file mode (octal) of a unix:/path socket: who may connect as the operator")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v.empty() || v.size() > 4 || v.find_first_not_of("01234567") != v.npos ||
                std::stoul(v, nullptr, 8) > 0777) {
              return "Value " + v + " is not an octal file mode in 0..0777";
            }
            return "";
          },
          "OCTAL"))
      ->capture_default_str();
  CLI::Option* state_dir =
      app.add_option("--state-dir", s.state_dir,
                     "directory of the embedded store (manager-store.jsonl; made 0700 if missing); "
                     "state survives a restart")
          ->capture_default_str();
  app.add_flag("--no-state", no_state,
               "keep nothing on disk (tests, throw-away labs): a restarted manager knows no "
               "group, and the agents keep theirs as foreign groups")
      ->excludes(state_dir);
  app.add_option("--topology", topology_file,
                 "YAML/JSON file of switch-to-switch links and rank addresses (docs/manager.md)")
      ->check(CLI::ExistingFile);
  app.add_option("--tenants", tenants_file, "YAML/JSON file of tenants, quotas, partitions")
      ->check(CLI::ExistingFile);
  app.add_option("--edge-disjoint", edge_disjoint, "Edge-Disjoint Trees: prefer|require|ignore")
      ->check(CLI::IsMember({"prefer", "require", "ignore"}))
      ->capture_default_str();
  double hot_link_load = 0.5;
  app.add_option("--hot-link-load", hot_link_load,
                 "load-aware placement: a switch-to-switch link whose measured transmit rate (from "
                 "the agents' heartbeats) reaches this fraction of its declared speed is hot, and "
                 "new IncTrees avoid it where they can")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  app.add_option("--reclaim-idle-ms", reclaim_idle_ms,
                 "Temporal Mux: reclaim the slots of groups idle this long for groups that do "
                 "not fit; 0: never reclaim")
      ->check(CLI::Range(uint64_t{0}, kMaxMs))
      ->capture_default_str();
  app.add_option("--max-queue-wait-ms", max_queue_wait_ms,
                 "cap on a join's queue_timeout_ms while it waits for INC memory")
      ->check(CLI::Range(uint64_t{0}, kMaxMs))
      ->capture_default_str();
  app.add_option("--max-request-bytes", o.max_request_bytes,
                 "the largest request read; a larger one is answered RESOURCE_EXHAUSTED")
      ->check(CLI::Range(kMinMaxRequestBytes, kMaxMaxRequestBytes))
      ->capture_default_str();
  app.add_option("--max-pending-joins-per-tenant", s.max_pending_joins_per_tenant,
                 "JoinGroup calls of one tenant that may wait at once (for their group's other "
                 "ranks or for INC memory); more are answered RESOURCE_EXHAUSTED")
      ->check(CLI::Range(uint32_t{1}, uint32_t{1} << 20))
      ->capture_default_str();
  app.add_option("--max-agent-streams", s.max_agent_streams,
                 "agent streams open at once; more are answered RESOURCE_EXHAUSTED")
      ->check(CLI::Range(uint32_t{1}, uint32_t{1} << 16))
      ->capture_default_str();
  app.add_option("--rendezvous-timeout-ms", rendezvous_ms,
                 "a group whose ranks have not all joined within this fails")
      ->check(CLI::Range(uint64_t{1}, kMaxMs))
      ->capture_default_str();
  app.add_option("--heartbeat-timeout-ms", heartbeat_timeout_ms,
                 "close an agent stream silent this long (the switch keeps its groups)")
      ->check(CLI::Range(uint64_t{100}, kMaxMs))
      ->capture_default_str();
  app.add_option("--switch-grace-ms", switch_grace_ms,
                 "remove a switch (breaking its groups) only after its agent has been away this "
                 "long; 0: never")
      ->check(CLI::Range(uint64_t{0}, kMaxMs))
      ->capture_default_str();
  app.add_option("--install-timeout-ms", install_timeout_ms,
                 "roll back an install not acknowledged by every agent within this")
      ->check(CLI::Range(uint64_t{1}, kMaxMs))
      ->capture_default_str();
  app.add_option("--tls-cert", o.tls.cert, "server certificate chain (PEM)");
  app.add_option("--tls-key", o.tls.key, "server private key (PEM)");
  app.add_option("--tls-ca", o.tls.ca,
                 "CA (PEM) that client certificates must chain to: mutual TLS");
  app.add_flag("--insecure", o.insecure,
               "serve without client certificates on a TCP address: everyone who reaches it is "
               "the operator (trusted lab networks only)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.set_version_flag("--version", "inc-manager 0.1.0");
  CLI11_PARSE(app, argc, argv);

  o.socket_mode = static_cast<uint32_t>(std::stoul(socket_mode, nullptr, 8));
  if (no_state) s.state_dir.clear();
  s.policy.edge_disjoint = edge_disjoint == "require"  ? EdgeDisjoint::kRequire
                           : edge_disjoint == "ignore" ? EdgeDisjoint::kIgnore
                                                       : EdgeDisjoint::kPrefer;
  if (reclaim_idle_ms > 0) s.policy.reclaim_idle_after = Millis(reclaim_idle_ms);
  s.policy.hot_link_load = hot_link_load;
  s.policy.max_queue_wait = Millis(max_queue_wait_ms);
  s.rendezvous_timeout = Millis(rendezvous_ms);
  s.heartbeat_timeout = Millis(heartbeat_timeout_ms);
  s.heartbeat_interval = Millis(std::max<uint64_t>(100, heartbeat_timeout_ms / 5));
  s.switch_grace = Millis(switch_grace_ms);
  s.install_timeout = Millis(install_timeout_ms);
  for (const std::string& file : {topology_file, tenants_file}) {
    if (file.empty()) continue;
    auto d = load_declarations(file);
    if (!d.ok()) return fail(d.error().message);
    auto& v = d.value();
    s.declared.links.insert(s.declared.links.end(), v.links.begin(), v.links.end());
    s.declared.ranks.insert(s.declared.ranks.end(), v.ranks.begin(), v.ranks.end());
    for (const auto& t : v.tenants) {  // one declaration per tenant, across the files too
      for (const auto& seen : s.declared.tenants) {
        if (seen.name == t.name) {
          return fail(file + ": tenant '" + t.name + "' is also declared in " + topology_file);
        }
      }
    }
    s.declared.tenants.insert(s.declared.tenants.end(), v.tenants.begin(), v.tenants.end());
    s.declared.speeds.links.insert(v.speeds.links.begin(), v.speeds.links.end());
    s.declared.speeds.ranks.insert(v.speeds.ranks.begin(), v.speeds.ranks.end());
    if (v.default_mode) {
      if (s.declared.default_mode) {
        return fail(file + ": defaults.mode is also declared in " + topology_file);
      }
      s.declared.default_mode = v.default_mode;
    }
  }

  auto log = spdlog::stderr_logger_mt("inc-manager");
  log->set_level(spdlog::level::from_str(log_level));
  log->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l inc-manager: %v");
  log->flush_on(spdlog::level::info);

  // Block the signals in every thread (gRPC's and the io thread inherit the mask); the main
  // thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto server = ManagerServer::start(o, log);
  if (!server.ok()) return fail(server.error().to_string());
  int sig = 0;
  sigwait(&signals, &sig);
  log->info("signal {}: shutting down", sig);
  server.value()->stop();
  return 0;
}
