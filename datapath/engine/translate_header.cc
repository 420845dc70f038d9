#include "datapath/engine/translate_header.h"

#include <cstring>

#include "datapath/wire/bytes.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/layout.h"
#include "datapath/wire/opcode.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

namespace w = epic::wire;

namespace {
constexpr w::IpVersion kIp = w::IpVersion::kV4;  // the frames built here: Ethernet / IPv4
constexpr uint16_t kL3 = w::eth::kHeaderLen;
constexpr size_t kHeaders =
    w::eth::kHeaderLen + w::ipv4::kHeaderLen + w::udp::kHeaderLen + w::bth::kHeaderLen;
}  // namespace

size_t frame_size(const FrameSpec& s) {
  const size_t pad = (4 - s.payload_len % 4) % 4;
  return kHeaders + w::opcode_info(s.opcode).ext_len + s.payload_len + pad + w::kIcrcLen;
}

size_t build_frame(uint8_t* out, size_t cap, const FrameSpec& s) {
  const w::OpcodeInfo& op = w::opcode_info(s.opcode);
  const size_t pad = (4 - s.payload_len % 4) % 4;
  const size_t total = frame_size(s);
  if (total > cap) return 0;

  std::memcpy(out + w::eth::kDst, s.dst->mac.data(), 6);
  std::memcpy(out + w::eth::kSrc, s.src->mac.data(), 6);
  w::store_be16(out + w::eth::kType, w::eth::kTypeIpv4);

  uint8_t* ip = out + kL3;
  constexpr uint8_t kTtl = 64;
  const auto ip_len = static_cast<uint16_t>(total - w::eth::kHeaderLen);
  ip[w::ipv4::kVerIhl] = 0x45;
  ip[w::ipv4::kTos] = s.tos;
  w::store_be16(ip + w::ipv4::kTotalLen, ip_len);
  w::store_be16(ip + w::ipv4::kId, 0);
  w::store_be16(ip + w::ipv4::kFlagsFrag, w::ipv4::kFlagDf);
  ip[w::ipv4::kTtl] = kTtl;
  ip[w::ipv4::kProto] = w::ipv4::kProtoUdp;
  w::store_be32(ip + w::ipv4::kSrc, s.src->ipv4);
  w::store_be32(ip + w::ipv4::kDst, s.dst->ipv4);
  // The header's checksum from the values just written (their 16-bit words), not read back.
  const uint32_t words = ((0x45u << 8) | s.tos) + ip_len + w::ipv4::kFlagDf +
                         ((uint32_t{kTtl} << 8) | w::ipv4::kProtoUdp) + (s.src->ipv4 >> 16) +
                         (s.src->ipv4 & 0xFFFF) + (s.dst->ipv4 >> 16) + (s.dst->ipv4 & 0xFFFF);
  w::store_be16(ip + w::ipv4::kChecksum, w::checksum_of_sum(words));

  uint8_t* udp = ip + w::ipv4::kHeaderLen;
  w::store_be16(udp + w::udp::kSrcPort, s.udp_src_port);
  w::store_be16(udp + w::udp::kDstPort, w::kRoceV2Port);
  w::store_be16(udp + w::udp::kLength,
                static_cast<uint16_t>(total - w::eth::kHeaderLen - w::ipv4::kHeaderLen));
  w::store_be16(udp + w::udp::kChecksum, 0);

  uint8_t* bth = udp + w::udp::kHeaderLen;
  bth[w::bth::kOpcode] = s.opcode;
  bth[w::bth::kFlags] = static_cast<uint8_t>(pad << 4);
  w::store_be16(bth + w::bth::kPkey, s.pkey);
  bth[w::bth::kFecnBecn] = 0;
  w::store_be24(bth + w::bth::kDestQp, s.dst->qpn & vocab::kQpnMask);
  bth[w::bth::kAckReq] = s.ack_req ? 0x80 : 0;
  w::store_be24(bth + w::bth::kPsn, s.psn & vocab::kPsnMask);

  uint8_t* ext = bth + w::bth::kHeaderLen;
  if (op.has(w::kExtAeth)) {
    ext[op.off_aeth] = s.aeth_syndrome;
    w::store_be24(ext + op.off_aeth + 1, s.aeth_msn & vocab::kPsnMask);
  }
  if (op.has(w::kExtImmDt)) w::store_be32(ext + op.off_immdt, s.immdt);
  uint8_t* payload = ext + op.ext_len;
  if (s.payload_len > 0) std::memcpy(payload, s.payload, s.payload_len);
  std::memset(payload + s.payload_len, 0, pad);
  const auto icrc_off = static_cast<uint16_t>(total - w::kIcrcLen);
  if (s.icrc_from != nullptr && s.icrc_from->matches(kIp, kL3, icrc_off)) {
    w::store_le32(out + icrc_off, s.icrc_from->icrc_of(out));
  } else {
    w::store_icrc(out, kIp, kL3, icrc_off);
  }
  return total;
}

w::IcrcDelta icrc_base_of(const uint8_t* frame, const FrameSpec& s) {
  return {frame, kIp, kL3, static_cast<uint16_t>(frame_size(s) - w::kIcrcLen)};
}

}  // namespace epic::engine
