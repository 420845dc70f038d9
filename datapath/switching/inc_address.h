// IncAddress: one of the switch's own INC addresses — the IPv4 address (and
// the MAC that the ARP responder answers with) on which incd terminates the
// RoCEv2 edges of its groups. Frames to any other address are switched (L2).
#pragma once

#include <cstdint>

#include "datapath/wire/roce_packet.h"

namespace epic::switching {

struct IncAddress {
  uint32_t ipv4 = 0;  // host order
  vocab::MacAddr mac{};
  friend bool operator==(const IncAddress&, const IncAddress&) = default;
};

}  // namespace epic::switching
