// incd: the EPIC switch daemon. Loads and validates its configuration, brings
// up the DPDK datapath (ports, polled workers running the switch pipeline and
// the Mode-II engine), serves Prometheus /metrics, logs what an operator
// needs (ports, groups, stalls) off the packet path, runs the IncAgent (when
// a manager is configured) on its control thread, and shuts down cleanly on
// SIGINT/SIGTERM. See docs/incd.md and docs/agent.md.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <map>

#include "agent/client/inc_agent.h"
#include "agent/core/action_applier.h"
#include "agent/core/group_table.h"
#include "daemon/config/checks.h"
#include "daemon/config/config.h"
#include "daemon/datapath_options.h"
#include "daemon/datapath_sink.h"
#include "daemon/datapath_telemetry.h"
#include "daemon/group_status.h"
#include "daemon/metrics.h"
#include "proto/vocab/addr.h"

namespace {

using namespace epic;

std::shared_ptr<spdlog::logger> make_logger(const incd::LogConfig& c) {
  std::shared_ptr<spdlog::logger> log;
  if (c.file.empty()) {
    log = spdlog::stderr_logger_mt("incd");
  } else {
    log = spdlog::basic_logger_mt("incd", c.file);
  }
  log->set_level(spdlog::level::from_str(c.level));
  log->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l incd: %v");
  log->flush_on(spdlog::level::info);
  return log;
}

// Logs each group's stall once when it starts and once when it ends, and a Mode-III group's
// failure (a hop past its retry limit) once.
class StallWatch {
 public:
  StallWatch(const dpdk::Datapath& dp, uint64_t stall_after_ns, spdlog::logger& log)
      : dp_(dp), stall_after_ns_(stall_after_ns), log_(log) {}
  void poll() {
    auto t = std::make_unique<dpdk::WorkerTelemetry>();
    for (unsigned w = 0; w < dp_.workers(); ++w) {
      if (!dp_.telemetry(w, *t)) continue;
      for (uint32_t i = 0; i < t->ngroups; ++i) {
        const engine::GroupConfig* cfg = nullptr;
        for (const auto& g : dp_.config().groups) {
          if (g.group_id == t->groups[i].group_id) cfg = &g;
        }
        const incd::GroupStatus s =
            incd::group_status(t->groups[i], w, t->now_ns, stall_after_ns_, cfg);
        bool& was = stalled_[s.group_id];
        if (s.stalled && !was) log_.warn("{}", incd::describe(s));
        if (!s.stalled && was) log_.info("group {} makes progress again", s.group_id);
        was = s.stalled;
        bool& failed = failed_[s.group_id];
        const bool failed_now = t->groups[i].stats.hop_failures > 0;  // 0 again once reinstalled
        if (failed_now && !failed) {
          log_.error(
              "group {} failed: a Mode-III hop passed its retry limit (the peer stopped "
              "answering); its collectives end in errors until the group is installed again",
              s.group_id);
        }
        failed = failed_now;
      }
    }
  }

 private:
  const dpdk::Datapath& dp_;
  uint64_t stall_after_ns_;
  spdlog::logger& log_;
  std::map<uint32_t, bool> stalled_;
  std::map<uint32_t, bool> failed_;
};

agent::AgentOptions agent_options(const incd::ManagerConfig& m) {
  agent::AgentOptions o;
  o.address = m.address;
  o.tls = {m.tls.enabled, m.tls.root_ca_file, m.tls.cert_file, m.tls.key_file, m.tls.server_name};
  o.heartbeat_interval = std::chrono::milliseconds(m.heartbeat_ms);
  o.reconnect_initial = std::chrono::milliseconds(m.reconnect_initial_ms);
  o.reconnect_max = std::chrono::milliseconds(m.reconnect_max_ms);
  o.reconnect_jitter = m.reconnect_jitter;
  o.keepalive = std::chrono::milliseconds(m.keepalive_ms);
  o.seed = std::hash<std::string>{}(m.switch_id);  // switches draw different jitter
  return o;
}

// The IncAgent and what it drives; exists only when incd has a manager.
struct AgentParts {
  AgentParts(const incd::IncdConfig& cfg, dpdk::Datapath& dp, incd::DatapathCollector& collector,
             boost::asio::io_context& io, std::shared_ptr<spdlog::logger> log)
      : sink(dp, collector),
        telemetry(dp),
        table(incd::switch_view(cfg.ports, cfg.sw),
              agent::SwitchLimits{cfg.manager->memory_capacity_bytes, cfg.manager->max_window,
                                  cfg.manager->max_pmtu},
              cfg.groups, sink),
        applier(table),
        agent(io, agent_options(*cfg.manager),
              agent::SwitchIdentity{cfg.manager->switch_id,
                                    {cfg.manager->inc.ipv4, cfg.manager->inc.mac},
                                    incd::switch_ports(cfg.ports)},
              applier, telemetry, std::move(log)) {}
  incd::DatapathSink sink;
  incd::DatapathTelemetry telemetry;
  agent::GroupTable table;
  agent::ActionApplier applier;
  agent::IncAgent agent;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "incd — the EPIC in-network collective switch daemon.\n"
      "Switches ordinary Ethernet traffic between its DPDK ports (L2 learning, ARP for its INC\n"
      "addresses) and aggregates / replicates the RoCEv2 traffic of the collective groups in\n"
      "its configuration (EPIC Mode-II). Prometheus metrics on metrics.listen.\n"
      "Example configuration: deploy/examples/incd.yaml; reference: docs/incd-config.md.",
      "incd"};
  std::string config_path;
  bool check = false, print_eal = false;
  std::string log_level;
  incd::ConfigOverrides overrides;
  app.add_option("-c,--config", config_path, "configuration file (.yaml, .yml or .json)")
      ->required();
  app.add_option("--manager", overrides.manager_address,
                 "inc-manager's address (host:port, unix:/path); replaces manager.address and "
                 "enables the agent");
  app.add_option("--switch-id", overrides.switch_id,
                 "this switch's id at inc-manager; replaces manager.switch_id");
  app.add_flag("--check", check, "validate the configuration, print a summary and exit");
  app.add_flag("--print-eal-args", print_eal, "print the DPDK EAL arguments and exit");
  app.add_option("--log-level", log_level,
                 "override log.level (trace|debug|info|warn|error|critical|off)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.set_version_flag("--version", "incd 0.1.0");
  CLI11_PARSE(app, argc, argv);

  incd::LoadResult loaded = incd::load_config_file(config_path, overrides);
  if (!loaded.config) {
    std::fprintf(stderr, "incd: %s: %zu error(s) in the configuration:\n", config_path.c_str(),
                 loaded.errors.size());
    for (const auto& e : loaded.errors) std::fprintf(stderr, "  %s\n", e.to_string().c_str());
    return 2;
  }
  incd::IncdConfig cfg = std::move(*loaded.config);
  if (!log_level.empty()) cfg.log.level = log_level;
  const dpdk::DatapathConfig dcfg = incd::datapath_options(cfg);
  if (print_eal) {
    dpdk::EalOptions eo = dcfg.eal;
    eo.devices = dpdk::Datapath::eal_devices(dcfg);
    for (const auto& a : dpdk::eal_arguments(eo)) std::printf("%s ", a.c_str());
    std::printf("\n");
    return 0;
  }
  if (check) {
    std::printf("incd: %s is valid: %zu port(s), %u worker(s), %zu group(s), %zu fault rule(s)",
                config_path.c_str(), cfg.ports.size(), cfg.workers, cfg.groups.size(),
                cfg.faults.size());
    if (cfg.manager) {
      std::printf(", inc-manager %s as %s", cfg.manager->address.c_str(),
                  cfg.manager->switch_id.c_str());
    }
    std::printf("\n");
    return 0;
  }

  auto log = make_logger(cfg.log);
  dpdk::Datapath dp;
  if (std::string err = dp.start(dcfg); !err.empty()) {
    log->error("cannot start the datapath: {}", err);
    return 1;
  }
  for (const auto& p : dp.ports())
    log->info("port {} up: dpdk port {} driver {} mac {}", p.name, p.port_id, p.driver, p.mac);
  for (const auto& g : cfg.groups)
    log->info(
        "group {} installed: {} ranks, {} children here, {}, window {}, pmtu {}", g.group_id,
        g.num_ranks, g.children.size(),
        g.parent ? "parent " + vocab::format_ipv4(g.parent->remote.ipv4) : std::string("root"),
        g.window, g.pmtu);
  for (const auto& a : cfg.sw.inc_addresses)
    log->info("INC address {} at {}", vocab::format_ipv4(a.ipv4), vocab::format_mac(a.mac));

  const uint64_t stall_ns = uint64_t{cfg.metrics.stall_after_ms} * 1'000'000;
  auto collector = std::make_shared<incd::DatapathCollector>(dp, stall_ns);
  {
    std::vector<std::string> class_names;
    for (const incd::TrafficClassConfig& c : cfg.traffic_classes) class_names.push_back(c.name);
    if (class_names.empty()) class_names.push_back("default");  // a port rate's one class
    collector->set_class_names(std::move(class_names));
  }
  std::unique_ptr<incd::MetricsServer> metrics;
  if (!cfg.metrics.listen.empty()) {
    try {
      metrics = std::make_unique<incd::MetricsServer>(cfg.metrics.listen, collector);
      log->info("metrics on http://{}/metrics", cfg.metrics.listen);
    } catch (const std::exception& e) {
      log->error("{}", e.what());
      dp.stop();
      return 1;
    }
  }

  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  int exit_signal = 0;
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (!ec) exit_signal = sig;
    io.stop();
  });
  std::unique_ptr<AgentParts> agent;
  if (cfg.manager) {
    agent = std::make_unique<AgentParts>(cfg, dp, *collector, io, log);
    if (std::string err = agent->agent.start(); !err.empty()) {
      log->error("agent: {}", err);
      metrics.reset();
      dp.stop();
      return 1;
    }
    collector->set_agent(&agent->agent.counters());
    log->info("agent: switch {} reports to inc-manager at {} ({} of {} bytes grantable)",
              cfg.manager->switch_id, cfg.manager->address, agent->table.manager_capacity(),
              cfg.manager->memory_capacity_bytes);
  }
  StallWatch stalls(dp, stall_ns, *log);
  boost::asio::steady_timer timer(io);
  std::function<void()> tick = [&] {
    timer.expires_after(std::chrono::milliseconds(500));
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      stalls.poll();
      tick();
    });
  };
  tick();
  log->info("incd running with {} worker(s); SIGINT or SIGTERM stops it", dp.workers());
  io.run();
  log->info("signal {}: stopping", exit_signal);
  // Each phase is timed, so a slow shutdown names its cause (docs/incd.md, "Stopping").
  using StopClock = std::chrono::steady_clock;
  const auto t0 = StopClock::now();
  auto since = [](StopClock::time_point t) {
    return std::chrono::duration<double>(StopClock::now() - t).count();
  };
  // No scrape reads the datapath or the agent from here on (one in progress is waited for).
  auto t = StopClock::now();
  collector->close();
  collector->set_agent(nullptr);
  const double scrape_s = since(t);
  t = StopClock::now();
  metrics.reset();
  const double metrics_s = since(t);
  t = StopClock::now();
  if (agent) agent->agent.stop();
  const double agent_s = since(t);
  const dpdk::Datapath::StopTimes dt = dp.stop();
  log->info(
      "stopped: ports closed in {:.2f} s (scrape in progress {:.2f} s, metrics endpoint {:.2f} s, "
      "agent {:.2f} s, workers {:.2f} s, ports stopped {:.2f} s, ports closed {:.2f} s, "
      "memory released {:.2f} s)",
      since(t0), scrape_s, metrics_s, agent_s, dt.workers_s, dt.ports_stop_s, dt.ports_close_s,
      dt.release_s);
  return 0;
}
