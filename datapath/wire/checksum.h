// IPv4 header checksum (RFC 1071) and its incremental update (RFC 1624),
// used whenever a switch rewrites an address, TOS/ECN or TTL.
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace epic::wire {

// One's-complement checksum of `len` bytes, as stored on the wire (an odd length is padded
// with a zero byte, RFC 1071).
uint16_t internet_checksum(const uint8_t* data, size_t len);

// Checksum of a 20-byte IPv4 header, computed with its checksum field as zero.
uint16_t ipv4_header_checksum(const uint8_t* ip_header);

// The checksum of data whose 16-bit big-endian words, as host-order integers, sum to
// `word_sum` (RFC 1071: fold the carries, complement). For a header being written: summing the
// field values the writer already holds avoids reading back bytes it has just stored (a load
// spanning two smaller stores cannot be forwarded from the store buffer and stalls).
inline uint16_t checksum_of_sum(uint32_t word_sum) {
  while (word_sum >> 16) word_sum = (word_sum & 0xFFFF) + (word_sum >> 16);
  return static_cast<uint16_t>(~word_sum);
}

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for one 16-bit word changing from
// old_word to new_word. All values in host order of the big-endian wire words.
uint16_t checksum_update16(uint16_t checksum, uint16_t old_word, uint16_t new_word);
uint16_t checksum_update32(uint16_t checksum, uint32_t old_value, uint32_t new_value);

}  // namespace epic::wire
