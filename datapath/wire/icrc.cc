#include "datapath/wire/icrc.h"

#include <cstring>

#include "datapath/wire/crc32.h"

namespace epic::wire {

uint32_t compute_icrc(const uint8_t* frame, IpVersion ip, uint16_t l3_off, uint16_t icrc_off) {
  constexpr size_t kLrh = 8;
  const size_t ip_len = ip == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen;
  const size_t hdr_len = ip_len + udp::kHeaderLen + bth::kHeaderLen;
  uint8_t pseudo[kLrh + ipv6::kHeaderLen + udp::kHeaderLen + bth::kHeaderLen];

  std::memset(pseudo, 0xFF, kLrh);
  std::memcpy(pseudo + kLrh, frame + l3_off, hdr_len);
  uint8_t* iph = pseudo + kLrh;
  if (ip == IpVersion::kV4) {
    iph[ipv4::kTos] = 0xFF;
    iph[ipv4::kTtl] = 0xFF;
    iph[ipv4::kChecksum] = 0xFF;
    iph[ipv4::kChecksum + 1] = 0xFF;
  } else {
    iph[0] |= 0x0F;  // keep the version nibble, mask traffic class and flow label
    iph[1] = iph[2] = iph[3] = 0xFF;
    iph[ipv6::kHopLimit] = 0xFF;
  }
  uint8_t* udph = iph + ip_len;
  udph[udp::kChecksum] = udph[udp::kChecksum + 1] = 0xFF;
  udph[udp::kHeaderLen + bth::kFecnBecn] = 0xFF;

  const size_t covered = kLrh + hdr_len;
  uint32_t crc = crc32_update(0, pseudo, covered);
  const size_t rest_off = l3_off + hdr_len;
  return crc32_update(crc, frame + rest_off, icrc_off - rest_off);
}

}  // namespace epic::wire
