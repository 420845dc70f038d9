// inc-manager's --listen address is refused at start, with a message naming it, when it cannot
// be this manager's alone: a port above 65535 (gRPC would truncate it to 16 bits and bind
// another), an empty host or path, a unix socket another manager serves (gRPC would unlink it
// and take it over), a TCP port another manager has bound (gRPC's SO_REUSEPORT would share
// it). A stale socket file nobody serves is fine. The first manager keeps serving throughout.
#include "manager/service/listen_address.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "tests/unit/manager/service/harness.h"

namespace epic::manager::service::testing {
namespace {

TEST(ListenAddress, MalformedAddressesAreNamedWithWhatIsWrong) {
  const std::pair<const char*, const char*> bad[] = {
      {"127.0.0.1:99999", "the port must be a number in 0..65535"},
      {"127.0.0.1:65536", "the port must be a number in 0..65535"},
      {"127.0.0.1:-1", "the port must be a number in 0..65535"},
      {"127.0.0.1:http", "the port must be a number in 0..65535"},
      {"127.0.0.1:", "expected host:port"},
      {"localhost", "expected host:port"},
      {":50051", "the host is empty"},
      {"unix:", "the unix socket path is empty"},
  };
  for (const auto& [address, why] : bad) {
    const std::string e = check_listen_address(address);
    EXPECT_EQ(e.rfind(std::string("--listen ") + address + ": ", 0), 0u) << e;
    EXPECT_NE(e.find(why), std::string::npos) << e;
  }
  EXPECT_NE(check_listen_address("unix:/" + std::string(200, 'x')).find("longer than 107 bytes"),
            std::string::npos);
  for (const char* ok : {"127.0.0.1:0", "127.0.0.1:65535", "0.0.0.0:50051", "[::1]:50051",
                         "localhost:1", "unix-abstract:epic"}) {
    EXPECT_EQ(check_listen_address(ok), "") << ok;
  }
}

bool lists_groups(const std::string& address) {
  auto stub =
      pb::IncManager::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  pb::ListGroupsResponse r;
  auto ctx = deadline(5s);
  return stub->ListGroups(ctx.get(), {}, &r).ok();
}

TEST(ListenAddress, ASecondManagerOnAServedUnixSocketIsRefused) {
  TempDir dir;
  TestManager first(dir);
  first.start(test_options());
  ServerOptions o;
  o.listen = first.address();
  o.service = test_options();
  auto second = ManagerServer::start(std::move(o), quiet_log());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("another process is serving this socket"),
            std::string::npos)
      << second.error().message;
  EXPECT_TRUE(lists_groups(first.address()));  // the first manager still has its socket
}

// Issue 16: the request-size cap. A request above --max-request-bytes is answered
// RESOURCE_EXHAUSTED (by gRPC, before any handler) and the manager keeps serving; the flag's
// range is checked with a message naming the value and the limits.
TEST(ListenAddress, ARequestAboveTheSizeCapIsResourceExhausted) {
  auto options = [](const TempDir& d, uint32_t cap) {
    ServerOptions o;
    o.listen = "unix:" + d.path() + "/manager.sock";
    o.service = test_options();
    o.max_request_bytes = cap;
    return o;
  };
  TempDir dir;
  auto m = ManagerServer::start(options(dir, kMinMaxRequestBytes), quiet_log());
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  const std::string address = "unix:" + dir.path() + "/manager.sock";
  auto stub =
      pb::IncManager::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  pb::JoinGroupRequest big = join_request("g", 2, 0);
  big.set_group(std::string(8192, 'x'));
  pb::JoinGroupResponse out;
  auto ctx = deadline();
  const grpc::Status st = stub->JoinGroup(ctx.get(), big, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_NE(st.error_message().find("4096"), std::string::npos) << st.error_message();
  EXPECT_TRUE(lists_groups(address));  // still serving

  for (const uint32_t bad : {kMinMaxRequestBytes - 1, kMaxMaxRequestBytes + 1}) {
    TempDir other;
    auto refused = ManagerServer::start(options(other, bad), quiet_log());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "--max-request-bytes " + std::to_string(bad) + " is outside 4096..67108864");
  }
}

TEST(ListenAddress, AStaleSocketFileIsReplaced) {
  TempDir dir;
  const std::string path = dir.path() + "/manager.sock";
  {  // a socket file left by a process that is gone
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  EXPECT_EQ(check_listen_address("unix:" + path), "");
  TestManager m(dir);
  m.start(test_options());
  EXPECT_TRUE(lists_groups(m.address()));
}

TEST(ListenAddress, ASecondManagerOnABoundTcpPortIsRefused) {
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.insecure = true;  // no client certificates on TCP
  o.service = test_options();
  auto first = ManagerServer::start(std::move(o), quiet_log());
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  const std::string address = "127.0.0.1:" + std::to_string(first.value()->port());
  ServerOptions again;
  again.listen = address;
  again.insecure = true;
  again.service = test_options();
  auto second = ManagerServer::start(std::move(again), quiet_log());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("cannot listen on " + address + ": the address is in use"),
            std::string::npos)
      << second.error().message;
  EXPECT_TRUE(lists_groups(address));
  first.value()->stop();
}

}  // namespace
}  // namespace epic::manager::service::testing
