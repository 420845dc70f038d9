// ActionApplier: inc-manager's messages → changes of the GroupTable → the agent's answers.
// An Action is answered with exactly one Ack or Fail (with the reason, for the operator);
// a Resync keeps the listed manager groups and removes the others. It remembers each manager
// group's context as the manager sent it, so that a (re)registration lists the installed
// groups in the manager's own words (agent.proto InstalledGroup) and the manager can
// re-synchronise without re-installing, i.e. without disturbing running collectives.
// Threading: not thread-safe; the agent's thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "agent/core/group_table.h"
#include "proto/inc/v1/agent.pb.h"

namespace epic::agent {

class ActionApplier {
 public:
  explicit ActionApplier(GroupTable& table) : table_(table) {}

  // The Ack or Fail answering `a`.
  inc::v1::AgentMessage apply(const inc::v1::Action& a);
  // "" or why the datapath refused the removals (then nothing was removed).
  std::string resync(const inc::v1::Resync& r);
  // The manager groups installed here (attached or detached), by group id.
  void list_installed(inc::v1::Register& out) const;

  const GroupTable& table() const { return table_; }

 private:
  std::string install(const inc::v1::Action& a);
  void forget_removed();  // drops contexts whose group is no longer in the table

  GroupTable& table_;
  std::map<uint32_t, inc::v1::GroupContext> contexts_;  // manager groups, as sent
};

}  // namespace epic::agent
