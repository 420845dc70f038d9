// Checks of incd's `manager:` section (the IncAgent's connection to inc-manager) against the
// rest of a config being validated: its INC address must be one of switch.inc_addresses and
// its memory capacity (bytes) must hold the static groups.
// Threading: pure function.
#pragma once

#include <optional>
#include <vector>

#include "daemon/config/checks.h"
#include "proto/inc/v1/incd_config.pb.h"

namespace epic::incd {

// nullopt (and errors under "manager.") when a field is wrong.
std::optional<ManagerConfig> validate_manager(const inc::v1::IncdConfig::Manager& m,
                                              const SwitchConfig& sw,
                                              const std::vector<engine::GroupConfig>& groups,
                                              Errors& errors);

}  // namespace epic::incd
