// Address types every process shares — MAC, IPv4 (host order), IPv6/GID —
// their text forms for configs, tools and tests, and what counts as a unicast
// host address (for INC addresses, rank endpoints and switch ports alike).
// Parsers return nullopt on malformed input. Not for the packet path.
// Thread-safe: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace epic::vocab {

using MacAddr = std::array<uint8_t, 6>;
using Ipv6Addr = std::array<uint8_t, 16>;  // also a RoCEv2 GID

std::optional<MacAddr> parse_mac(std::string_view s);    // "02:00:00:00:00:01"
std::optional<uint32_t> parse_ipv4(std::string_view s);  // "10.0.0.1" -> host order
std::optional<Ipv6Addr> parse_ipv6(std::string_view s);  // "fd00::1"
std::string format_mac(const MacAddr& m);
std::string format_ipv4(uint32_t a);
std::string format_ipv6(const Ipv6Addr& a);
std::string format_qpn(uint32_t qpn);  // "0x000100"

// Not 0.0.0.0, broadcast, loopback (127/8), multicast (224/4) or class E (240/4).
bool is_unicast_ipv4(uint32_t ipv4);
// Not all-zero, group (multicast) bit clear.
bool is_unicast_mac(const MacAddr& mac);

// The GID of an IPv4 address in RoCEv2: ::ffff:a.b.c.d.
Ipv6Addr ipv4_mapped_gid(uint32_t ipv4);

// A range of UDP source ports, both ends included (the engine's edge binding takes a member's
// RoCEv2 frames only from such a range: incd's switch.udp_source_ports).
struct UdpPortRange {
  uint16_t first = 0;
  uint16_t last = 0xFFFF;
  bool contains(uint16_t port) const { return port >= first && port <= last; }
  friend bool operator==(const UdpPortRange&, const UdpPortRange&) = default;
};

}  // namespace epic::vocab
