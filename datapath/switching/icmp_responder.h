// ICMP echo responder for the switch's own INC addresses: `ping <INC address>`
// is the first thing an operator tries. Answers IPv4 echo requests (no IP
// options, not fragmented) addressed to an INC address's MAC and IP; nothing
// else (the switch has no IP stack). Hot path: no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/switching/inc_address.h"

namespace epic::switching {

// If `frame` (Ethernet, at most one 802.1Q tag) is an ICMP echo request to one of `addrs`
// (destination MAC and IPv4 both that address's), writes the echo reply (same identifier,
// sequence and data; same VLAN tag; TTL 64) into out[0..cap) and returns its length, else 0.
size_t icmp_echo_reply(const uint8_t* frame, size_t len, const IncAddress* addrs, size_t naddrs,
                       uint8_t* out, size_t cap);

}  // namespace epic::switching
