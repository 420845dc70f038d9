// IncAgent: the agent's connection to inc-manager, on a Boost.Asio io_context (incd's control
// thread, never a datapath core). It dials the manager, registers the switch with the groups
// it serves, heartbeats (per-group counters, learned hosts), applies the manager's Resync and
// Actions through the ActionApplier (one Ack or Fail each) and, when the stream ends for any
// reason, keeps the installed groups serving and reconnects with exponential backoff and
// jitter; each registration lists the installed groups again so that the manager
// re-synchronises without disturbing running collectives. docs/agent.md.
// Threading: construct, start() and stop() on the io_context's thread or while it is not
// running; counters() may be read from any thread.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>

#include "agent/client/agent_options.h"
#include "agent/client/backoff.h"
#include "agent/client/manager_stream.h"
#include "agent/core/action_applier.h"
#include "agent/core/agent_counters.h"
#include "agent/core/heartbeat.h"
#include "agent/core/registration.h"

namespace epic::agent {

class IncAgent {
 public:
  IncAgent(boost::asio::io_context& io, AgentOptions options, SwitchIdentity identity,
           ActionApplier& applier, const TelemetrySource& telemetry,
           std::shared_ptr<spdlog::logger> log);
  ~IncAgent();  // stop()
  IncAgent(const IncAgent&) = delete;
  IncAgent& operator=(const IncAgent&) = delete;

  // "" once the first connection attempt is under way, else why (e.g. an unreadable TLS file).
  std::string start();
  // Ends the stream and stops reconnecting; blocks until gRPC has finished the call. The
  // installed groups stay installed.
  void stop();

  const AgentCounters& counters() const { return counters_; }

 private:
  void connect();
  void on_message(inc::v1::ManagerMessage m);
  void on_done(const grpc::Status& s);
  void schedule_heartbeat();
  void send(inc::v1::AgentMessage m);

  boost::asio::io_context& io_;
  AgentOptions options_;
  SwitchIdentity identity_;
  ActionApplier& applier_;
  const TelemetrySource& telemetry_;
  std::shared_ptr<spdlog::logger> log_;
  Backoff backoff_;
  boost::asio::steady_timer reconnect_timer_, heartbeat_timer_;
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<ManagerStream> stream_;
  std::chrono::milliseconds heartbeat_interval_;
  bool registered_ = false;
  bool running_ = false;
  uint64_t attempts_ = 0;
  uint64_t generation_ = 0;  // of the current stream
  // Handlers posted by a stream check this token: none runs after the agent is gone.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  AgentCounters counters_;
};

}  // namespace epic::agent
