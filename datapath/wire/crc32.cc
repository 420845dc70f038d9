#include "datapath/wire/crc32.h"

#include <isa-l/crc.h>

namespace epic::wire {
namespace {

#if defined(__x86_64__)
// ISA-L's AVX-512 CRC leaves the upper vector state dirty; the legacy-SSE code
// that follows (its own short-buffer path, libc) then runs several times
// slower. Measured here: ICRC of a 1 KB frame 167 ns -> 56 ns with vzeroupper.
const bool has_avx = __builtin_cpu_supports("avx");
#endif

}  // namespace

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t len) {
  const uint32_t out = crc32_gzip_refl(crc, data, len);
#if defined(__x86_64__)
  if (has_avx) asm volatile("vzeroupper" ::: "memory");
#endif
  return out;
}

}  // namespace epic::wire
