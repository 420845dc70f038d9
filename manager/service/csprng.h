// The kernel's CSPRNG for inc-manager's unpredictable numbers (manager/core/random_bits.h):
// switch QPNs, initial PSNs, a host-fallback ring's PSN. getrandom(2) without flags blocks only
// until the kernel's pool is first initialised, then never fails for 8 bytes; a failure all
// the same (an old kernel without the call) throws std::system_error rather than hand out a
// guessable number.
#pragma once

#include <cstdint>

namespace epic::manager::service {

uint64_t csprng_bits();

}  // namespace epic::manager::service
