// IncAgent against a fake inc-manager: a gRPC server in the test, on a unix socket, that
// answers Register with Registered and a Resync, sends scripted Actions, and records every
// message the agent sends.
#include "agent/client/inc_agent.h"

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <condition_variable>
#include <deque>
#include <optional>
#include <thread>

#include "proto/inc/v1/agent.grpc.pb.h"
#include "tests/unit/agent/agent_test_util.h"

namespace epic::agent {
namespace {

using namespace std::chrono_literals;
using inc::v1::AgentMessage;
using inc::v1::ManagerMessage;

class FakeManager final : public inc::v1::IncAgentControl::Service {
 public:
  FakeManager(std::vector<uint32_t> keep, std::vector<inc::v1::Action> actions)
      : keep_(std::move(keep)), actions_(std::move(actions)) {}

  grpc::Status Connect(grpc::ServerContext*,
                       grpc::ServerReaderWriter<ManagerMessage, AgentMessage>* s) override {
    AgentMessage in;
    if (!s->Read(&in) || !in.has_registration()) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "Register first"};
    }
    push(in);
    ManagerMessage out;
    out.mutable_registered()->set_heartbeat_interval_ms(50);
    s->Write(out);
    out.Clear();
    for (uint32_t id : keep_) out.mutable_resync()->add_keep_group_ids(id);
    out.mutable_resync();
    s->Write(out);
    for (const auto& a : actions_) {
      out.Clear();
      *out.mutable_action() = a;
      s->Write(out);
    }
    while (s->Read(&in)) push(in);
    return grpc::Status::OK;
  }

  // The next message of the kind `has` accepts (others are skipped), or nullopt after 5 s.
  template <typename Pred>
  std::optional<AgentMessage> next(Pred has) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    for (;;) {
      while (!got_.empty()) {
        AgentMessage m = std::move(got_.front());
        got_.pop_front();
        if (has(m)) return m;
      }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && got_.empty()) {
        return std::nullopt;
      }
    }
  }

 private:
  void push(const AgentMessage& m) {
    std::lock_guard<std::mutex> lock(mu_);
    got_.push_back(m);
    cv_.notify_all();
  }
  std::vector<uint32_t> keep_;
  std::vector<inc::v1::Action> actions_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<AgentMessage> got_;
};

struct Server {
  Server(const std::string& address, FakeManager& m) {
    grpc::ServerBuilder b;
    b.AddListeningPort(address, grpc::InsecureServerCredentials());
    b.RegisterService(&m);
    server = b.BuildAndStart();
  }
  ~Server() { server->Shutdown(std::chrono::system_clock::now() + 100ms); }
  std::unique_ptr<grpc::Server> server;
};

class FakeTelemetry : public TelemetrySource {
 public:
  std::vector<GroupReport> groups() const override {
    GroupReport r;
    r.group_id = 7;
    r.stats.aggregations_completed = 12;
    r.last_progress_age_ms = 3;
    return {r};
  }
  std::vector<HostReport> hosts() const override { return {}; }
};

inc::v1::Action install(uint64_t id, uint32_t group, uint32_t qpn_base) {
  inc::v1::Action a;
  a.set_action_id(id);
  a.set_kind(inc::v1::ACTION_KIND_INSTALL_CONTEXT);
  a.set_group_id(group);
  *a.mutable_context() = test::switch_context(group, qpn_base);
  a.set_memory_bytes(vocab::group_memory_bytes(16, 1024));
  return a;
}

// The agent on its own io_context thread, with a fake datapath.
struct Rig {
  Rig() : address("unix:/tmp/epic-agent-test-" + std::to_string(::getpid()) + ".sock") {
    AgentOptions o;
    o.address = address;
    o.heartbeat_interval = 1000ms;  // the fake manager asks for 50 ms
    o.reconnect_initial = 20ms;
    o.reconnect_max = 100ms;
    SwitchIdentity id;
    id.switch_id = "leaf0";
    id.inc = {*vocab::parse_ipv4("10.77.0.254"), *vocab::parse_mac("02:ec:00:00:00:fe")};
    id.ports = test::test_switch().ports;
    agent = std::make_unique<IncAgent>(io, o, id, applier, telemetry, nullptr);
  }
  void run() {
    ASSERT_EQ(agent->start(), "");
    thread = std::thread([this] { io.run(); });
  }
  ~Rig() {
    work.reset();
    io.stop();
    if (thread.joinable()) thread.join();
    agent.reset();
  }
  std::string address;
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work =
      boost::asio::make_work_guard(io);
  test::FakeSink sink;
  GroupTable table{test::test_switch(), SwitchLimits{}, {}, sink};
  ActionApplier applier{table};
  FakeTelemetry telemetry;
  std::unique_ptr<IncAgent> agent;
  std::thread thread;
};

auto is_register = [](const AgentMessage& m) { return m.has_registration(); };
auto is_ack = [](const AgentMessage& m) { return m.has_ack() || m.has_fail(); };
auto is_heartbeat = [](const AgentMessage& m) { return m.has_heartbeat(); };

TEST(IncAgent, RegistersAppliesAnActionAcksItAndHeartbeats) {
  Rig r;
  FakeManager manager({}, {install(11, 7, 200)});
  Server server(r.address, manager);
  r.run();
  const auto reg = manager.next(is_register);
  ASSERT_TRUE(reg);
  EXPECT_EQ(reg->registration().switch_id(), "leaf0");
  EXPECT_EQ(reg->registration().installed_size(), 0);
  EXPECT_EQ(reg->registration().capacity_bytes(), SwitchLimits{}.memory_capacity_bytes);
  const auto ack = manager.next(is_ack);
  ASSERT_TRUE(ack);
  ASSERT_TRUE(ack->has_ack()) << ack->fail().reason();
  EXPECT_EQ(ack->ack().action_id(), 11u);
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{7}));
  const auto hb = manager.next(is_heartbeat);
  ASSERT_TRUE(hb);
  ASSERT_EQ(hb->heartbeat().groups_size(), 1);
  EXPECT_EQ(hb->heartbeat().groups(0).group_id(), 7u);
  EXPECT_EQ(hb->heartbeat().groups(0).aggregations_completed(), 12u);
  EXPECT_EQ(r.agent->counters().connected.load(), 1u);
  EXPECT_EQ(r.agent->counters().actions_applied.load(), 1u);
}

TEST(IncAgent, AfterAManagerRestartItReRegistersWithItsGroupsWhichKeepServingUntouched) {
  Rig r;
  {
    FakeManager first({}, {install(11, 7, 200)});
    Server server(r.address, first);
    r.run();
    ASSERT_TRUE(first.next(is_ack));
  }  // the manager goes away
  ASSERT_EQ(r.sink.sets().size(), 1u);
  std::this_thread::sleep_for(150ms);   // a few failed attempts while it is away
  EXPECT_EQ(r.sink.sets().size(), 1u);  // the group keeps serving
  FakeManager second({7}, {});
  Server server(r.address, second);
  const auto reg = second.next(is_register);
  ASSERT_TRUE(reg);
  ASSERT_EQ(reg->registration().installed_size(), 1);
  const inc::v1::InstalledGroup& g = reg->registration().installed(0);
  EXPECT_EQ(g.group_id(), 7u);
  EXPECT_TRUE(g.slots_attached());
  EXPECT_EQ(g.context().SerializeAsString(), test::switch_context(7, 200).SerializeAsString());
  ASSERT_TRUE(second.next(is_heartbeat));  // registered again, and the Resync was applied
  EXPECT_EQ(r.sink.sets().size(), 1u);     // kept: never republished, so never disturbed
  EXPECT_GE(r.agent->counters().reconnects.load(), 1u);
  EXPECT_EQ(r.agent->counters().registrations.load(), 2u);
}

TEST(IncAgent, AResyncAfterReconnectRemovesTheGroupsTheManagerDropped) {
  Rig r;
  {
    FakeManager first({}, {install(11, 7, 200), install(12, 8, 300)});
    Server server(r.address, first);
    r.run();
    ASSERT_TRUE(first.next(is_ack));
    ASSERT_TRUE(first.next(is_ack));
  }
  FakeManager second({8}, {});
  Server server(r.address, second);
  ASSERT_TRUE(second.next(is_register));
  ASSERT_TRUE(second.next(is_heartbeat));
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{8}));
}

TEST(IncAgent, AnUnreadableTlsFileIsReportedAtStart) {
  Rig r;
  AgentOptions o;
  o.address = r.address;
  o.tls.enabled = true;
  o.tls.root_ca_file = "/nonexistent/ca.pem";
  IncAgent agent(r.io, o, SwitchIdentity{}, r.applier, r.telemetry, nullptr);
  EXPECT_EQ(agent.start(), "cannot read /nonexistent/ca.pem: No such file or directory");
}

}  // namespace
}  // namespace epic::agent
