// ECN marking (RFC 3168): what an AQM does to an ECN-capable packet instead of dropping it —
// set its IP ECN field to CE (11) — with the IPv4 header checksum updated incrementally
// (RFC 1624). A frame of Ethernet [802.1Q] / IPv4 or IPv6. The RoCEv2 ICRC masks the TOS /
// traffic class, so it stays valid. Used by incd's egress queues past their marking depth and
// by its fault stage to drill the congestion path (docs/congestion.md).
// Thread-safety: pure function on the caller's bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace epic::wire {

// Marks the frame CE when it is ECN-capable (ECT(0) or ECT(1)); true if it did. A Not-ECT or
// already CE frame, a non-IP or too short frame is left as it is (false).
bool mark_ce(uint8_t* frame, size_t len);

// The frame's IPv4 TOS byte or IPv6 traffic class (DSCP and ECN); 0 for a frame that is
// neither, or too short. incd's egress classifies frames by its DSCP (docs/traffic-classes.md).
uint8_t traffic_class(const uint8_t* frame, size_t len);

}  // namespace epic::wire
