// GroupSink: what the agent needs of the datapath — replace the installed groups with a new
// set. In incd it is Datapath::set_groups (an RCU-published snapshot, daemon/datapath_sink.h);
// in tests a fake that records the sets. Contract the agent relies on: a group whose
// context (vocab::GroupContext, the engine's GroupConfig) is unchanged between two sets keeps its
// worker, its slot memory and its engine state (collectives in flight, PSN frontiers, counters); a
// group that is new starts fresh; a group left out is gone after the call returns. Threading:
// called from the agent's thread only.
#pragma once

#include <string>
#include <vector>

#include "proto/context/group_context.h"

namespace epic::agent {

class GroupSink {
 public:
  virtual ~GroupSink() = default;
  // "" when `groups` is installed, else why not (and the previous set stays installed).
  virtual std::string set_groups(const std::vector<vocab::GroupContext>& groups) = 0;
};

}  // namespace epic::agent
