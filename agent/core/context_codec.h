// SwitchContext (proto/inc/v1/agent.proto, what inc-manager sends) → a groups[] entry of
// incd's config schema (proto/inc/v1/incd_config.proto), field for field, so that the agent
// checks it with the config loader's own group checks (daemon/config/group_validate.h).
// Nothing is defaulted or checked here beyond what the config schema cannot express.
// Threading: pure functions.
#pragma once

#include <optional>

#include "proto/context/context_validate.h"
#include "proto/inc/v1/agent.pb.h"
#include "proto/inc/v1/incd_config.pb.h"

namespace epic::agent {

// nullopt (and errors, paths under "context") when the context says what a groups[] entry
// cannot: a rank child covering more than one rank.
std::optional<inc::v1::IncdConfig::Group> to_group_message(const inc::v1::SwitchContext& c,
                                                           vocab::ContextErrors& errors);

}  // namespace epic::agent
