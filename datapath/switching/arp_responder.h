// ARP responder for the switch's own INC addresses (IncAddress): hosts resolve
// the address a group's RoCEv2 edge terminates on, and incd answers for it.
// Every other ARP frame (requests for hosts, replies, gratuitous ARP) is left
// to the L2 path, which floods or forwards it like any frame.
//
// Frames: Ethernet II with at most one 802.1Q tag (QinQ is not recognised),
// ARP for IPv4 over Ethernet only (htype 1, ptype 0x0800, hlen 6, plen 4).
// Threading: pure functions. Cost: ~7 ns per request for two addresses (gcc 12
// -O2, dev VM) plus a linear scan of `addrs` (a switch has a handful of INC
// addresses); no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/switching/inc_address.h"

namespace epic::switching {

namespace arp {
inline constexpr size_t kLen = 28;  // IPv4-over-Ethernet ARP body
inline constexpr size_t kHtype = 0, kPtype = 2, kHlen = 4, kPlen = 5, kOper = 6, kSha = 8,
                        kSpa = 14, kTha = 18, kTpa = 24;
inline constexpr uint16_t kHtypeEthernet = 1;
inline constexpr uint16_t kOperRequest = 1, kOperReply = 2;
inline constexpr size_t kMinFrameLen = 60;  // Ethernet minimum without FCS
}  // namespace arp

// True when the frame's EtherType, after at most one 802.1Q tag, is ARP
// (0x0806). Says nothing about whether the ARP body is well formed.
bool is_arp(const uint8_t* frame, size_t len);

// If `frame` is an ARP request (oper 1) whose target IP is one of `addrs`,
// writes the ARP reply into out[0..cap) and returns its length (60); else 0.
// The reply comes from that address's MAC and IP and goes to the requester's
// sender MAC and IP (Ethernet destination = requester's sender MAC), keeping
// the request's 802.1Q tag if any, zero-padded to 60 bytes.
// Returns 0 for: non-ARP or truncated frames, other hardware/protocol types,
// replies, gratuitous ARP (sender IP == target IP), a multicast sender MAC,
// targets not in `addrs`, and cap < 60. An ARP probe (sender IP 0.0.0.0,
// RFC 5227) is answered, to 0.0.0.0, which is how the owner defends it.
// `out` may be `frame` (the reply is built in the request's buffer).
size_t arp_reply(const uint8_t* frame, size_t len, const IncAddress* addrs, size_t naddrs,
                 uint8_t* out, size_t cap);

}  // namespace epic::switching
