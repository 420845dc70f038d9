// The protocol's limits and address rules as the manager's code uses them — each defined
// once in the protocol vocabulary (proto/vocab/limits.h, proto/vocab/addr.h), shared with
// incd, the IncAgent and the rank library — and the manager's clock type.
// Threading: constants and pure functions.
#pragma once

#include <chrono>

#include "proto/vocab/addr.h"
#include "proto/vocab/limits.h"

namespace epic::manager {

// The manager never reads a clock: every call that depends on time takes `now` in milliseconds
// of the caller's clock. The service passes wall-clock time (system_clock since the epoch) so
// that times kept in the store stay meaningful across a restart.
using Millis = std::chrono::milliseconds;

using vocab::is_unicast_ipv4;
using vocab::is_unicast_mac;
using vocab::kFirstVirtualQpn;
using vocab::kMaxChildren;
using vocab::kMaxPortMtu;
using vocab::kMaxRanks;
using vocab::kMaxWindow;
using vocab::kMinPortMtu;
using vocab::kQpnLimit;
using vocab::kRoceOverheadBytes;
using vocab::valid_pmtu;
using vocab::valid_window;

}  // namespace epic::manager
