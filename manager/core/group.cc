#include "manager/core/group.h"

#include "proto/vocab/psn.h"

namespace epic::manager {

std::string_view group_state_name(GroupState s) {
  switch (s) {
    case GroupState::kQueued:
      return "queued";
    case GroupState::kInstalling:
      return "installing";
    case GroupState::kInstalled:
      return "installed";
    case GroupState::kReclaimed:
      return "reclaimed";
    case GroupState::kBroken:
      return "broken";
  }
  return "unknown";
}

uint32_t initial_psn_for(uint32_t group_id) {
  // splitmix64's finaliser: every bit of the id moves every bit of the PSN.
  uint64_t z = uint64_t{group_id} + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint32_t>(z & vocab::kPsnMask);
}

vocab::Ipv6Addr ipv4_mapped_gid(uint32_t ipv4) {
  vocab::Ipv6Addr gid{};
  gid[10] = 0xFF;
  gid[11] = 0xFF;
  gid[12] = static_cast<uint8_t>(ipv4 >> 24);
  gid[13] = static_cast<uint8_t>(ipv4 >> 16);
  gid[14] = static_cast<uint8_t>(ipv4 >> 8);
  gid[15] = static_cast<uint8_t>(ipv4);
  return gid;
}

}  // namespace epic::manager
