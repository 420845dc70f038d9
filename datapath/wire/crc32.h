// Plain CRC-32 (IEEE 802.3 / zlib polynomial, reflected), the primitive under
// the RoCEv2 ICRC. Backed by ISA-L's folding (PCLMULQDQ) implementation, the
// fastest CRC-32 packaged in Debian (see docs/dependencies.md and the wire
// benchmark for the measurement against zlib).
// `crc32_update(0, p, n)` equals zlib's `crc32(0, p, n)`; chaining calls over
// consecutive pieces equals one call over their concatenation.
// Thread-safe: pure function.
#pragma once

#include <cstddef>
#include <cstdint>

namespace epic::wire {

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t len);

}  // namespace epic::wire
