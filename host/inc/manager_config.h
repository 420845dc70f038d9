// The INC_MANAGER keys of CommConfig (comm_config.cc): parsing one key into ManagerOptions and
// the checks of the whole set — INC_GROUP is required, the static peer keys conflict, TLS
// files come as a certificate with its key. Every error names the key.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>

#include "host/inc/comm_config.h"

namespace epic::inc {

// "" when `value` is good for `key` (an INC_MANAGER* / INC_TENANT / INC_GROUP / ... key),
// else what was expected.
std::string parse_manager_key(const std::string& key, const std::string& value,
                              ManagerOptions& out);
// With INC_MANAGER set: "" when the keys are consistent, else the error.
std::string check_manager_keys(const std::map<std::string, std::string>& pairs, CommConfig& c);
// Without INC_MANAGER: the first key that only makes sense with it, or "".
std::string manager_only_key(const std::map<std::string, std::string>& pairs);

}  // namespace epic::inc
