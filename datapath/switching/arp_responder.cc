#include "datapath/switching/arp_responder.h"

#include <cstring>

#include "datapath/wire/bytes.h"
#include "datapath/wire/layout.h"

namespace epic::switching {
namespace {

// Offset of the ARP body, or 0 when the frame is not (long enough to be) ARP.
size_t arp_offset(const uint8_t* frame, size_t len) {
  if (len < wire::eth::kHeaderLen) return 0;
  size_t type_at = wire::eth::kType;
  uint16_t type = wire::load_be16(frame + type_at);
  if (type == wire::eth::kTypeVlan) {
    type_at += wire::eth::kVlanTagLen;
    if (len < type_at + 2) return 0;
    type = wire::load_be16(frame + type_at);
  }
  return type == wire::eth::kTypeArp ? type_at + 2 : 0;
}

}  // namespace

bool is_arp(const uint8_t* frame, size_t len) { return arp_offset(frame, len) != 0; }

size_t arp_reply(const uint8_t* frame, size_t len, const IncAddress* addrs, size_t naddrs,
                 uint8_t* out, size_t cap) {
  const size_t at = arp_offset(frame, len);
  if (at == 0 || len < at + arp::kLen || cap < arp::kMinFrameLen) return 0;
  const uint8_t* req = frame + at;
  if (wire::load_be16(req + arp::kHtype) != arp::kHtypeEthernet ||
      wire::load_be16(req + arp::kPtype) != wire::eth::kTypeIpv4 || req[arp::kHlen] != 6 ||
      req[arp::kPlen] != 4 || wire::load_be16(req + arp::kOper) != arp::kOperRequest) {
    return 0;
  }
  const uint32_t spa = wire::load_be32(req + arp::kSpa);
  const uint32_t tpa = wire::load_be32(req + arp::kTpa);
  if (spa == tpa || (req[arp::kSha] & 0x01)) return 0;  // gratuitous; group-bit sender

  const IncAddress* self = nullptr;
  for (size_t i = 0; i < naddrs; ++i) {
    if (addrs[i].ipv4 == tpa && tpa != 0) {
      self = &addrs[i];
      break;
    }
  }
  if (!self) return 0;

  // Everything the reply needs from the request is copied first: `out` may be `frame`.
  uint8_t sha[6];
  std::memcpy(sha, req + arp::kSha, 6);
  uint8_t type_and_tag[2 + wire::eth::kVlanTagLen];  // [TPID TCI] EtherType, as received
  const size_t type_len = at - wire::eth::kType;
  std::memcpy(type_and_tag, frame + wire::eth::kType, type_len);

  std::memset(out, 0, arp::kMinFrameLen);
  std::memcpy(out + wire::eth::kDst, sha, 6);
  std::memcpy(out + wire::eth::kSrc, self->mac.data(), 6);
  std::memcpy(out + wire::eth::kType, type_and_tag, type_len);
  uint8_t* rep = out + at;
  wire::store_be16(rep + arp::kHtype, arp::kHtypeEthernet);
  wire::store_be16(rep + arp::kPtype, wire::eth::kTypeIpv4);
  rep[arp::kHlen] = 6;
  rep[arp::kPlen] = 4;
  wire::store_be16(rep + arp::kOper, arp::kOperReply);
  std::memcpy(rep + arp::kSha, self->mac.data(), 6);
  wire::store_be32(rep + arp::kSpa, self->ipv4);
  std::memcpy(rep + arp::kTha, sha, 6);
  wire::store_be32(rep + arp::kTpa, spa);
  return arp::kMinFrameLen;
}

}  // namespace epic::switching
