#include "datapath/wire/ecn_mark.h"

#include "datapath/wire/bytes.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/layout.h"

namespace epic::wire {

bool mark_ce(uint8_t* frame, size_t len) {
  size_t l3 = eth::kHeaderLen;
  if (len < l3) return false;
  uint16_t type = load_be16(frame + eth::kType);
  if (type == eth::kTypeVlan) {
    l3 += eth::kVlanTagLen;
    if (len < l3) return false;
    type = load_be16(frame + eth::kType + eth::kVlanTagLen);
  }
  uint8_t* ip = frame + l3;
  if (type == eth::kTypeIpv4) {
    if (len < l3 + ipv4::kHeaderLen || (ip[ipv4::kVerIhl] >> 4) != 4) return false;
    const uint8_t tos = ip[ipv4::kTos];
    if ((tos & 3) == 0 || (tos & 3) == 3) return false;
    // The 16-bit word holding version/IHL and TOS changes.
    const uint16_t before = load_be16(ip + ipv4::kVerIhl);
    ip[ipv4::kTos] = static_cast<uint8_t>(tos | 3);
    const uint16_t after = load_be16(ip + ipv4::kVerIhl);
    store_be16(ip + ipv4::kChecksum,
               checksum_update16(load_be16(ip + ipv4::kChecksum), before, after));
    return true;
  }
  if (type == eth::kTypeIpv6) {
    if (len < l3 + ipv6::kHeaderLen || (ip[0] >> 4) != 6) return false;
    // Traffic class: the low 4 bits of byte 0 and the high 4 of byte 1; ECN is bits 5:4 of 1.
    const uint8_t ecn = (ip[1] >> 4) & 3;
    if (ecn == 0 || ecn == 3) return false;
    ip[1] = static_cast<uint8_t>(ip[1] | 0x30);
    return true;
  }
  return false;
}

uint8_t traffic_class(const uint8_t* frame, size_t len) {
  size_t l3 = eth::kHeaderLen;
  if (len < l3) return 0;
  uint16_t type = load_be16(frame + eth::kType);
  if (type == eth::kTypeVlan) {
    l3 += eth::kVlanTagLen;
    if (len < l3) return 0;
    type = load_be16(frame + eth::kType + eth::kVlanTagLen);
  }
  const uint8_t* ip = frame + l3;
  if (type == eth::kTypeIpv4 && len >= l3 + ipv4::kHeaderLen && (ip[ipv4::kVerIhl] >> 4) == 4)
    return ip[ipv4::kTos];
  if (type == eth::kTypeIpv6 && len >= l3 + ipv6::kHeaderLen && (ip[0] >> 4) == 6)
    return static_cast<uint8_t>((ip[0] << 4) | (ip[1] >> 4));
  return 0;
}

}  // namespace epic::wire
