// The core's state as proto messages: the contexts and actions sent to the IncAgents, the
// answers sent to ranks, and the views incctl shows (groups with their IncTrees, memory,
// tenants, topology).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "manager/core/actions.h"
#include "manager/core/group.h"
#include "manager/core/inc_manager.h"
#include "manager/core/tenant.h"
#include "proto/inc/v1/agent.pb.h"
#include "proto/inc/v1/manager.pb.h"

namespace epic::manager::service {

namespace pb = ::epic::inc::v1;

pb::Endpoint to_proto(const Endpoint& e);
pb::GroupContext to_proto(const SwitchContext& c);
pb::Action to_proto(const SwitchAction& a, uint64_t action_id);
pb::JoinGroupResponse to_proto(const RankAnswer& a);
pb::Tenant to_proto(const Tenant& t);
pb::Link to_proto(const Link& l);
pb::RankAttachment to_proto(const RankAttachment& r);
// GROUP_MODE_2 or GROUP_MODE_3 (a message from the manager names Mode-II explicitly; only a
// switch's context leaves it unset, context_proto.h write_mode).
pb::GroupMode mode_to_proto(vocab::GroupMode mode);
// `core` gives the group's Mode-II vs Mode-III costs.
pb::GroupInfo group_info(const Group& g, const IncManager& core);
pb::SwitchInfo switch_info(const SwitchSpec& s, const IncManager& core);
pb::SwitchMemory switch_memory(const SwitchId& id, const SwitchBook& book, const IncManager& core);

// The context a group's tree gives `sw` (with its grant's slots, 0 when reclaimed), or nullopt
// when the switch is not in the group's tree.
std::optional<SwitchContext> context_on(const Group& g, const SwitchId& sw);

// Whether the agent's copy of a context is what the manager installed (MACs compared as
// addresses, not as text).
bool same_context(const pb::GroupContext& agent, const pb::GroupContext& manager);

}  // namespace epic::manager::service
