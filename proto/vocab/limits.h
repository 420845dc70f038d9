// Protocol limits and defaults that every process shares — engine, incd, the
// IncAgent, inc-manager, libinc and the CLIs: what a window MW, a path MTU, a
// QPN, a group and a switch port may be, and the one default of each. A
// limit lives here once; components check against these, never a copy.
// Thread-safe: constants and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace epic::vocab {

// MW, the ranks' outstanding-packet window: a power of two in 1..kMaxWindow.
inline constexpr uint32_t kMaxWindow = 1u << 20;
// The window a group gets when nobody asks for another (libinc, incd, inc-manager).
inline constexpr uint32_t kDefaultWindow = 16;
// The largest window a switch accepts unless its configuration says otherwise.
inline constexpr uint32_t kDefaultSwitchMaxWindow = 1024;
constexpr bool valid_window(uint32_t window) {
  return window >= 1 && window <= kMaxWindow && (window & (window - 1)) == 0;
}

// Path MTU (IB MTU enum): payload bytes per packet.
inline constexpr uint16_t kMinPmtu = 256;
inline constexpr uint16_t kMaxPmtu = 4096;
inline constexpr uint16_t kDefaultPmtu = 1024;
inline constexpr std::string_view kPmtuChoices = "256, 512, 1024, 2048, 4096";
constexpr bool valid_pmtu(uint32_t pmtu) {
  return pmtu >= kMinPmtu && pmtu <= kMaxPmtu && (pmtu & (pmtu - 1)) == 0;
}

// Data packets of one collective in the group PSN space (and so in any rank's sequence, which
// holds no more of them): a quarter of the 24-bit PSN space at most, so that the packets of the
// collectives a switch remembers stay ordered by PSN (order is defined within half the space).
// The switch refuses a control message announcing more (drop_bad_control).
inline constexpr uint32_t kMaxCollectivePackets = 1u << 22;
// The largest buffer libinc moves in one collective (it splits larger calls): half of
// kMaxCollectivePackets at the smallest path MTU, so that whatever the MTU and the group size
// (ReduceScatter and AllGather round each rank's chunk up to whole packets) the collective fits.
inline constexpr uint64_t kMaxCollectiveBytes = uint64_t{kMaxCollectivePackets / 2} * kMinPmtu;

// Mode-III: the local ACK timeout of one hop (the switch's retransmission timer toward an
// out-endpoint, docs/mode3.md), in microseconds. It should cover a few round trips of the hop's
// link; the manager derives it from the link's latency, incd's config may set it per group.
inline constexpr uint32_t kMinHopTimeoutUs = 10;
inline constexpr uint32_t kMaxHopTimeoutUs = 1'000'000;
inline constexpr uint32_t kDefaultHopTimeoutUs = 1000;
constexpr bool valid_hop_timeout_us(uint32_t us) {
  return us >= kMinHopTimeoutUs && us <= kMaxHopTimeoutUs;
}

// QPNs are 24-bit; QPN 0 and 1 are special (SMI, GSI/management).
inline constexpr uint32_t kQpnLimit = 1u << 24;
// Virtual QPNs the manager hands out on a switch's INC address: [kFirstVirtualQpn, 2^24).
inline constexpr uint32_t kFirstVirtualQpn = 0x100;

// A group's ranks (engine::GroupConfig::num_ranks is 16 bits) and a tree node's children
// (the width of a slot's arrival bitmap).
inline constexpr uint32_t kMaxRanks = 65535;
inline constexpr uint32_t kMaxChildren = 64;

// Bytes of RoCEv2 framing around a pmtu-sized payload, with margin: a group with path
// MTU P needs an IP MTU >= P + kRoceOverheadBytes on every port it uses.
inline constexpr uint32_t kRoceOverheadBytes = 90;
// A switch port's IP MTU.
inline constexpr uint16_t kMinPortMtu = 68;
inline constexpr uint16_t kMaxPortMtu = 9600;

}  // namespace epic::vocab
