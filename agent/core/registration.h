// The agent's Register message (proto/inc/v1/agent.proto): who the switch is (id, INC
// address, ports), what inc-manager may grant on it (capacity_bytes: the memory left after
// the static groups; largest window and pmtu), and the manager groups it serves right now — so that
// a re-registration after a lost stream lets the manager re-synchronise instead of reinstalling.
// Static groups (incd's config file) are not listed: the manager does not own them; their
// memory is already left out of capacity_bytes.
// Threading: pure function.
#pragma once

#include <string>
#include <vector>

#include "agent/core/action_applier.h"
#include "proto/context/context_validate.h"
#include "proto/inc/v1/agent.pb.h"
#include "proto/vocab/addr.h"

namespace epic::agent {

// An INC address of the switch and the MAC that answers for it.
struct IncAddress {
  uint32_t ipv4 = 0;  // host order
  vocab::MacAddr mac{};
};

struct SwitchIdentity {
  std::string switch_id;                 // operator-chosen, e.g. "leaf0"
  IncAddress inc;                        // the INC address the manager puts virtual QPs on
  std::vector<vocab::SwitchPort> ports;  // by id: name and IP MTU
  std::string agent_version = "incd 0.1.0";
};

inc::v1::AgentMessage make_register(const SwitchIdentity& id, const ActionApplier& applier);

}  // namespace epic::agent
