#include "datapath/switching/icmp_responder.h"

#include <cstring>

#include "datapath/wire/bytes.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/layout.h"

namespace epic::switching {

namespace w = epic::wire;

namespace {
constexpr uint8_t kProtoIcmp = 1, kEchoRequest = 8, kEchoReply = 0;
constexpr size_t kIcmpHeaderLen = 8;
}  // namespace

size_t icmp_echo_reply(const uint8_t* frame, size_t len, const IncAddress* addrs, size_t naddrs,
                       uint8_t* out, size_t cap) {
  size_t l3 = w::eth::kHeaderLen;
  if (len < l3) return 0;
  uint16_t type = w::load_be16(frame + w::eth::kType);
  if (type == w::eth::kTypeVlan) {
    l3 += w::eth::kVlanTagLen;
    if (len < l3) return 0;
    type = w::load_be16(frame + l3 - 2);
  }
  if (type != w::eth::kTypeIpv4 || len < l3 + w::ipv4::kHeaderLen + kIcmpHeaderLen) return 0;
  const uint8_t* ip = frame + l3;
  if (ip[w::ipv4::kVerIhl] != 0x45 || ip[w::ipv4::kProto] != kProtoIcmp) return 0;
  if ((w::load_be16(ip + w::ipv4::kFlagsFrag) & (w::ipv4::kFlagMf | w::ipv4::kFragOffsetMask)) != 0)
    return 0;
  const size_t ip_len = w::load_be16(ip + w::ipv4::kTotalLen);
  if (ip_len < w::ipv4::kHeaderLen + kIcmpHeaderLen || l3 + ip_len > len) return 0;
  if (w::internet_checksum(ip, w::ipv4::kHeaderLen) != 0) return 0;
  const uint8_t* icmp = ip + w::ipv4::kHeaderLen;
  const size_t icmp_len = ip_len - w::ipv4::kHeaderLen;
  if (icmp[0] != kEchoRequest || icmp[1] != 0 || w::internet_checksum(icmp, icmp_len) != 0)
    return 0;
  const uint32_t dst = w::load_be32(ip + w::ipv4::kDst);
  const IncAddress* self = nullptr;
  for (size_t i = 0; i < naddrs; ++i) {
    if (addrs[i].ipv4 == dst && std::memcmp(frame + w::eth::kDst, addrs[i].mac.data(), 6) == 0)
      self = &addrs[i];
  }
  const size_t n = l3 + ip_len;
  if (self == nullptr || cap < n) return 0;
  std::memcpy(out, frame, n);
  std::memcpy(out + w::eth::kDst, frame + w::eth::kSrc, 6);
  std::memcpy(out + w::eth::kSrc, self->mac.data(), 6);
  uint8_t* rip = out + l3;
  std::memcpy(rip + w::ipv4::kSrc, ip + w::ipv4::kDst, 4);
  std::memcpy(rip + w::ipv4::kDst, ip + w::ipv4::kSrc, 4);
  rip[w::ipv4::kTtl] = 64;
  w::store_be16(rip + w::ipv4::kChecksum, 0);
  w::store_be16(rip + w::ipv4::kChecksum, w::internet_checksum(rip, w::ipv4::kHeaderLen));
  uint8_t* ricmp = rip + w::ipv4::kHeaderLen;
  ricmp[0] = kEchoReply;
  w::store_be16(ricmp + 2, 0);
  w::store_be16(ricmp + 2, w::internet_checksum(ricmp, icmp_len));
  return n;
}

}  // namespace epic::switching
