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

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for one 16-bit word changing from
// old_word to new_word. All values in host order of the big-endian wire words.
uint16_t checksum_update16(uint16_t checksum, uint16_t old_word, uint16_t new_word);
uint16_t checksum_update32(uint16_t checksum, uint32_t old_value, uint32_t new_value);

}  // namespace epic::wire
