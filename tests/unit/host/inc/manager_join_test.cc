// libinc's join client (host/inc/manager_join.h) against a real inc-manager on a unix socket
// with a fake agent (tests/unit/manager/service/harness.h): INC answers, the host fallback,
// the manager's errors verbatim with their code names, a bad address timing out, and
// Communicator::create reporting a failed join.
#include "host/inc/manager_join.h"

#include <future>
#include <map>
#include <string>
#include <vector>

#include "host/inc/communicator.h"
#include "tests/unit/manager/service/harness.h"
#include "tests/unit/tls_pki.h"

namespace epic::inc {
namespace {

namespace mt = epic::manager::service::testing;
using namespace std::chrono_literals;

host::LocalEndpoint rank_endpoint(int r) {
  host::LocalEndpoint e;
  e.kind = "soft";
  e.ipv4 = *vocab::parse_ipv4(mt::rank_ipv4(r));
  e.mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(r + 1)};
  e.qpn = 0x100 + static_cast<uint32_t>(r);
  return e;
}

class ManagerJoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    manager_.start(mt::test_options());
    agent_ = std::make_unique<mt::FakeAgent>(manager_.channel());
  }
  // Joins ask for window 16 at pmtu 1024 (32 slots), so that leaf0's memory is what each test
  // says; without a window the manager sizes it from the path BDP (window 128 on one switch),
  // without a pmtu it takes the largest leaf0's 9000-byte ports carry (4096).
  ManagerOptions options(const std::string& group) const {
    ManagerOptions m;
    m.address = manager_.address();
    m.group = group;
    m.join_timeout = 5s;
    m.window = 16;
    m.pmtu = 1024;
    return m;
  }
  // Rank r of `size` in its own thread.
  std::future<soft::io::Result<JoinAnswer>> join(const ManagerOptions& m, uint16_t r, uint16_t size,
                                                 bool host) {
    const int nic = r + nic_offset_;
    return std::async(std::launch::async, [m, r, size, host, nic] {
      ManagerJoin j(m);
      std::optional<JoinEndpoint> h;
      if (host) h = JoinEndpoint{rank_endpoint(nic).ipv4, {}, {}, 0x400u + 2 * r};
      return j.join(r, size, rank_endpoint(nic), h);
    });
  }
  void fill_leaf0() {  // leaf0 with room for one 1-rank group, taken
    agent_->register_switch(mt::FakeAgent::leaf0(48));
    auto first = join(options("a"), 0, 1, false);
    auto install = agent_->next();
    ASSERT_TRUE(install && install->has_action());
    agent_->ack(install->action().action_id());
    ASSERT_TRUE(first.get().ok());
    nic_offset_ = 1;  // rank r of later groups on NIC r + 1 (NIC 0 is group a's)
  }

  mt::TempDir dir_;
  mt::TestManager manager_{dir_};
  std::unique_ptr<mt::FakeAgent> agent_;
  int nic_offset_ = 0;
};

TEST_F(ManagerJoinTest, RanksGetTheSwitchPeerAndLeavingTearsTheGroupDown) {
  agent_->register_switch(mt::FakeAgent::leaf0(256));  // 256 slots: one window-128 group
  ManagerOptions no_window = options("g");
  no_window.window.reset();  // the manager's choice: 100 Gb/s x 10 us / 1024 -> 128
  auto r0 = join(no_window, 0, 2, true);
  auto r1 = join(no_window, 1, 2, true);
  auto install = agent_->next();
  ASSERT_TRUE(install && install->has_action());
  EXPECT_EQ(install->action().context().window(), 128u);
  agent_->ack(install->action().action_id());
  for (auto* f : {&r0, &r1}) {
    const auto a = f->get();
    ASSERT_TRUE(a.ok()) << a.error;
    EXPECT_FALSE(a.value.host_fallback);
    EXPECT_EQ(a.value.switch_id, "leaf0");
    EXPECT_EQ(a.value.peer.switch_ip, *vocab::parse_ipv4("10.77.0.254"));
    EXPECT_NE(a.value.peer.switch_qpn, 0u);
    EXPECT_EQ(a.value.peer.pmtu, 1024);
    EXPECT_EQ(a.value.peer.window, 128u);  // the rank uses the manager's window
  }
  ManagerJoin j(options("g"));
  EXPECT_EQ(j.leave(0, 2s), "");
  EXPECT_EQ(j.leave(1, 2s), "");
  auto remove = agent_->next();
  ASSERT_TRUE(remove && remove->has_action());
  EXPECT_EQ(remove->action().kind(), ::epic::inc::v1::ACTION_KIND_REMOVE_CONTEXT);
}

TEST_F(ManagerJoinTest, APmtuLeftToTheManagerIsTheLargestThePortsCarryAndTheRankUsesIt) {
  agent_->register_switch(mt::FakeAgent::leaf0(256));  // 9000-byte ports
  ManagerOptions left = options("jumbo");
  left.window.reset();
  left.pmtu.reset();
  auto r0 = join(left, 0, 2, false);
  auto r1 = join(left, 1, 2, false);
  auto install = agent_->next();
  ASSERT_TRUE(install && install->has_action());
  EXPECT_EQ(install->action().context().pmtu(), 4096u);
  EXPECT_EQ(install->action().context().window(), 32u);  // 125000 bytes / 4096 -> 32
  agent_->ack(install->action().action_id());
  for (auto* f : {&r0, &r1}) {
    const auto a = f->get();
    ASSERT_TRUE(a.ok()) << a.error;
    EXPECT_EQ(a.value.peer.pmtu, 4096);
    EXPECT_EQ(a.value.peer.window, 32u);
  }
}

TEST_F(ManagerJoinTest, IncModeAsksTheManagerForModeIII) {
  agent_->register_switch(mt::FakeAgent::leaf0(256));
  ManagerOptions mode3 = options("g3");
  mode3.mode = 3;  // INC_MODE=3
  auto r0 = join(mode3, 0, 2, true);
  auto r1 = join(mode3, 1, 2, true);
  auto install = agent_->next();
  ASSERT_TRUE(install && install->has_action());
  EXPECT_EQ(install->action().context().mode(), ::epic::inc::v1::GROUP_MODE_3);
  EXPECT_TRUE(install->action().context().has_hop_timeout_us());
  agent_->ack(install->action().action_id());
  for (auto* f : {&r0, &r1}) ASSERT_TRUE(f->get().ok()) << f->get().error;
}

TEST_F(ManagerJoinTest, NoMemoryWithEveryRankOfferingAHostRingFallsBack) {
  fill_leaf0();
  auto r0 = join(options("b"), 0, 2, true);
  auto r1 = join(options("b"), 1, 2, true);
  for (auto* f : {&r0, &r1}) {
    const auto a = f->get();
    ASSERT_TRUE(a.ok()) << a.error;
    EXPECT_TRUE(a.value.host_fallback);
    EXPECT_NE(a.value.fallback_reason.find("no INC memory"), std::string::npos);
    ASSERT_EQ(a.value.members.size(), 2u);
    EXPECT_EQ(a.value.members[1].qpn, 0x402u);
    EXPECT_EQ(a.value.members[1].ipv4, rank_endpoint(2).ipv4);
  }
}

TEST_F(ManagerJoinTest, ManagerErrorsAreReportedVerbatimWithTheCodeName) {
  fill_leaf0();
  const auto a = join(options("c"), 0, 1, false).get();
  ASSERT_FALSE(a.ok());
  const std::string want = "inc: join group 'c' (tenant default) at " + manager_.address() +
                           " failed: RESOURCE_EXHAUSTED: no INC memory";
  EXPECT_EQ(a.error.rfind(want, 0), 0u) << a.error << "\n" << want;
}

TEST_F(ManagerJoinTest, AnAddressWithoutAManagerTimesOutClearly) {
  ManagerOptions m = options("d");
  m.address = "unix:" + dir_.path() + "/nobody.sock";
  m.join_timeout = 300ms;
  const auto a = ManagerJoin(m).join(0, 1, rank_endpoint(0), std::nullopt);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error.find("failed: DEADLINE_EXCEEDED"), std::string::npos) << a.error;
  EXPECT_NE(a.error.find("INC_JOIN_TIMEOUT_MS=300"), std::string::npos) << a.error;
}

TEST_F(ManagerJoinTest, UnreadableTlsFileIsNamed) {
  ManagerOptions m = options("e");
  m.ca_file = dir_.path() + "/missing-ca.pem";
  const auto a = ManagerJoin(m).join(0, 1, rank_endpoint(0), std::nullopt);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error.find("INC_MANAGER_CA=" + m.ca_file + ": cannot be read"), std::string::npos)
      << a.error;
}

TEST_F(ManagerJoinTest, CommunicatorCreateReportsTheFailedJoin) {
  fill_leaf0();
  const ConfigResult c = config_from_pairs({{"INC_RANK", "0"},
                                            {"INC_RANKS", "1"},
                                            {"INC_TRANSPORT", "soft"},
                                            {"INC_IFACE", "lo"},
                                            {"INC_MAC", "02:00:00:00:00:02"},
                                            {"INC_IP", mt::rank_ipv4(1)},
                                            {"INC_QPN", "0x101"},
                                            {"INC_MANAGER", manager_.address()},
                                            {"INC_WINDOW", "16"},  // 32 slots: fits later
                                            {"INC_PMTU", "1024"},
                                            {"INC_GROUP", "f"},
                                            {"INC_HOST_FALLBACK", "0"},
                                            {"INC_JOIN_TIMEOUT_MS", "5000"}});
  ASSERT_TRUE(c.ok()) << c.error;
  const auto created = Communicator::create(c.config);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error.find("inc: join group 'f' (tenant default) at " + manager_.address() +
                               " failed: RESOURCE_EXHAUSTED: no INC memory"),
            std::string::npos)
      << created.error;
}

// Two soft ranks on the loopback interface (AF_PACKET: needs CAP_NET_RAW; skipped without it).
// Rank r of a soft group on lo joining through the manager (after fill_leaf0: its window gets no
// memory now, but could later, so every rank falls back to the host ring).
std::map<std::string, std::string> fallback_rank(const std::string& manager, uint16_t r,
                                                 uint16_t ranks, const std::string& window) {
  return {{"INC_RANK", std::to_string(r)},
          {"INC_RANKS", std::to_string(ranks)},
          {"INC_TRANSPORT", "soft"},
          {"INC_IFACE", "lo"},
          {"INC_MAC", "02:00:00:00:00:0" + std::to_string(r + 2)},
          {"INC_IP", mt::rank_ipv4(r + 1)},
          {"INC_QPN", std::to_string(0x101 + r)},
          {"INC_MANAGER", manager},
          {"INC_WINDOW", window},
          {"INC_PMTU", "1024"},
          {"INC_GROUP", "ring"},
          {"INC_TIMEOUT_MS", "5000"},
          {"INC_LINGER_MS", "0"},
          {"INC_JOIN_TIMEOUT_MS", "5000"}};
}

TEST_F(ManagerJoinTest, CommunicatorFallsBackToHostCollectivesOverTheSoftRing) {
  fill_leaf0();
  auto rank = [&](uint16_t r) {
    return std::async(std::launch::async, [&, r]() -> std::string {
      // Window 16, 32 slots: no memory now, not never.
      const ConfigResult c = config_from_pairs(fallback_rank(manager_.address(), r, 2, "16"));
      if (!c.ok()) return c.error;
      auto created = Communicator::create(c.config);
      if (!created.ok()) return created.error;
      Communicator& comm = *created.value;
      if (comm.mode() != "host" || !comm.host_fallback()) return "mode " + std::string(comm.mode());
      std::vector<int32_t> in(1000, r + 1), out(1000, 0);
      Status s = comm.allreduce(in.data(), out.data(), in.size(), DType::kInt32, ReduceOp::kSum);
      if (!s.ok()) return s.message;
      if (out[999] != 3) return "allreduce gave " + std::to_string(out[999]);
      const Request req = comm.ibarrier();
      if (!comm.test(req)) return "ibarrier not complete at post";
      if (Status w = comm.wait(req); !w.ok()) return w.message;
      return comm.close().message;
    });
  };
  auto r0 = rank(0);
  auto r1 = rank(1);
  const std::string e0 = r0.get(), e1 = r1.get();
  if (e0.find("Operation not permitted") != std::string::npos) GTEST_SKIP() << e0;
  EXPECT_EQ(e0, "");
  EXPECT_EQ(e1, "");
}

// An exact group keeps its arithmetic when it falls back: the communicator reports it (and the C
// API), refuses a reduction its slots were not sized for before sending anything, and its fp16
// sums are the exact sum rounded once: 32768 + 2^-24 - 32768 is 2^-24 (binary16's smallest
// subnormal), where binary32 accumulation (fp32_arrival's fallback) loses the 2^-24 in every
// order that adds it to 32768 first, and the ring's chunks start at different ranks.
TEST_F(ManagerJoinTest, AnExactGroupFallsBackExactlyAndRefusesWhatItsSlotsDoNotHold) {
  fill_leaf0();
  auto rank = [&](uint16_t r) {
    return std::async(std::launch::async, [&, r]() -> std::string {
      // Window 8: 16 exact fp16 slots of 5664 bytes fit leaf0, but not beside group a.
      auto pairs = fallback_rank(manager_.address(), r, 3, "8");
      pairs["INC_ACCUMULATOR"] = "kulisch_fixed";
      pairs["INC_DTYPE"] = "fp16";
      const ConfigResult c = config_from_pairs(pairs);
      if (!c.ok()) return c.error;
      auto created = Communicator::create(c.config);
      if (!created.ok()) return created.error;
      Communicator& comm = *created.value;
      if (comm.mode() != "host") return "mode " + std::string(comm.mode());
      if (comm.arith().profile != vocab::AccumProfile::kKulischFixed ||
          comm.arith().dtype != vocab::DType::kFp16) {
        return "arithmetic not reported";
      }
      std::vector<uint8_t> e4(1024, 0x38), e4out(1024);  // 1.0 in E4M3
      Status refused =
          comm.allreduce(e4.data(), e4out.data(), e4.size(), DType::kFp8E4M3, ReduceOp::kSum);
      if (refused.ok() ||
          refused.message.find("allreduce of fp8_e4m3 sum: its accumulator does not fit the "
                               "slots of this group's arithmetic (kulisch_fixed, dtype fp16") ==
              std::string::npos) {
        return "fp8 sum not refused: " + refused.message;
      }
      // 32768, 2^-24, -32768 in binary16.
      const uint16_t mine = r == 0 ? 0x7800 : r == 1 ? 0x0001 : 0xF800;
      std::vector<uint16_t> in(300, mine), out(300, 0);
      Status s = comm.allreduce(in.data(), out.data(), in.size(), DType::kFp16, ReduceOp::kSum);
      if (!s.ok()) return s.message;
      for (uint16_t x : out) {
        if (x != 0x0001) return "fp16 sum gave " + std::to_string(x) + ", not 2^-24 (0x0001)";
      }
      return comm.close().message;
    });
  };
  auto r0 = rank(0);
  auto r1 = rank(1);
  auto r2 = rank(2);
  const std::string e0 = r0.get(), e1 = r1.get(), e2 = r2.get();
  if (e0.find("Operation not permitted") != std::string::npos) GTEST_SKIP() << e0;
  EXPECT_EQ(e0, "");
  EXPECT_EQ(e1, "");
  EXPECT_EQ(e2, "");
}

// A rank joins a manager that serves mutual TLS only (a unix socket: gRPC checks the
// certificate against "localhost"), with INC_MANAGER_CA/CERT/KEY; without its certificate the
// join cannot reach the manager.
TEST(ManagerJoinTlsTest, RankJoinsAMutualTlsManager) {
  if (!epic::testing::have_openssl()) GTEST_SKIP() << "openssl is not installed";
  mt::TempDir dir;
  const std::string d = dir.path();
  ASSERT_TRUE(epic::testing::make_test_pki(d)) << "openssl could not make the test certificates";
  manager::service::ServerOptions o;
  o.listen = "unix:" + d + "/tls.sock";
  o.tls = {d + "/server.pem", d + "/server.key", d + "/ca.pem"};
  o.service = mt::test_options();
  auto server = manager::service::ManagerServer::start(o, mt::quiet_log());
  ASSERT_TRUE(server.ok()) << server.error().to_string();
  grpc::SslCredentialsOptions creds{epic::testing::slurp(d + "/ca.pem"),
                                    epic::testing::slurp(d + "/agent-leaf0.key"),
                                    epic::testing::slurp(d + "/agent-leaf0.pem")};
  mt::FakeAgent agent(grpc::CreateChannel(o.listen, grpc::SslCredentials(creds)));
  agent.register_switch(mt::FakeAgent::leaf0(256));

  ManagerOptions m;
  m.address = o.listen;
  m.group = "tls";
  m.join_timeout = 5s;
  m.ca_file = d + "/ca.pem";
  m.cert_file = d + "/tenant-default.pem";  // the role tenant:default (a URI SAN)
  m.key_file = d + "/tenant-default.key";
  auto joined = std::async(std::launch::async, [m] {
    return ManagerJoin(m).join(0, 1, rank_endpoint(0), std::nullopt);
  });
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  agent.ack(install->action().action_id());
  const auto a = joined.get();
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(a.value.switch_id, "leaf0");

  ManagerOptions no_cert = m;
  no_cert.group = "tls2";
  no_cert.cert_file.clear();
  no_cert.key_file.clear();
  no_cert.join_timeout = 1s;
  const auto refused = ManagerJoin(no_cert).join(0, 1, rank_endpoint(1), std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error.find("failed: "), std::string::npos) << refused.error;
  agent.close();
  server.value()->stop();
}

}  // namespace
}  // namespace epic::inc
