// RandomBits: where the manager's unpredictable numbers come from — each switch's virtual QPNs
// and each group's initial PSN (docs/security.md). Predictable ones tell a host on the fabric
// which (IPv4, QPN) and PSNs a group uses before it has seen a frame of it. inc-manager's
// service sets the kernel's CSPRNG (manager/service/csprng.h); left unset (the core's tests),
// the choices are deterministic: the lowest free QPN, initial_psn_for(group id).
// Threading: called on the IncManager's thread only.
#pragma once

#include <cstdint>
#include <functional>

namespace epic::manager {

using RandomBits = std::function<uint64_t()>;

}  // namespace epic::manager
