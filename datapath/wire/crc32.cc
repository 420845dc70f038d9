#include "datapath/wire/crc32.h"

#include <isa-l/crc.h>

namespace epic::wire {

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t len) {
  return crc32_gzip_refl(crc, data, len);
}

}  // namespace epic::wire
