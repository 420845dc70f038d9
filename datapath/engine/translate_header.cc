#include "datapath/engine/translate_header.h"

#include <cstring>

#include "datapath/wire/bytes.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/crc32.h"
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
constexpr size_t kMaxHeaders = 128;  // kHeaders and the longest extension headers (28 B)
}  // namespace

size_t frame_size(const FrameSpec& s) {
  const size_t pad = (4 - s.payload_len % 4) % 4;
  return kHeaders + w::opcode_info(s.opcode).ext_len + s.payload_len + pad + w::kIcrcLen;
}

size_t build_frame(uint8_t* out, size_t cap, const FrameSpec& s,
                   std::optional<w::IcrcDelta>* icrc_base) {
  const w::OpcodeInfo& op = w::opcode_info(s.opcode);
  const size_t pad = (4 - s.payload_len % 4) % 4;
  const size_t total = frame_size(s);
  const size_t hlen = kHeaders + op.ext_len;
  // The headers are written here and copied out whole; the ICRC reads them here and the payload
  // at its source, never the frame just written: `out` is typically a fresh mbuf whose lines are
  // still on their way, and reading it back would wait for them.
  alignas(64) uint8_t h[kMaxHeaders];
  if (total > cap || hlen > sizeof h) return 0;

  std::memcpy(h + w::eth::kDst, s.dst->mac.data(), 6);
  std::memcpy(h + w::eth::kSrc, s.src->mac.data(), 6);
  w::store_be16(h + w::eth::kType, w::eth::kTypeIpv4);

  uint8_t* ip = h + kL3;
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
  bth[w::bth::kFecnBecn] = s.becn ? 0x40 : 0;
  w::store_be24(bth + w::bth::kDestQp, s.dst->qpn & vocab::kQpnMask);
  bth[w::bth::kAckReq] = s.ack_req ? 0x80 : 0;
  w::store_be24(bth + w::bth::kPsn, s.psn & vocab::kPsnMask);

  uint8_t* ext = bth + w::bth::kHeaderLen;
  std::memset(ext, 0, op.ext_len);
  if (op.has(w::kExtAeth)) {
    ext[op.off_aeth] = s.aeth_syndrome;
    w::store_be24(ext + op.off_aeth + 1, s.aeth_msn & vocab::kPsnMask);
  }
  if (op.has(w::kExtImmDt)) w::store_be32(ext + op.off_immdt, s.immdt);

  const auto icrc_off = static_cast<uint16_t>(total - w::kIcrcLen);
  static constexpr uint8_t kZeros[4] = {};
  uint32_t icrc = 0;
  if (s.icrc_from != nullptr && s.icrc_from->matches(kIp, kL3, icrc_off)) {
    icrc = s.icrc_from->icrc_of(h);
  } else {
    icrc = w::icrc_after_headers(h, kIp, kL3);
    icrc = w::crc32_update(icrc, ext, op.ext_len);
    if (s.payload_len > 0) icrc = w::crc32_update(icrc, s.payload, s.payload_len);
    icrc = w::crc32_update(icrc, kZeros, pad);
  }
  if (icrc_base != nullptr && !icrc_base->has_value())
    icrc_base->emplace(h, kIp, kL3, icrc_off, icrc);

  std::memcpy(out, h, hlen);
  uint8_t* payload = out + hlen;
  if (s.payload_len > 0) std::memcpy(payload, s.payload, s.payload_len);
  std::memcpy(payload + s.payload_len, kZeros, pad);
  w::store_le32(out + icrc_off, icrc);
  return total;
}

}  // namespace epic::engine
