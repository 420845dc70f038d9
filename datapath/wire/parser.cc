#include "datapath/wire/parser.h"

#include "datapath/wire/checksum.h"
#include "datapath/wire/icrc.h"

namespace epic::wire {
namespace {

ParseResult fail(ParseError e) { return ParseResult{e, {}}; }

}  // namespace

ParseResult parse(const uint8_t* data, size_t len, const ParseOptions& options) {
  if (len > 0xFFFF) len = 0xFFFF;  // no Ethernet frame is larger; offsets are 16-bit
  PacketView v;
  v.data = data;

  // Ethernet and an optional 802.1Q tag.
  if (len < eth::kHeaderLen) return fail(ParseError::kTruncatedEthernet);
  size_t off = eth::kHeaderLen;
  uint16_t type = load_be16(data + eth::kType);
  if (type == eth::kTypeVlan) {
    if (len < off + eth::kVlanTagLen) return fail(ParseError::kTruncatedVlan);
    v.has_vlan = true;
    type = load_be16(data + off + 2);
    off += eth::kVlanTagLen;
  }
  v.l3_off = static_cast<uint16_t>(off);

  // IP. `ip_end` is where the datagram ends according to the IP header.
  size_t ip_end = 0;
  if (type == eth::kTypeIpv4) {
    if (len < off + ipv4::kHeaderLen) return fail(ParseError::kTruncatedIpv4);
    const uint8_t* ip = data + off;
    if ((ip[ipv4::kVerIhl] >> 4) != 4) return fail(ParseError::kBadIpVersion);
    if ((ip[ipv4::kVerIhl] & 0xF) != 5) return fail(ParseError::kIpv4Options);
    const uint16_t frag = load_be16(ip + ipv4::kFlagsFrag);
    if ((frag & (ipv4::kFlagMf | ipv4::kFragOffsetMask)) != 0) {
      return fail(ParseError::kIpv4Fragment);
    }
    const uint16_t total = load_be16(ip + ipv4::kTotalLen);
    if (total < ipv4::kHeaderLen + udp::kHeaderLen) return fail(ParseError::kIpv4BadTotalLength);
    if (off + total > len) return fail(ParseError::kIpv4TruncatedPayload);
    if (ip[ipv4::kProto] != ipv4::kProtoUdp) return fail(ParseError::kNotUdp);
    if (options.verify_ipv4_checksum &&
        ipv4_header_checksum(ip) != load_be16(ip + ipv4::kChecksum)) {
      return fail(ParseError::kIpv4BadChecksum);
    }
    v.ip_version = IpVersion::kV4;
    ip_end = off + total;
    off += ipv4::kHeaderLen;
  } else if (type == eth::kTypeIpv6) {
    if (len < off + ipv6::kHeaderLen) return fail(ParseError::kTruncatedIpv6);
    const uint8_t* ip = data + off;
    if ((ip[0] >> 4) != 6) return fail(ParseError::kBadIpVersion);
    // RoCEv2 puts UDP right after the fixed header; extension headers are not UDP.
    if (ip[ipv6::kNextHeader] != ipv6::kNextHeaderUdp) return fail(ParseError::kNotUdp);
    const uint16_t payload = load_be16(ip + ipv6::kPayloadLen);
    ip_end = off + ipv6::kHeaderLen + payload;
    if (ip_end > len) return fail(ParseError::kIpv6TruncatedPayload);
    v.ip_version = IpVersion::kV6;
    off += ipv6::kHeaderLen;
  } else {
    return fail(ParseError::kNotIp);
  }

  // UDP: its length must cover exactly the rest of the IP datagram.
  v.l4_off = static_cast<uint16_t>(off);
  if (ip_end < off + udp::kHeaderLen) return fail(ParseError::kUdpLengthMismatch);
  const uint8_t* uh = data + off;
  if (load_be16(uh + udp::kLength) != ip_end - off) return fail(ParseError::kUdpLengthMismatch);
  if (load_be16(uh + udp::kDstPort) != kRoceV2Port) return fail(ParseError::kNotRoceV2Port);
  off += udp::kHeaderLen;

  // BTH, extension headers, payload, ICRC — all within the IP datagram.
  if (ip_end < off + bth::kHeaderLen) return fail(ParseError::kTruncatedBth);
  v.bth_off = static_cast<uint16_t>(off);
  const uint8_t* bh = data + off;
  if ((bh[bth::kFlags] & 0xF) != 0) return fail(ParseError::kBadTransportVersion);
  const OpcodeInfo& op = opcode_info(bh[bth::kOpcode]);
  if (!op.known) return fail(ParseError::kUnknownOpcode);
  v.op = &op;
  off += bth::kHeaderLen;
  if (ip_end < off + op.ext_len) return fail(ParseError::kTruncatedExtHeaders);
  off += op.ext_len;
  if (ip_end < off + kIcrcLen) return fail(ParseError::kMissingIcrc);

  const size_t payload_len = ip_end - kIcrcLen - off;
  const uint8_t pad = (bh[bth::kFlags] >> 4) & 0x3;
  if (!op.has_payload && payload_len != 0) return fail(ParseError::kUnexpectedPayload);
  if (payload_len > options.max_payload) return fail(ParseError::kPayloadTooLarge);
  if (pad != 0) {
    if (!op.ends_message() || !op.has_payload) return fail(ParseError::kPadNotAllowed);
    if (pad > payload_len) return fail(ParseError::kPadExceedsPayload);
  }
  v.payload_off = static_cast<uint16_t>(off);
  v.payload_len = static_cast<uint16_t>(payload_len);
  v.icrc_off = static_cast<uint16_t>(ip_end - kIcrcLen);
  v.frame_len = static_cast<uint16_t>(ip_end);

  if (options.verify_icrc && !icrc_ok(v)) return fail(ParseError::kBadIcrc);
  return ParseResult{ParseError::kOk, v};
}

}  // namespace epic::wire
