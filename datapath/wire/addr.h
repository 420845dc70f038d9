// Text forms of MAC, IPv4 and IPv6 addresses, for configs, tools and tests.
// Parsers return nullopt on malformed input. Not for the packet path.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "datapath/wire/roce_packet.h"

namespace epic::wire {

std::optional<MacAddr> parse_mac(std::string_view s);    // "02:00:00:00:00:01"
std::optional<uint32_t> parse_ipv4(std::string_view s);  // "10.0.0.1" -> host order
std::optional<Ipv6Addr> parse_ipv6(std::string_view s);  // "fd00::1"
std::string format_mac(const MacAddr& m);
std::string format_ipv4(uint32_t a);
std::string format_ipv6(const Ipv6Addr& a);

}  // namespace epic::wire
