// TLS: with --tls-cert/--tls-key/--tls-ca the manager serves mutual TLS only. The test CA and
// certificates are made by the openssl command at test time.
#include <fstream>
#include <sstream>

#include "tests/unit/manager/service/harness.h"

namespace epic::manager::service::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// ca.pem, server.{pem,key} for 127.0.0.1, client.{pem,key}; false if openssl failed.
bool make_pki(const std::string& d) {
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::ofstream(d + "/san.ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  return sh("openssl req -x509" + ec + " -keyout " + d + "/ca.key -out " + d +
            "/ca.pem -days 1 -subj /CN=epic-test-ca") &&
         sh("openssl req" + ec + " -keyout " + d + "/server.key -out " + d +
            "/server.csr -subj /CN=inc-manager") &&
         sh("openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
            "/ca.key -CAcreateserial -days 1 -extfile " + d + "/san.ext -out " + d +
            "/server.pem") &&
         sh("openssl req" + ec + " -keyout " + d + "/client.key -out " + d +
            "/client.csr -subj /CN=leaf0-agent") &&
         sh("openssl x509 -req -in " + d + "/client.csr -CA " + d + "/ca.pem -CAkey " + d +
            "/ca.key -CAcreateserial -days 1 -out " + d + "/client.pem");
}

TEST(TlsTest, MutualTlsAcceptsCertifiedClientsOnlyAndPlaintextRemoteIsRefused) {
  if (!sh("command -v openssl")) GTEST_SKIP() << "openssl is not installed: cannot make a test CA";
  TempDir dir;
  ASSERT_TRUE(make_pki(dir.path())) << "openssl could not make the test certificates";
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

}  // namespace
}  // namespace epic::manager::service::testing
