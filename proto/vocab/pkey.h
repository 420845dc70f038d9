// RoCE partition keys: the BTH's P_Key (IBTA vol. 1, 9.2 and 10.9). RoCEv2 NICs put the P_Key of
// the QP's pkey_index into every packet; a group may be bound to one partition, and then every
// packet the switch acts on for it must carry a matching key (datapath/engine/edge_binding.h)
// and every packet the switch sends for it carries the group's key.
// Threading: constants and pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace epic::vocab {

// The default partition, full membership: what every RoCE port has at pkey_index 0.
inline constexpr uint16_t kDefaultPkey = 0xFFFF;
inline constexpr uint16_t kPkeyFullMember = 0x8000;
inline constexpr uint16_t kPkeyPartitionMask = 0x7FFF;

// The invalid P_Key is 0x0000 / 0x8000 (partition number 0).
constexpr bool pkey_valid(uint32_t key) { return key <= 0xFFFF && (key & kPkeyPartitionMask) != 0; }

// IBTA's match: the same partition number, and at least one of the two keys a full member.
constexpr bool pkey_matches(uint16_t packet, uint16_t group) {
  return (packet & kPkeyPartitionMask) == (group & kPkeyPartitionMask) &&
         ((packet | group) & kPkeyFullMember) != 0 && pkey_valid(packet);
}

// "" when `key` may be a group's P_Key; else why not (the caller adds the field).
inline std::string pkey_error(uint32_t key) {
  if (pkey_valid(key)) return "";
  return std::to_string(key) +
         " is not a P_Key (16 bits, partition number 1..0x7FFF; 0xFFFF is the default "
         "partition)";
}

}  // namespace epic::vocab
