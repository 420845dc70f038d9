// ManagerJoin: a rank's client of inc-manager's JoinGroup rendezvous (proto/inc/v1/manager.proto).
// The rank tells the manager its INC endpoint (and, when it accepts a host-collective fallback,
// its ring endpoint); every rank of the group gets the switch's peer parameters once the tree is
// installed — or, when there is no INC memory and every rank accepted it, the ring's members.
// Manager errors are reported verbatim with the gRPC code's name:
//   "inc: join group 'g' (tenant t) at unix:/x failed: RESOURCE_EXHAUSTED: no INC memory: ..."
// gRPC stays inside manager_join.cc. Thread-safety: none; one thread owns an object.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/inc/comm_config.h"
#include "host/transport/open.h"

namespace epic::inc {

// A rank's endpoint as the manager passes it around (RankEndpoint).
struct JoinEndpoint {
  uint32_t ipv4 = 0;  // host order
  std::array<uint8_t, 6> mac{};
  std::array<uint8_t, 16> gid{};
  uint32_t qpn = 0;
};

struct JoinAnswer {
  uint32_t group_id = 0;  // 0 in host-fallback mode
  std::string switch_id;
  host::PeerParams peer;  // INC mode; initial_psn and pmtu also apply to a host ring
  bool host_fallback = false;
  std::string fallback_reason;
  std::vector<JoinEndpoint> members;  // host fallback: every rank's ring endpoint, by rank
};

class ManagerJoin {
 public:
  explicit ManagerJoin(const ManagerOptions& options);
  ~ManagerJoin();
  ManagerJoin(const ManagerJoin&) = delete;
  ManagerJoin& operator=(const ManagerJoin&) = delete;

  // Blocks until every rank joined (or options.join_timeout). `host` set: this rank accepts
  // a host fallback with that ring endpoint. Error: the message described above.
  soft::io::Result<JoinAnswer> join(uint16_t rank, uint16_t size, const host::LocalEndpoint& inc,
                                    const std::optional<JoinEndpoint>& host);
  // LeaveGroup, best effort within `bound`: "" or why it failed.
  std::string leave(uint16_t rank, std::chrono::milliseconds bound);

  // "group 'g' (tenant t) at unix:/x"
  std::string where() const;

 private:
  struct Impl;
  ManagerOptions options_;
  std::unique_ptr<Impl> impl_;
};

// The gRPC status code's name ("RESOURCE_EXHAUSTED"); the number for unknown codes.
std::string grpc_code_name(int code);

}  // namespace epic::inc
