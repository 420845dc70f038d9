#include "datapath/wire/checksum.h"

#include "datapath/wire/bytes.h"
#include "datapath/wire/layout.h"

namespace epic::wire {
uint16_t internet_checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += load_be16(data + i);
  if (len & 1) sum += uint32_t{data[len - 1]} << 8;
  return checksum_of_sum(sum);
}

uint16_t ipv4_header_checksum(const uint8_t* h) {
  uint32_t sum = 0;
  for (size_t i = 0; i < ipv4::kHeaderLen; i += 2) {
    if (i != ipv4::kChecksum) sum += load_be16(h + i);
  }
  return checksum_of_sum(sum);
}

uint16_t checksum_update16(uint16_t checksum, uint16_t old_word, uint16_t new_word) {
  const uint32_t sum = uint32_t{static_cast<uint16_t>(~checksum)} +
                       uint32_t{static_cast<uint16_t>(~old_word)} + new_word;
  return checksum_of_sum(sum);
}

uint16_t checksum_update32(uint16_t checksum, uint32_t old_value, uint32_t new_value) {
  checksum = checksum_update16(checksum, static_cast<uint16_t>(old_value >> 16),
                               static_cast<uint16_t>(new_value >> 16));
  return checksum_update16(checksum, static_cast<uint16_t>(old_value),
                           static_cast<uint16_t>(new_value));
}

}  // namespace epic::wire
