// Rendezvous: the ranks of a group join one by one (each rank's JoinGroup call carries its own
// endpoint); the last one completes the GroupRequest that IncManager::join admits. Every rank
// must agree on the group's size, window, pmtu, mode, P_Key and queue timeout; a rank joining twice
// with the same endpoint is a retry (accepted), with another endpoint an error. A rendezvous not
// complete within its timeout expires with a message naming the missing ranks.
// Threading: not thread-safe; owned next to the IncManager, on the same strand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "manager/core/error.h"
#include "manager/core/group.h"
#include "proto/vocab/limits.h"

namespace epic::manager {

struct RankJoin {
  std::string tenant{};
  std::string group{};  // the group's name
  uint32_t size = 0;    // ranks in the whole group
  RankRequest rank{};
  uint32_t window = vocab::kDefaultWindow;  // 0: sized by the manager (GroupRequest::window)
  uint32_t pmtu = vocab::kDefaultPmtu;
  std::optional<vocab::GroupMode> mode{};  // nullopt: the fabric's default (GroupRequest::mode)
  Millis queue_timeout{0};
  std::optional<uint16_t> pkey{};  // GroupRequest::pkey
  vocab::GroupArith arith{};       // GroupRequest::arith
  std::optional<uint8_t> dscp{};   // GroupRequest::dscp
};

struct ExpiredRendezvous {
  std::string tenant{}, group{};
  std::vector<uint32_t> joined{};  // the ranks that had joined (their calls get `error`)
  Error error{};
};

class Rendezvous {
 public:
  explicit Rendezvous(Millis timeout) : timeout_(timeout) {}

  // nullopt: recorded, waiting for more ranks. A GroupRequest: this was the last rank; the
  // rendezvous is over (admit the request).
  Result<std::optional<GroupRequest>> offer(const RankJoin& join, Millis now);
  // Rendezvous older than the timeout: forgotten, each with its DEADLINE_EXCEEDED error.
  std::vector<ExpiredRendezvous> expire(Millis now);
  void cancel(const std::string& tenant, const std::string& group);
  size_t waiting() const { return pending_.size(); }

 private:
  struct Pending {
    RankJoin first;  // the first rank's parameters, which all must match
    Millis started{0};
    std::map<uint32_t, RankRequest> ranks{};
  };
  Millis timeout_;
  std::map<std::pair<std::string, std::string>, Pending> pending_{};
};

}  // namespace epic::manager
