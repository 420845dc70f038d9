// Field checks of incd's config validator (config_validate.cc, manager_validate.cc): each check
// reports what is wrong into an error list, with the field's path, and returns the converted
// value only when the field is good. The checks of addresses, ports and groups are the context
// checks' own (proto/context/context_proto.h, context_validate.h), so that a groups[] entry is
// checked exactly like a context inc-manager sends; this header names them for the loader and
// builds the SwitchView a group is checked against from a loaded configuration.
// Threading: plain functions and values.
#pragma once

#include <vector>

#include "daemon/config/config.h"
#include "proto/context/context_proto.h"
#include "proto/context/context_validate.h"

namespace epic::incd {

using Errors = std::vector<ConfigError>;

using vocab::check_ipv4;
using vocab::check_mac;
using vocab::hex;
using vocab::index;
using vocab::port_ref;
using vocab::quote;
using vocab::SwitchPort;
using vocab::SwitchView;

// The ports as a context sees them: name and IP MTU, by id.
std::vector<SwitchPort> switch_ports(const std::vector<PortConfig>& ports);
// The switch a group is checked against, from a loaded, valid configuration.
SwitchView switch_view(const std::vector<PortConfig>& ports, const SwitchConfig& sw);

}  // namespace epic::incd
