#include "datapath/wire/roce_packet.h"

#include <algorithm>
#include <cstring>

#include "datapath/wire/checksum.h"
#include "datapath/wire/icrc.h"
#include "proto/vocab/psn.h"

namespace epic::wire {

size_t RocePacket::encoded_size() const {
  const size_t ip_len = ip_version == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen;
  return eth::kHeaderLen + (has_vlan ? eth::kVlanTagLen : 0) + ip_len + udp::kHeaderLen +
         bth::kHeaderLen + opcode_info(opcode).ext_len + payload.size() + effective_pad_count() +
         kIcrcLen;
}

RocePacket decode(const PacketView& v) {
  RocePacket p;
  std::memcpy(p.eth_dst.data(), v.eth_dst(), 6);
  std::memcpy(p.eth_src.data(), v.eth_src(), 6);
  p.has_vlan = v.has_vlan;
  p.vlan_tci = v.vlan_tci();

  p.ip_version = v.ip_version;
  const uint8_t* ip = v.l3();
  p.tos = v.tos();
  p.ttl = v.ttl();
  if (v.ip_version == IpVersion::kV4) {
    p.ipv4_src = v.ipv4_src();
    p.ipv4_dst = v.ipv4_dst();
    p.ipv4_id = load_be16(ip + ipv4::kId);
    p.ipv4_flags_frag = load_be16(ip + ipv4::kFlagsFrag);
  } else {
    std::memcpy(p.ipv6_src.data(), v.ipv6_src(), 16);
    std::memcpy(p.ipv6_dst.data(), v.ipv6_dst(), 16);
    p.ipv6_flow_label = load_be32(ip) & 0xFFFFF;
  }

  const uint8_t* uh = v.data + v.l4_off;
  p.udp_src_port = load_be16(uh + udp::kSrcPort);
  p.udp_dst_port = load_be16(uh + udp::kDstPort);
  p.udp_checksum = load_be16(uh + udp::kChecksum);

  const uint8_t* bh = v.bth();
  p.opcode = v.opcode();
  p.solicited = v.solicited();
  p.mig_req = v.mig_req();
  p.transport_version = v.transport_version();
  p.pkey = v.pkey();
  p.fecn = v.fecn();
  p.becn = v.becn();
  p.bth_reserved6 = bh[bth::kFecnBecn] & 0x3F;
  p.dest_qp = v.dest_qp();
  p.ack_req = v.ack_req();
  p.bth_reserved7 = bh[bth::kAckReq] & 0x7F;
  p.psn = v.psn();

  const OpcodeInfo& op = *v.op;
  if (op.has(kExtDeth)) p.deth = v.deth();
  if (op.has(kExtReth)) p.reth = v.reth();
  if (op.has(kExtAtomicEth)) p.atomic_eth = v.atomic_eth();
  if (op.has(kExtAeth)) p.aeth = v.aeth();
  if (op.has(kExtAtomicAckEth)) p.atomic_ack_orig = v.atomic_ack_orig();
  if (op.has(kExtImmDt)) p.immdt = v.immdt();
  if (op.has(kExtIeth)) p.ieth_rkey = v.ieth_rkey();
  if (op.has(kExtCnpPad)) std::memcpy(p.cnp_reserved.data(), v.ext(0), cnp::kLen);

  p.payload.assign(v.payload(), v.payload() + v.data_len());
  for (uint8_t i = 0; i < v.pad_count(); ++i) p.pad_bytes[i] = v.payload()[v.data_len() + i];
  // Keep the pad count explicit only when it is not the one encode() derives.
  if (v.pad_count() != p.effective_pad_count()) p.pad_count = v.pad_count();
  return p;
}

size_t encode(const RocePacket& p, uint8_t* out, size_t cap) {
  const size_t total = p.encoded_size();
  if (total > cap || total > 0xFFFF) return 0;
  std::memset(out, 0, total);
  const OpcodeInfo& op = opcode_info(p.opcode);
  const uint8_t pad = p.effective_pad_count();

  // Ethernet
  std::memcpy(out + eth::kDst, p.eth_dst.data(), 6);
  std::memcpy(out + eth::kSrc, p.eth_src.data(), 6);
  const uint16_t ip_type = p.ip_version == IpVersion::kV4 ? eth::kTypeIpv4 : eth::kTypeIpv6;
  size_t off = eth::kHeaderLen;
  if (p.has_vlan) {
    store_be16(out + eth::kType, eth::kTypeVlan);
    store_be16(out + off, p.vlan_tci);
    store_be16(out + off + 2, ip_type);
    off += eth::kVlanTagLen;
  } else {
    store_be16(out + eth::kType, ip_type);
  }

  // IP
  const size_t l3 = off;
  uint8_t* ip = out + l3;
  const size_t ip_len = p.ip_version == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen;
  const size_t udp_len = total - l3 - ip_len;
  if (p.ip_version == IpVersion::kV4) {
    ip[ipv4::kVerIhl] = 0x45;
    ip[ipv4::kTos] = p.tos;
    store_be16(ip + ipv4::kTotalLen,
               p.ip_length ? *p.ip_length : static_cast<uint16_t>(ip_len + udp_len));
    store_be16(ip + ipv4::kId, p.ipv4_id);
    store_be16(ip + ipv4::kFlagsFrag, p.ipv4_flags_frag);
    ip[ipv4::kTtl] = p.ttl;
    ip[ipv4::kProto] = ipv4::kProtoUdp;
    store_be32(ip + ipv4::kSrc, p.ipv4_src);
    store_be32(ip + ipv4::kDst, p.ipv4_dst);
    store_be16(ip + ipv4::kChecksum, p.ipv4_checksum ? *p.ipv4_checksum : ipv4_header_checksum(ip));
  } else {
    store_be32(ip, (6u << 28) | (uint32_t{p.tos} << 20) | (p.ipv6_flow_label & 0xFFFFF));
    store_be16(ip + ipv6::kPayloadLen, p.ip_length ? *p.ip_length : static_cast<uint16_t>(udp_len));
    ip[ipv6::kNextHeader] = ipv6::kNextHeaderUdp;
    ip[ipv6::kHopLimit] = p.ttl;
    std::memcpy(ip + ipv6::kSrc, p.ipv6_src.data(), 16);
    std::memcpy(ip + ipv6::kDst, p.ipv6_dst.data(), 16);
  }
  off += ip_len;

  // UDP
  uint8_t* uh = out + off;
  store_be16(uh + udp::kSrcPort, p.udp_src_port);
  store_be16(uh + udp::kDstPort, p.udp_dst_port);
  store_be16(uh + udp::kLength, p.udp_length ? *p.udp_length : static_cast<uint16_t>(udp_len));
  store_be16(uh + udp::kChecksum, p.udp_checksum);
  off += udp::kHeaderLen;

  // BTH
  uint8_t* bh = out + off;
  bh[bth::kOpcode] = p.opcode;
  bh[bth::kFlags] = static_cast<uint8_t>((p.solicited ? 0x80 : 0) | (p.mig_req ? 0x40 : 0) |
                                         ((pad & 0x3) << 4) | (p.transport_version & 0xF));
  store_be16(bh + bth::kPkey, p.pkey);
  bh[bth::kFecnBecn] =
      static_cast<uint8_t>((p.fecn ? 0x80 : 0) | (p.becn ? 0x40 : 0) | (p.bth_reserved6 & 0x3F));
  store_be24(bh + bth::kDestQp, p.dest_qp & vocab::kQpnMask);
  bh[bth::kAckReq] = static_cast<uint8_t>((p.ack_req ? 0x80 : 0) | (p.bth_reserved7 & 0x7F));
  store_be24(bh + bth::kPsn, p.psn & vocab::kPsnMask);
  off += bth::kHeaderLen;

  // Extension headers at the table's offsets.
  uint8_t* ext = out + off;
  if (op.has(kExtDeth)) {
    store_be32(ext + op.off_deth + deth::kQkey, p.deth.qkey);
    ext[op.off_deth + deth::kQkey + 4] = p.deth.reserved;
    store_be24(ext + op.off_deth + deth::kSrcQp, p.deth.src_qp & vocab::kQpnMask);
  }
  if (op.has(kExtReth)) {
    store_be64(ext + op.off_reth + reth::kVa, p.reth.va);
    store_be32(ext + op.off_reth + reth::kRkey, p.reth.rkey);
    store_be32(ext + op.off_reth + reth::kDmaLen, p.reth.dma_len);
  }
  if (op.has(kExtAtomicEth)) {
    uint8_t* a = ext + op.off_atomic_eth;
    store_be64(a + atomic_eth::kVa, p.atomic_eth.va);
    store_be32(a + atomic_eth::kRkey, p.atomic_eth.rkey);
    store_be64(a + atomic_eth::kSwapAdd, p.atomic_eth.swap_add);
    store_be64(a + atomic_eth::kCompare, p.atomic_eth.compare);
  }
  if (op.has(kExtAeth)) {
    ext[op.off_aeth + aeth::kSyndrome] = p.aeth.syndrome;
    store_be24(ext + op.off_aeth + aeth::kMsn, p.aeth.msn & vocab::kPsnMask);
  }
  if (op.has(kExtAtomicAckEth)) store_be64(ext + op.off_atomic_ack_eth, p.atomic_ack_orig);
  if (op.has(kExtImmDt)) store_be32(ext + op.off_immdt, p.immdt);
  if (op.has(kExtIeth)) store_be32(ext + op.off_ieth, p.ieth_rkey);
  if (op.has(kExtCnpPad)) std::memcpy(ext, p.cnp_reserved.data(), cnp::kLen);
  off += op.ext_len;

  // Payload, pad, ICRC.
  if (!p.payload.empty()) std::memcpy(out + off, p.payload.data(), p.payload.size());
  off += p.payload.size();
  for (uint8_t i = 0; i < pad && i < p.pad_bytes.size(); ++i) out[off + i] = p.pad_bytes[i];
  off += pad;
  const auto icrc_off = static_cast<uint16_t>(off);
  if (p.icrc) {
    store_le32(out + icrc_off, *p.icrc);
  } else {
    store_icrc(out, p.ip_version, static_cast<uint16_t>(l3), icrc_off);
  }
  return total;
}

std::vector<uint8_t> encode(const RocePacket& p) {
  std::vector<uint8_t> out(p.encoded_size());
  out.resize(encode(p, out.data(), out.size()));
  return out;
}

}  // namespace epic::wire
