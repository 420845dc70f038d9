// Test harness for inc-manager's gRPC service: a ManagerServer on a unix socket in a temp
// directory, a FakeAgent (an IncAgentControl stream client whose messages are read on a
// thread and waited for with a timeout), and helpers for ranks behind one leaf switch:
// leaf0 is 10.77.0.254 (02:ec:00:00:00:fe) with ports r0..rN; rank R is 10.77.0.(R+1), QPN
// 0x100+R, on port rR.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "manager/service/server.h"
#include "proto/inc/v1/agent.grpc.pb.h"
#include "proto/inc/v1/manager.grpc.pb.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/memory.h"

namespace epic::manager::service::testing {

using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "epic-mgr-XXXXXX").string();
    path_ = mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::shared_ptr<spdlog::logger> quiet_log() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

inline std::string rank_ipv4(int r) { return "10.77.0." + std::to_string(r + 1); }
inline std::string rank_port(int r) {
  std::string s = "r";
  s += std::to_string(r);
  return s;
}

// Ranks 0..n-1 declared behind leaf0's ports (applied when leaf0 registers).
inline std::vector<RankAttachment> leaf0_ranks(int n) {
  std::vector<RankAttachment> out;
  for (int r = 0; r < n; ++r) {
    out.push_back({*vocab::parse_ipv4(rank_ipv4(r)),
                   vocab::MacAddr{2, 0, 0, 0, 0, static_cast<uint8_t>(r + 1)},
                   {"leaf0", rank_port(r)}});
  }
  return out;
}

inline ServiceOptions test_options(const std::string& state_dir = "") {
  ServiceOptions o;
  o.state_dir = state_dir;
  o.tick_interval = Millis{20};
  o.rendezvous_timeout = Millis{5'000};
  o.declared.ranks = leaf0_ranks(8);
  return o;
}

class TestManager {
 public:
  explicit TestManager(const TempDir& dir) : address_("unix:" + dir.path() + "/manager.sock") {}
  void start(ServiceOptions options) {
    ServerOptions o;
    o.listen = address_;
    o.service = std::move(options);
    auto s = ManagerServer::start(std::move(o), quiet_log());
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    server_ = std::move(s.value());
  }
  void stop() {
    if (server_) server_->stop();
    server_.reset();
  }
  ~TestManager() { stop(); }
  const std::string& address() const { return address_; }
  std::shared_ptr<grpc::Channel> channel() const {
    return grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
  }
  std::unique_ptr<pb::IncManager::Stub> stub() const { return pb::IncManager::NewStub(channel()); }

 private:
  std::string address_;
  std::unique_ptr<ManagerServer> server_;
};

inline std::unique_ptr<grpc::ClientContext> deadline(std::chrono::milliseconds d = 10s) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + d);
  return ctx;
}

class FakeAgent {
 public:
  explicit FakeAgent(const std::shared_ptr<grpc::Channel>& channel)
      : stub_(pb::IncAgentControl::NewStub(channel)) {
    ctx_.set_deadline(std::chrono::system_clock::now() + 60s);
    stream_ = stub_->Connect(&ctx_);
    reader_ = std::thread([this] {
      pb::ManagerMessage m;
      while (stream_->Read(&m)) {
        std::lock_guard lock(mu_);
        in_.push_back(m);
        cv_.notify_all();
      }
      std::lock_guard lock(mu_);
      ended_ = true;
      cv_.notify_all();
    });
  }
  ~FakeAgent() { close(); }

  bool send(const pb::AgentMessage& m) { return stream_->Write(m); }

  // The next message from the manager, or nullopt after `timeout` or at the stream's end.
  std::optional<pb::ManagerMessage> next(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return !in_.empty() || ended_; });
    if (in_.empty()) return std::nullopt;
    pb::ManagerMessage m = in_.front();
    in_.pop_front();
    return m;
  }
  bool ended(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return ended_; });
  }

  // Half-closes and returns the stream's status.
  grpc::Status close() {
    if (!reader_.joinable()) return status_;
    stream_->WritesDone();
    if (!ended(5s)) ctx_.TryCancel();
    reader_.join();
    status_ = stream_->Finish();
    return status_;
  }

  // A leaf whose memory is `slots` slots of pmtu 1024 (a window-16 group at pmtu 1024 holds 32).
  static pb::Register leaf0(uint32_t slots, uint32_t ports = 8, uint32_t mtu = 9000) {
    pb::Register r;
    r.set_switch_id("leaf0");
    r.set_inc_ipv4("10.77.0.254");
    r.set_inc_mac("02:ec:00:00:00:fe");
    for (uint32_t p = 0; p < ports; ++p) {
      auto* port = r.add_ports();
      port->set_name(rank_port(static_cast<int>(p)));
      port->set_mtu(mtu);
    }
    r.set_capacity_bytes(slots * vocab::slot_bytes(1024));
    r.set_agent_version("fake-agent");
    return r;
  }

  // Registers and consumes Registered + Resync; returns the Resync's group ids.
  std::vector<uint32_t> register_switch(const pb::Register& reg) {
    pb::AgentMessage m;
    *m.mutable_registration() = reg;
    EXPECT_TRUE(send(m));
    auto hello = next();
    EXPECT_TRUE(hello && hello->has_registered());
    auto resync = next();
    EXPECT_TRUE(resync && resync->has_resync());
    if (!resync || !resync->has_resync()) return {};
    return {resync->resync().keep_group_ids().begin(), resync->resync().keep_group_ids().end()};
  }

  void ack(uint64_t action_id) {
    pb::AgentMessage m;
    m.mutable_ack()->set_action_id(action_id);
    send(m);
  }
  void fail(uint64_t action_id, const std::string& reason) {
    pb::AgentMessage m;
    m.mutable_fail()->set_action_id(action_id);
    m.mutable_fail()->set_reason(reason);
    send(m);
  }

 private:
  std::unique_ptr<pb::IncAgentControl::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<pb::AgentMessage, pb::ManagerMessage>> stream_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<pb::ManagerMessage> in_;
  bool ended_ = false;
  grpc::Status status_;
};

// Bytes of `n` slots of pmtu 1024.
inline uint64_t slots(uint64_t n) { return n * vocab::slot_bytes(1024); }

inline pb::JoinGroupRequest join_request(const std::string& group, uint32_t size, uint32_t rank,
                                         uint32_t window = 16) {
  pb::JoinGroupRequest r;
  r.set_tenant("default");
  r.set_group(group);
  r.set_size(size);
  r.set_rank(rank);
  r.mutable_endpoint()->set_ipv4(rank_ipv4(static_cast<int>(rank)));
  r.mutable_endpoint()->set_qpn(0x100 + rank);
  r.set_window(window);
  r.set_pmtu(1024);
  return r;
}

// A join of an exact group (KULISCH_FIXED over `dtype`), its endpoint at rank_ipv4(ip_index).
inline pb::JoinGroupRequest exact_join_request(const std::string& group, uint32_t size,
                                               uint32_t rank, pb::ElementType dtype,
                                               uint32_t window, int ip_index) {
  pb::JoinGroupRequest r = join_request(group, size, rank, window);
  r.set_accumulator(pb::ACCUM_KULISCH_FIXED);
  r.set_dtype(dtype);
  r.mutable_endpoint()->set_ipv4(rank_ipv4(ip_index));
  return r;
}

struct JoinOutcome {
  grpc::Status status;
  pb::JoinGroupResponse response;
};

// Joins from its own thread (a JoinGroup call waits until the group is ready).
class AsyncJoin {
 public:
  AsyncJoin(const TestManager& m, pb::JoinGroupRequest request)
      : thread_([this, stub = m.stub(), request]() mutable {
          auto ctx = deadline(15s);
          out_.status = stub->JoinGroup(ctx.get(), request, &out_.response);
        }) {}
  ~AsyncJoin() {
    if (thread_.joinable()) thread_.join();
  }
  const JoinOutcome& get() {
    if (thread_.joinable()) thread_.join();
    return out_;
  }

 private:
  JoinOutcome out_;
  std::thread thread_;
};

// Two ranks join group `name` (tenant "default"), the agent acknowledges the install, both
// joins succeed; returns the install action the agent received (empty after a failure).
inline pb::Action install_group(const TestManager& m, FakeAgent& agent,
                                const std::string& name = "g") {
  AsyncJoin r0(m, join_request(name, 2, 0));
  AsyncJoin r1(m, join_request(name, 2, 1));
  auto install = agent.next();
  EXPECT_TRUE(install && install->has_action());
  if (!install || !install->has_action()) return {};
  agent.ack(install->action().action_id());
  EXPECT_TRUE(r0.get().status.ok());
  EXPECT_TRUE(r1.get().status.ok());
  return install->action();
}

}  // namespace epic::manager::service::testing
