// The numbers and rules the manager shares with incd and the rank library: what a window, a
// pmtu, a QPN and a unicast address may be (the same rules as incd's config loader,
// docs/incd-config.md), the engine's fan-out limit, and the manager's clock type.
// Threading: constants and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "datapath/wire/roce_packet.h"

namespace epic::manager {

// The manager never reads a clock: every call that depends on time takes `now` in milliseconds
// of the caller's clock. The service passes wall-clock time (system_clock since the epoch) so
// that times kept in the store stay meaningful across a restart.
using Millis = std::chrono::milliseconds;

inline constexpr uint32_t kMaxRanks = 65535;      // engine::GroupConfig::num_ranks is 16 bits
inline constexpr uint32_t kMaxChildren = 64;      // engine::kMaxChildren: a slot's bitmap width
inline constexpr uint32_t kMaxWindow = 1u << 20;  // MW: a power of two in 1..2^20
inline constexpr uint32_t kQpnLimit = 1u << 24;   // QPNs are 24-bit
// Virtual QPNs the manager hands out on a switch's INC address: [kFirstVirtualQpn, 2^24).
inline constexpr uint32_t kFirstVirtualQpn = 0x100;
// Bytes of RoCEv2 framing around a pmtu-sized payload, with margin (docs/incd-config.md):
// a group with pmtu P needs IP MTU >= P + 90 on every port it uses.
inline constexpr uint32_t kRoceOverheadBytes = 90;
inline constexpr uint16_t kMinPortMtu = 68;
inline constexpr uint16_t kMaxPortMtu = 9600;

bool valid_window(uint32_t window);  // a power of two in 1..kMaxWindow
bool valid_pmtu(uint32_t pmtu);      // 256 | 512 | 1024 | 2048 | 4096
// Not 0.0.0.0, broadcast, multicast (224/4), loopback (127/8) or class E (240/4).
bool is_unicast_ipv4(uint32_t ipv4);
bool is_unicast_mac(const wire::MacAddr& mac);  // not all-zero, group bit clear

std::string ipv4_text(uint32_t ipv4);  // "10.77.0.1"
std::string mac_text(const wire::MacAddr& mac);
std::string qpn_text(uint32_t qpn);  // "0x000100"

}  // namespace epic::manager
