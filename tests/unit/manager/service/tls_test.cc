// TLS: with --tls-cert/--tls-key/--tls-ca the manager serves mutual TLS only — to raw stubs,
// to incctl and to a real IncAgent (incd's client). The test CA and certificates are made by
// the openssl command at test time (tests/unit/tls_pki.h).
#include <thread>

#include "tests/unit/manager/service/harness.h"
#include "tests/unit/manager/service/real_agent.h"
#include "tests/unit/tls_pki.h"

namespace epic::manager::service::testing {
namespace {

using epic::testing::have_openssl;
using epic::testing::make_test_pki;
using epic::testing::slurp;

TEST(TlsTest, MutualTlsAcceptsCertifiedClientsOnlyAndPlaintextRemoteIsRefused) {
  if (!have_openssl()) GTEST_SKIP() << "openssl is not installed: cannot make a test CA";
  TempDir dir;
  ASSERT_TRUE(make_test_pki(dir.path())) << "openssl could not make the test certificates";
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.tls = {dir.path() + "/server.pem", dir.path() + "/server.key", dir.path() + "/ca.pem"};
  o.service = test_options();
  auto server = ManagerServer::start(o, quiet_log());
  ASSERT_TRUE(server.ok()) << server.error().to_string();
  const std::string target = "127.0.0.1:" + std::to_string(server.value()->port());

  grpc::SslCredentialsOptions with_cert{slurp(dir.path() + "/ca.pem"),
                                        slurp(dir.path() + "/client.key"),
                                        slurp(dir.path() + "/client.pem")};
  auto good = pb::IncManager::NewStub(grpc::CreateChannel(target, grpc::SslCredentials(with_cert)));
  pb::ListSwitchesResponse out;
  auto ctx = deadline(5s);
  const grpc::Status ok = good->ListSwitches(ctx.get(), {}, &out);
  EXPECT_TRUE(ok.ok()) << ok.error_message();

  grpc::SslCredentialsOptions no_cert{slurp(dir.path() + "/ca.pem"), "", ""};
  auto bad = pb::IncManager::NewStub(grpc::CreateChannel(target, grpc::SslCredentials(no_cert)));
  auto ctx2 = deadline(2s);
  EXPECT_FALSE(bad->ListSwitches(ctx2.get(), {}, &out).ok());

  auto plain =
      pb::IncManager::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  auto ctx3 = deadline(2s);
  EXPECT_FALSE(plain->ListSwitches(ctx3.get(), {}, &out).ok());
  server.value()->stop();

  ServerOptions remote;
  remote.listen = "0.0.0.0:0";
  auto refused = ManagerServer::start(remote, quiet_log());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("--tls-cert"), std::string::npos);
}

// incctl and a real IncAgent reach a mutual-TLS manager with the CA and a client certificate;
// without the certificate incctl cannot reach it.
TEST(TlsTest, IncctlAndARealIncAgentUseMutualTls) {
  if (!have_openssl()) GTEST_SKIP() << "openssl is not installed: cannot make a test CA";
  TempDir dir;
  ASSERT_TRUE(make_test_pki(dir.path())) << "openssl could not make the test certificates";
  const std::string d = dir.path();
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.tls = {d + "/server.pem", d + "/server.key", d + "/ca.pem"};
  o.service = test_options();
  auto server = ManagerServer::start(o, quiet_log());
  ASSERT_TRUE(server.ok()) << server.error().to_string();
  const std::string target = "127.0.0.1:" + std::to_string(server.value()->port());
  const std::string tls =
      " --tls-ca " + d + "/ca.pem --tls-cert " + d + "/client.pem --tls-key " + d + "/client.key ";
  const std::string incctl = std::string(INCCTL_PATH) + " --manager " + target;
  EXPECT_TRUE(epic::testing::run_quiet(incctl + tls + "switches"));
  EXPECT_EQ(
      std::system((incctl + " --timeout-ms 2000 --tls-ca " + d + "/ca.pem switches >/dev/null 2>&1")
                      .c_str()),
      2 << 8)
      << "no client certificate: exit 2 (cannot reach)";

  agent::AgentOptions ao;
  ao.address = target;
  ao.tls = {.enabled = true,
            .root_ca_file = d + "/ca.pem",
            .cert_file = d + "/agent-leaf0.pem",  // CN=agent:leaf0: may register leaf0
            .key_file = d + "/agent-leaf0.key",
            .server_name = ""};
  auto agent = std::make_unique<RealAgent>(ao);
  ASSERT_EQ(agent->start_error(), "");

  grpc::SslCredentialsOptions with_cert{slurp(d + "/ca.pem"), slurp(d + "/client.key"),
                                        slurp(d + "/client.pem")};
  auto stub = pb::IncManager::NewStub(grpc::CreateChannel(target, grpc::SslCredentials(with_cert)));
  bool connected = false;
  for (int i = 0; i < 100 && !connected; ++i) {
    pb::ListSwitchesResponse out;
    auto ctx = deadline(2s);
    if (stub->ListSwitches(ctx.get(), {}, &out).ok() && out.switches_size() == 1) {
      connected = out.switches(0).connected() && out.switches(0).switch_id() == "leaf0";
    }
    if (!connected) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(connected) << "the agent did not register over mutual TLS";
  EXPECT_EQ(agent->agent().counters().registrations.load(), 1u);

  agent.reset();  // before the server: its stream ends first
  server.value()->stop();
}

}  // namespace
}  // namespace epic::manager::service::testing
