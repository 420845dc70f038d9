#include "datapath/switching/switch_pipeline.h"

#include <cstring>

#include "datapath/switching/arp_responder.h"
#include "datapath/switching/icmp_responder.h"
#include "datapath/wire/bytes.h"
#include "datapath/wire/layout.h"
#include "datapath/wire/parser.h"

namespace epic::switching {

namespace w = epic::wire;

std::string_view to_string(DropReason r) {
  switch (r) {
    case DropReason::kRunt:
      return "runt";
    case DropReason::kOversize:
      return "oversize";
    case DropReason::kBadIcrc:
      return "bad_icrc";
    case DropReason::kHairpin:
      return "hairpin";
    case DropReason::kSourceMulticast:
      return "source_multicast";
    case DropReason::kNoPort:
      return "no_port";
    case DropReason::kLinkLocal:
      return "link_local";
    case DropReason::kToSwitch:
      return "to_switch";
    case DropReason::kSpoofedSwitch:
      return "spoofed_switch";
  }
  return "unknown";
}

SwitchPipeline::SwitchPipeline(uint16_t worker, size_t l2_capacity, uint64_t l2_aging_ns)
    : worker_(worker), l2_(l2_capacity, l2_aging_ns) {}

bool SwitchPipeline::is_inc_address(uint32_t ipv4) const {
  for (const IncAddress& a : config_->inc_addresses) {
    if (a.ipv4 == ipv4) return true;
  }
  return false;
}

bool SwitchPipeline::is_inc_mac(const uint8_t* mac) const {
  for (const IncAddress& a : config_->inc_addresses) {
    if (std::memcmp(a.mac.data(), mac, 6) == 0) return true;
  }
  return false;
}

static vocab::MacAddr mac_at(const uint8_t* p) {
  vocab::MacAddr m;
  for (size_t i = 0; i < m.size(); ++i) m[i] = p[i];
  return m;
}

Decision SwitchPipeline::classify(const uint8_t* frame, uint32_t len, uint16_t in_port,
                                  uint64_t now_ns, engine::TxBatch& replies) {
  ++counters_.frames;
  if (len < w::eth::kHeaderLen) return drop(DropReason::kRunt);
  if (in_port >= config_->max_frame.size()) return drop(DropReason::kNoPort);
  if (len > config_->max_frame[in_port]) return drop(DropReason::kOversize);
  if (frame[w::eth::kSrc] & 1) return drop(DropReason::kSourceMulticast);

  // Sizes first: a truncated frame teaches the L2 table nothing.
  size_t l3 = w::eth::kHeaderLen;
  uint16_t type = w::load_be16(frame + w::eth::kType);
  if (type == w::eth::kTypeVlan) {
    if (len < w::eth::kHeaderLen + w::eth::kVlanTagLen) return drop(DropReason::kRunt);
    type = w::load_be16(frame + w::eth::kType + w::eth::kVlanTagLen);
    l3 += w::eth::kVlanTagLen;
  }
  if ((type == w::eth::kTypeIpv4 && len < l3 + w::ipv4::kHeaderLen) ||
      (type == w::eth::kTypeIpv6 && len < l3 + w::ipv6::kHeaderLen))
    return drop(DropReason::kRunt);
  // Nobody but this switch sends from its INC addresses: such a frame is forged (a result or
  // ACK "from the switch" toward a rank), and learning its MAC would pull our own traffic away.
  if (is_inc_mac(frame + w::eth::kSrc) ||
      (type == w::eth::kTypeIpv4 && is_inc_address(w::load_be32(frame + l3 + w::ipv4::kSrc)))) {
    return drop(DropReason::kSpoofedSwitch);
  }
  l2_.learn(mac_at(frame + w::eth::kSrc), in_port, now_ns);

  if (type == w::eth::kTypeArp) {
    uint8_t* out = replies.reserve(128);
    const size_t n = arp_reply(frame, len, config_->inc_addresses.data(),
                               config_->inc_addresses.size(), out, 128);
    if (n > 0) {
      replies.commit(in_port, n);
      ++counters_.arp_replies;
      return {Verdict::kReplied, 0, 0, DropReason::kRunt};
    }
    replies.cancel();
    ++counters_.non_ip;
    return switch_l2(frame, in_port, now_ns);
  }
  if (type != w::eth::kTypeIpv4 && type != w::eth::kTypeIpv6) {
    ++counters_.non_ip;
    if (is_inc_mac(frame + w::eth::kDst)) return drop(DropReason::kToSwitch);
    return switch_l2(frame, in_port, now_ns);
  }
  // RoCEv2? (IPv4 without options and not a non-first fragment, or IPv6 without extension
  // headers; UDP 4791)
  size_t l4 = 0;
  uint8_t proto = 0;
  uint32_t dst4 = 0;
  if (type == w::eth::kTypeIpv4) {
    // A fragment other than the first has no UDP header: its first bytes are data.
    const uint16_t frag = w::load_be16(frame + l3 + w::ipv4::kFlagsFrag);
    if ((frame[l3] & 0x0F) == 5 && (frag & w::ipv4::kFragOffsetMask) == 0) {
      l4 = l3 + w::ipv4::kHeaderLen;
      proto = frame[l3 + w::ipv4::kProto];
      dst4 = w::load_be32(frame + l3 + w::ipv4::kDst);
    }
  } else {
    l4 = l3 + w::ipv6::kHeaderLen;
    proto = frame[l3 + w::ipv6::kNextHeader];
  }
  const bool roce = l4 != 0 && proto == w::ipv4::kProtoUdp &&
                    len >= l4 + w::udp::kHeaderLen + w::bth::kHeaderLen &&
                    w::load_be16(frame + l4 + w::udp::kDstPort) == w::kRoceV2Port;
  if (!roce) {
    if (!is_inc_mac(frame + w::eth::kDst)) return switch_l2(frame, in_port, now_ns);
    uint8_t* out = replies.reserve(len);
    const size_t n = icmp_echo_reply(frame, len, config_->inc_addresses.data(),
                                     config_->inc_addresses.size(), out, len);
    if (n == 0) {
      replies.cancel();
      return drop(DropReason::kToSwitch);
    }
    replies.commit(in_port, n);
    ++counters_.icmp_replies;
    return {Verdict::kReplied, 0, 0, DropReason::kRunt};
  }
  if (type == w::eth::kTypeIpv4 && is_inc_address(dst4)) {
    const uint32_t qpn = w::load_be24(frame + l4 + w::udp::kHeaderLen + w::bth::kDestQp);
    const auto it = config_->owner.find(PipelineConfig::key(dst4, qpn));
    if (it != config_->owner.end() && it->second != worker_) {
      ++counters_.handed_off;
      return {Verdict::kHandoff, 0, it->second, DropReason::kRunt};
    }
    ++counters_.to_engine;  // unknown (IP, QP) too: the engine counts drop_no_route
    return {Verdict::kEngine, 0, 0, DropReason::kRunt};
  }
  ++counters_.transit_roce;
  const w::ParseError e = w::parse(frame, len).error;
  if (e != w::ParseError::kOk) {
    ++(e == w::ParseError::kBadIcrc ? counters_.transit_bad_icrc : counters_.transit_malformed);
    if (config_->drop_bad_icrc) return drop(DropReason::kBadIcrc);
  }
  return switch_l2(frame, in_port, now_ns);
}

Decision SwitchPipeline::switch_l2(const uint8_t* frame, uint16_t in_port, uint64_t now_ns) {
  static constexpr uint8_t kLinkLocal[5] = {0x01, 0x80, 0xC2, 0x00, 0x00};
  if (std::memcmp(frame + w::eth::kDst, kLinkLocal, 5) == 0 && frame[w::eth::kDst + 5] < 0x10)
    return drop(DropReason::kLinkLocal);
  if (frame[w::eth::kDst] & 1) {  // broadcast / multicast
    ++counters_.flooded;
    return {Verdict::kFlood, 0, 0, DropReason::kRunt};
  }
  const auto port = l2_.lookup(mac_at(frame + w::eth::kDst), now_ns);
  if (!port) {
    ++counters_.flooded;
    return {Verdict::kFlood, 0, 0, DropReason::kRunt};
  }
  if (*port == in_port) return drop(DropReason::kHairpin);
  if (*port >= config_->max_frame.size()) return drop(DropReason::kNoPort);
  ++counters_.forwarded;
  return {Verdict::kForward, *port, 0, DropReason::kRunt};
}

}  // namespace epic::switching
