// Window sizing: the window MW the manager gives a group that does not ask for one, from the
// bandwidth-delay product of its IncTree (docs/manager.md "Window sizing").
//
// EPIC's cost analysis (docs/design.md "Costs"): Mode-II keeps the path BDP in flight — a rank's
// packet is ACKed only once the result has come back down the tree, so its window must cover
// the round trip from the rank to the root and back: 2(H-1)·B·L bytes with H-1 edges from a
// rank to the root, link bandwidth B and one-way link latency L, i.e. (H-1)·B·RTT with
// RTT = 2L per link. The switch then holds 2·MW slots, EPIC's 4(H-1)·B·L of memory per switch.
// With links of different speeds the manager takes, conservatively, the slowest link of the
// tree and the largest sum of link RTTs on any rank's path to the root:
//
//   MW = the smallest power of two with MW · pmtu >= B_min · max_rank Σ_path RTT_link
//
// clamped to 1..min(kMaxWindow, every tree switch's max_window and the largest window its
// capacity could hold). Link speeds are declared per
// link in the fabric file; undeclared links have kDefaultLinkSpeed (100 Gb/s, 10 µs RTT).
//
// Mode-III (docs/mode3.md) makes every hop reliable on its own: a switch ACKs an upload when it
// takes it and keeps a result only until the next hop ACKs it, so a window has to cover one
// hop's round trip, not the path's — EPIC's one-hop bound, 2·MW slots = 4·B·L, whatever the
// tree's depth. The manager takes the slowest link and the largest single link RTT:
//
//   MW = the smallest power of two with MW · pmtu >= B_min · max_link RTT_link
//
// with the same clamps. Each hop's ACK timeout (hop_timeout_for) is a few of the slowest link's
// round trips plus the time to send a window on it: kHopTimeoutRtts · max_link RTT_link +
// kHopTimeoutSendWindows · MW · pmtu / B_min, rounded up to whole µs and clamped to vocab's
// kMinHopTimeoutUs..kMaxHopTimeoutUs.
// Threading: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "manager/core/inc_tree.h"
#include "manager/core/topology.h"
#include "proto/context/group_context.h"

namespace epic::manager {

struct LinkSpeed {
  double bandwidth_gbps = 100;  // > 0: the link's rate, Gb/s (10^9 bit/s)
  double rtt_us = 10;           // > 0: its round-trip time, µs (both directions, one hop)
  friend bool operator==(const LinkSpeed&, const LinkSpeed&) = default;
};
inline constexpr LinkSpeed kDefaultLinkSpeed{};

// The link speeds the operator declared: switch-to-switch links, and the link from a rank NIC
// (by its address) to its switch port. Anything not listed has kDefaultLinkSpeed.
struct LinkSpeeds {
  std::map<Link, LinkSpeed> links{};
  std::map<uint32_t, LinkSpeed> ranks{};  // rank NIC IPv4 (host order) -> its link
  LinkSpeed of(const Link& l) const;
  LinkSpeed of_rank(uint32_t ipv4) const;
  friend bool operator==(const LinkSpeeds&, const LinkSpeeds&) = default;
};

// Bytes in flight on a path of `bandwidth_gbps` over `rtt_us`: B·RTT/8, rounded up.
uint64_t bdp_bytes(double bandwidth_gbps, double rtt_us);

// The smallest power of two W with W·pmtu >= bdp, within 1..max_window (a power of two).
uint32_t window_for_bdp(uint64_t bdp, uint32_t pmtu, uint32_t max_window);

// What a tree's window has to cover.
struct PathBdp {
  double bandwidth_gbps = 0;  // the slowest link of the tree
  double rtt_us = 0;          // the largest sum of link RTTs from a rank to the root
  uint64_t bytes = 0;         // bdp_bytes(bandwidth_gbps, rtt_us): Mode-II's window
  double hop_rtt_us = 0;      // the largest RTT of one link of the tree
  uint64_t hop_bytes = 0;     // bdp_bytes(bandwidth_gbps, hop_rtt_us): Mode-III's window
  // What `mode`'s window has to cover.
  uint64_t bytes_for(vocab::GroupMode mode) const {
    return mode == vocab::GroupMode::kMode3 ? hop_bytes : bytes;
  }
};

// Mode-III's hop timeout: this many round trips of the tree's slowest link.
inline constexpr uint32_t kHopTimeoutRtts = 4;
// ... plus this many times the time to send MW results on the slowest link.
inline constexpr uint32_t kHopTimeoutSendWindows = 2;
// `rank_ipv4[r]` is rank r's NIC address (the tree's rank children name ranks by index).
PathBdp tree_bdp(const IncTree& tree, const LinkSpeeds& speeds,
                 const std::vector<uint32_t>& rank_ipv4);

// The window for a group in `mode` on `tree` with path MTU `pmtu`: window_for_bdp of tree_bdp's
// bytes_for(mode), clamped to kMaxWindow, the max_window of every switch of the tree and the
// largest window whose memory (vocab::group_memory_bytes) each switch's capacity could hold.
uint32_t bdp_window(const IncTree& tree, const Topology& topology, const LinkSpeeds& speeds,
                    const std::vector<uint32_t>& rank_ipv4, uint32_t pmtu,
                    vocab::GroupMode mode = vocab::GroupMode::kMode2,
                    const vocab::GroupArith& arith = {});

// The time a link of `bandwidth_gbps` takes to send a hop's send window — `window` (MW)
// results of `pmtu` bytes (the engine's Pipes keep at most MW in flight), in µs; 0 for a
// bandwidth that is not positive.
double send_window_us(double bandwidth_gbps, uint32_t window, uint32_t pmtu);

// Mode-III's hop timeout for a tree whose largest link RTT is `hop_rtt_us` and slowest link
// `bandwidth_gbps`, for a group with window `window` and path MTU `pmtu`: kHopTimeoutRtts round
// trips plus kHopTimeoutSendWindows send windows (the last result of a window waits behind the
// others on the link: a timeout shorter than that fires before its ACK can come back and every
// go-back queues more), rounded up to whole µs, clamped to kMinHopTimeoutUs..kMaxHopTimeoutUs.
uint32_t hop_timeout_for(double hop_rtt_us, double bandwidth_gbps, uint32_t window, uint32_t pmtu);

}  // namespace epic::manager
