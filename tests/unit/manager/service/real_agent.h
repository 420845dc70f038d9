// A real IncAgent (incd's client, agent/client) for the manager service tests: switch "leaf0"
// (10.77.0.254, the harness's leaf) over a fake datapath, its io_context on a thread of its
// own. Stopped (and the thread joined) by the destructor.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/client/inc_agent.h"
#include "proto/vocab/addr.h"
#include "tests/unit/agent/agent_test_util.h"

namespace epic::manager::service::testing {

class RealAgent {
 public:
  // start() was refused: start_error() says why, and nothing runs.
  explicit RealAgent(const agent::AgentOptions& options) {
    agent::SwitchIdentity id;
    id.switch_id = "leaf0";
    id.inc = {*vocab::parse_ipv4("10.77.0.254"), *vocab::parse_mac("02:ec:00:00:00:fe")};
    id.ports = agent::test::test_switch().ports;
    agent_ = std::make_unique<agent::IncAgent>(io_, options, id, applier_, telemetry_, nullptr);
    start_error_ = agent_->start();
    if (start_error_.empty()) thread_ = std::thread([this] { io_.run(); });
  }
  ~RealAgent() {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
    agent_->stop();  // the io_context is not running: allowed from this thread
  }
  RealAgent(const RealAgent&) = delete;
  RealAgent& operator=(const RealAgent&) = delete;

  const std::string& start_error() const { return start_error_; }
  const agent::IncAgent& agent() const { return *agent_; }

 private:
  struct NoTelemetry : agent::TelemetrySource {
    std::vector<agent::GroupReport> groups() const override { return {}; }
    std::vector<agent::HostReport> hosts() const override { return {}; }
  };
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  agent::test::FakeSink sink_;
  agent::GroupTable table_{agent::test::test_switch(), agent::SwitchLimits{}, {}, sink_};
  agent::ActionApplier applier_{table_};
  NoTelemetry telemetry_;
  std::unique_ptr<agent::IncAgent> agent_;
  std::string start_error_;
  std::thread thread_;
};

}  // namespace epic::manager::service::testing
