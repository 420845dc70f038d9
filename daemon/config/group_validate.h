// Checks one group's context — a `groups[]` entry of incd's config file, or a context that
// inc-manager sends the agent in the same shape — against the switch it is for, and converts
// it to the engine's GroupConfig. The same checks and messages in both places: ranks, window,
// pmtu against every port the group uses, children covering ranks once (all of them at a root),
// endpoints (local ones on an INC address, remote ones not), and every local and remote
// (ipv4, qpn) used once across all the switch's groups.
// Threading: a plain object; one per validation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/config/checks.h"
#include "datapath/engine/group.h"
#include "proto/inc/v1/incd_config.pb.h"

namespace epic::incd {

class GroupValidator {
 public:
  // `sw` and `errors` must outlive the validator; errors are appended to `errors`.
  GroupValidator(const SwitchView& sw, Errors& errors) : sw_(sw), errors_(errors) {}

  // Marks the endpoints of a group already installed as used; `name` ("group 7") says whose
  // they are in messages.
  void reserve(const engine::GroupConfig& g, const std::string& name);

  // Checks `g`, whose fields are named from `path` ("groups[0]", "context"). The config
  // without any error, or nullopt (and the errors appended). Its endpoints count as used by
  // later checks either way.
  std::optional<engine::GroupConfig> check(const inc::v1::IncdConfig::Group& g,
                                           const std::string& path);

 private:
  void fail(std::string path, std::string message) {
    errors_.push_back({std::move(path), std::move(message)});
  }
  std::optional<engine::Endpoint> endpoint(bool present, const inc::v1::IncdConfig::Endpoint& e,
                                           const std::string& path, bool local);

  const SwitchView& sw_;
  Errors& errors_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> local_keys_;   // (ipv4, qpn) → path
  std::map<std::pair<uint32_t, uint32_t>, std::string> remote_keys_;  // (ipv4, qpn) → path
};

}  // namespace epic::incd
