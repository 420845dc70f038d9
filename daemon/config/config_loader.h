// The protobuf edge of incd's config loader, in two steps that config.h's load functions
// chain together:
//   1. parse_config_proto: YAML or JSON text → the epic.inc.v1.IncdConfig message, walking the
//      text's tree against the message descriptor, so that unknown keys, wrong types and
//      out-of-range numbers are reported with the path of the offending field.
//   2. validate_config: message → plain IncdConfig (config.h), after every semantic check.
// Both collect every error they find instead of stopping at the first.
// Exposed separately for tests and for callers that already hold a message (e.g. from a
// manager). Threading: pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "daemon/config/config.h"
#include "proto/inc/v1/incd_config.pb.h"

namespace epic::incd {

struct ProtoParseResult {
  inc::v1::IncdConfig message;      // what could be read, even when errors is not empty
  std::vector<ConfigError> errors;  // syntax, unknown keys, types, ranges of the encoding
};

ProtoParseResult parse_config_proto(std::string_view text, bool json);

// Semantic validation and conversion. `config` is set only when `errors` is empty.
LoadResult validate_config(const inc::v1::IncdConfig& message);

}  // namespace epic::incd
