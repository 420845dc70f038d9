// Which inc-manager addresses may carry plaintext (grpc_target.h): unix sockets and loopback
// hosts only — the rule the manager's server and its three clients share.
#include "proto/vocab/grpc_target.h"

#include <gtest/gtest.h>

namespace epic::vocab {
namespace {

TEST(GrpcTarget, OnlyUnixSocketsAndLoopbackAreLocal) {
  for (const char* local :
       {"unix:/run/epic/manager.sock", "unix-abstract:epic", "localhost:50051", "127.0.0.1:7443",
        "127.1.2.3:1", "[::1]:50051", "ipv4:127.0.0.1:50051", "ipv6:[::1]:50051"}) {
    EXPECT_TRUE(is_local_grpc_target(local)) << local;
  }
  for (const char* remote :
       {"10.0.0.1:7443", "0.0.0.0:50051", "[::]:50051", "[2001:db8::1]:7443", "mgr:7443",
        "dns:///mgr:7443", "128.0.0.1:1", "localhost.example.com:1", "1127.0.0.1:5"}) {
    EXPECT_FALSE(is_local_grpc_target(remote)) << remote;
  }
}

}  // namespace
}  // namespace epic::vocab
