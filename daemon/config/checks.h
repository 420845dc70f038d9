// Field checks shared by incd's config validator (config_validate.cc) and the group validator
// (group_validate.h): each check reports what is wrong into an error list, with the field's
// path, and returns the converted value only when the field is good. SwitchView is what a
// group is checked against: the switch's ports and INC addresses.
// Threading: plain functions and values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/config/config.h"
#include "proto/vocab/addr.h"

namespace epic::incd {

using Errors = std::vector<ConfigError>;

std::string quote(std::string_view s);                 // "\"s\""
std::string hex(uint32_t v);                           // "0x1f"
std::string index(const std::string& path, size_t i);  // "path[i]"

// A unicast host IPv4 address in dotted-quad text (host order).
std::optional<uint32_t> check_ipv4(const std::string& s, const std::string& path, Errors& errors);
// A unicast, non-zero MAC "02:00:00:00:00:01".
std::optional<vocab::MacAddr> check_mac(const std::string& s, const std::string& path,
                                        Errors& errors);

// The switch a group refers to. Built from a config file while it is being checked (names may
// then be empty or repeated: those errors are reported where the ports are), or from a loaded,
// valid IncdConfig (of()).
struct SwitchView {
  std::vector<PortConfig> ports;          // by index
  std::map<std::string, size_t> port_of;  // name → first port with it
  // INC address → its MAC (nullopt when the MAC itself is invalid) and its index in
  // switch.inc_addresses.
  std::map<uint32_t, std::pair<std::optional<vocab::MacAddr>, int>> inc_macs;
  std::vector<std::string> inc_address_text;  // every inc address's ipv4 as written

  static SwitchView of(const std::vector<PortConfig>& ports, const SwitchConfig& sw);
};

// The index of the port named `name`; an error listing the known names when there is none.
std::optional<uint16_t> port_ref(const SwitchView& sw, const std::string& name,
                                 const std::string& path, Errors& errors);

}  // namespace epic::incd
