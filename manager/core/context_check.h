// The context inc-manager is about to send one switch, checked by the one context library
// (proto/context/context_validate.h) — the rules the switch's agent and incd's config loader
// apply — so that a context the switch would refuse is caught, by field path and limit, before
// it is sent. Port names are resolved to port ids in the order the switch registered its ports
// (the order of incd's `ports`, whose index is the engine's port id).
// Threading: pure functions.
#pragma once

#include <string>

#include "manager/core/actions.h"
#include "manager/core/topology.h"
#include "proto/context/group_context.h"

namespace epic::manager {

// "" when `c` (with its grant, when not 0) passes the context checks against switch `sw`, else
// every error, "context.children[2].remote.qpn: 0x1000000 does not fit in 24 bits (must be
// < 0x1000000); …".
std::string context_errors(const SwitchContext& c, const SwitchSpec& sw);

}  // namespace epic::manager
