#include "datapath/switching/switch_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/opcode.h"

namespace epic::switching {
namespace {

namespace w = epic::wire;
using Bytes = std::vector<uint8_t>;

// The switch of every case: worker 0 of a daemon with four ports (port 2 takes jumbo frames)
// and two INC addresses. Group edges: (inc1, 0x100) is ours, (inc1, 0x200) belongs to worker 1,
// (inc2, 0x300) to worker 3; (inc1, 0x999) is no edge at all.
constexpr uint16_t kSelf = 0;
const IncAddress kInc1{0x0AC80001, {0x02, 0xEE, 0, 0, 0, 0x01}};  // 10.200.0.1
const IncAddress kInc2{0x0AC80002, {0x02, 0xEE, 0, 0, 0, 0x02}};  // 10.200.0.2
constexpr uint32_t kOurQp = 0x100, kWorker1Qp = 0x200, kWorker3Qp = 0x300, kNoEdgeQp = 0x999;

struct Host {
  vocab::MacAddr mac;
  uint32_t ipv4;
};
const Host kA{{0x02, 0, 0, 0, 0, 0x0A}, 0x0A00000A};  // 10.0.0.10, on port 0
const Host kB{{0x02, 0, 0, 0, 0, 0x0B}, 0x0A00000B};  // 10.0.0.11, on port 1
const Host kC{{0x02, 0, 0, 0, 0, 0x0C}, 0x0A00000C};  // 10.0.0.12, never seen
const vocab::MacAddr kBroadcast{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
const vocab::MacAddr kLldpMulticast{0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E};

PipelineConfig make_config(bool drop_bad_icrc) {
  PipelineConfig c;
  c.inc_addresses = {kInc1, kInc2};
  c.max_frame = {1518, 1518, 9018, 1518};
  c.drop_bad_icrc = drop_bad_icrc;
  c.owner[PipelineConfig::key(kInc1.ipv4, kOurQp)] = kSelf;
  c.owner[PipelineConfig::key(kInc1.ipv4, kWorker1Qp)] = 1;
  c.owner[PipelineConfig::key(kInc2.ipv4, kWorker3Qp)] = 3;
  return c;
}

// ---- frames, every header byte written here (RoCEv2 through the wire library's builder) ----

void put16(Bytes& f, uint16_t v) { f.insert(f.end(), {uint8_t(v >> 8), uint8_t(v)}); }
void put32(Bytes& f, uint32_t v) {
  f.insert(f.end(), {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)});
}

// Ethernet II header [802.1Q], then `body`, zero-padded to `min_len`.
Bytes ether(const vocab::MacAddr& dst, const vocab::MacAddr& src, uint16_t type, Bytes body = {},
            int vlan_tci = -1, size_t min_len = 60) {
  Bytes f(dst.begin(), dst.end());
  f.insert(f.end(), src.begin(), src.end());
  if (vlan_tci >= 0) {
    put16(f, 0x8100);
    put16(f, static_cast<uint16_t>(vlan_tci));
  }
  put16(f, type);
  f.insert(f.end(), body.begin(), body.end());
  if (f.size() < min_len) f.resize(min_len, 0);
  return f;
}

Bytes arp(const vocab::MacAddr& eth_dst, const Host& sender, uint32_t target_ip, uint16_t oper,
          const vocab::MacAddr& target_mac = {}, int vlan_tci = -1) {
  Bytes body;
  put16(body, 1);       // Ethernet
  put16(body, 0x0800);  // IPv4
  body.insert(body.end(), {6, 4});
  put16(body, oper);
  body.insert(body.end(), sender.mac.begin(), sender.mac.end());
  put32(body, sender.ipv4);
  body.insert(body.end(), target_mac.begin(), target_mac.end());
  put32(body, target_ip);
  return ether(eth_dst, sender.mac, 0x0806, body, vlan_tci);
}

// IPv4 header (no checksum: the pipeline does not verify it) + UDP header + `payload`.
Bytes ipv4_udp(const Host& src, uint32_t dst_ip, uint16_t dst_port, size_t payload, uint8_t ihl = 5,
               uint16_t flags_frag = 0x4000) {
  Bytes ip;
  const size_t ip_len = 4u * ihl + 8 + payload;
  ip.push_back(static_cast<uint8_t>(0x40 | ihl));
  ip.push_back(0);
  put16(ip, static_cast<uint16_t>(ip_len));
  put16(ip, 0);
  put16(ip, flags_frag);
  ip.insert(ip.end(), {64, 17, 0, 0});
  put32(ip, src.ipv4);
  put32(ip, dst_ip);
  ip.resize(4u * ihl, 0x01);  // options: NOPs
  put16(ip, 0xC000);
  put16(ip, dst_port);
  put16(ip, static_cast<uint16_t>(8 + payload));
  put16(ip, 0);
  ip.resize(ip_len, 0x5A);
  return ip;
}

Bytes ipv6_udp(uint16_t dst_port, size_t payload) {
  Bytes ip;
  put32(ip, 0x60000000);
  put16(ip, static_cast<uint16_t>(8 + payload));
  ip.insert(ip.end(), {17, 64});
  for (int i = 0; i < 32; ++i) ip.push_back(static_cast<uint8_t>(i < 16 ? 0xA0 + i : 0xB0 + i));
  put16(ip, 0xC000);
  put16(ip, dst_port);
  put16(ip, static_cast<uint16_t>(8 + payload));
  put16(ip, 0);
  ip.resize(ip.size() + payload, 0x5A);
  return ip;
}

w::PacketBuilder roce_builder(const vocab::MacAddr& eth_dst, const Host& src, uint32_t dst_ip,
                              uint32_t qpn) {
  w::PacketBuilder b;
  b.eth(eth_dst, src.mac).ipv4(src.ipv4, dst_ip).bth(w::op::kSendOnly, qpn, 7).payload_pattern(64);
  return b;
}
Bytes roce(const vocab::MacAddr& eth_dst, const Host& src, uint32_t dst_ip, uint32_t qpn) {
  return roce_builder(eth_dst, src, dst_ip, qpn).build();
}
Bytes roce_tagged(const vocab::MacAddr& eth_dst, const Host& src, uint32_t dst_ip, uint32_t qpn) {
  return roce_builder(eth_dst, src, dst_ip, qpn).vlan(0x0064).build();
}
Bytes roce_v6(const vocab::MacAddr& eth_dst, const Host& src) {
  w::PacketBuilder b;
  b.eth(eth_dst, src.mac)
      .ipv6({0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0A},
            {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B})
      .bth(w::op::kSendOnly, 0x11, 7)
      .payload_pattern(64);
  return b.build();
}
Bytes with_bad_icrc(Bytes f) {
  f.back() ^= 0x01;
  return f;
}
Bytes udp_length_mismatch(const Host& src, uint32_t dst_ip) {
  w::PacketBuilder b = roce_builder(kB.mac, src, dst_ip, 0x11);
  b.packet().udp_length = 60;  // the real UDP length is 8 + 12 + 64 + 4
  return b.build();
}
Bytes sized(Bytes f, size_t len) {
  f.resize(len, 0);
  return f;
}

// ---- expectations ----

// Counters as name -> value, zeros left out, so that a case lists only what it moves.
std::map<std::string, uint64_t> nonzero(const PipelineCounters& c) {
  std::map<std::string, uint64_t> m;
  auto add = [&](const std::string& name, uint64_t v) {
    if (v != 0) m[name] = v;
  };
  add("frames", c.frames);
  add("forwarded", c.forwarded);
  add("flooded", c.flooded);
  add("to_engine", c.to_engine);
  add("handed_off", c.handed_off);
  add("arp_replies", c.arp_replies);
  add("icmp_replies", c.icmp_replies);
  add("non_ip", c.non_ip);
  add("transit_roce", c.transit_roce);
  add("transit_bad_icrc", c.transit_bad_icrc);
  add("transit_malformed", c.transit_malformed);
  for (size_t r = 0; r < kDropReasonCount; ++r) {
    add("drop." + std::string(to_string(static_cast<DropReason>(r))), c.drops[r]);
  }
  return m;
}

const char* name(Verdict v) {
  switch (v) {
    case Verdict::kDrop:
      return "drop";
    case Verdict::kForward:
      return "forward";
    case Verdict::kFlood:
      return "flood";
    case Verdict::kEngine:
      return "engine";
    case Verdict::kHandoff:
      return "handoff";
    case Verdict::kReplied:
      return "replied";
  }
  return "?";
}

// The fields of a Decision that its verdict gives meaning to.
std::string describe(const Decision& d) {
  std::string s = name(d.verdict);
  // Appended piece by piece: GCC 12 -O3 warns falsely (-Wrestrict) on
  // `const char* + std::string` temporaries.
  if (d.verdict == Verdict::kForward) s.append(" port ").append(std::to_string(d.port));
  if (d.verdict == Verdict::kHandoff) s.append(" worker ").append(std::to_string(d.worker));
  if (d.verdict == Verdict::kDrop) s.append(" ").append(to_string(d.drop));
  return s;
}

Decision forward(uint16_t port) { return {Verdict::kForward, port, 0, DropReason::kRunt}; }
Decision flood() { return {Verdict::kFlood, 0, 0, DropReason::kRunt}; }
Decision engine() { return {Verdict::kEngine, 0, 0, DropReason::kRunt}; }
Decision handoff(uint16_t worker) { return {Verdict::kHandoff, 0, worker, DropReason::kRunt}; }
Decision replied() { return {Verdict::kReplied, 0, 0, DropReason::kRunt}; }
Decision dropped(DropReason r) { return {Verdict::kDrop, 0, 0, r}; }

struct Case {
  const char* name;
  Bytes frame;
  uint16_t in_port;
  Decision want;
  std::map<std::string, uint64_t> counters;  // besides frames = 1
  Bytes reply = {};                          // the ARP reply expected on in_port, if any
  bool drop_bad_icrc = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Every case runs on a fresh pipeline that has already learned A on port 0 and B on port 1
// (and a host on port 7, a port the configuration does not have).
constexpr uint64_t kNow = 1'000'000;
const vocab::MacAddr kGone{0x02, 0, 0, 0, 0, 0x77};

class SwitchPipelineClassifies : public ::testing::TestWithParam<Case> {};

TEST_P(SwitchPipelineClassifies, WithTheExpectedVerdictCountersAndReplies) {
  const Case& c = GetParam();
  const PipelineConfig config = make_config(c.drop_bad_icrc);
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&config);
  p.l2().learn(kA.mac, 0, kNow);
  p.l2().learn(kB.mac, 1, kNow);
  p.l2().learn(kGone, 7, kNow);
  engine::TxBatch replies;

  const Decision d =
      p.classify(c.frame.data(), static_cast<uint32_t>(c.frame.size()), c.in_port, kNow, replies);

  EXPECT_EQ(describe(d), describe(c.want));
  auto want = c.counters;
  want["frames"] = 1;
  EXPECT_EQ(nonzero(p.counters()), want);
  if (c.reply.empty()) {
    EXPECT_EQ(replies.size(), 0u);
  } else {
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies.frame(0).port, c.in_port);
    EXPECT_EQ(Bytes(replies.data(0), replies.data(0) + replies.frame(0).length), c.reply);
  }
}

const Case kCases[] = {
    // ---- drops before anything is learned or looked at ----
    {"RuntShorterThanEthernetHeader",
     Bytes(13, 0x02),
     0,
     dropped(DropReason::kRunt),
     {{"drop.runt", 1}}},
    {"RuntTruncatedVlanTag",
     sized(ether(kB.mac, kA.mac, 0x8100), 16),
     0,
     dropped(DropReason::kRunt),
     {{"drop.runt", 1}}},
    {"RuntTruncatedIpv4Header",
     sized(ether(kB.mac, kA.mac, 0x0800), 14 + 19),
     0,
     dropped(DropReason::kRunt),
     {{"drop.runt", 1}}},
    {"RuntTruncatedIpv6Header",
     sized(ether(kB.mac, kA.mac, 0x86DD), 14 + 39),
     0,
     dropped(DropReason::kRunt),
     {{"drop.runt", 1}}},
    {"OversizeForThePort",
     sized(ether(kB.mac, kA.mac, 0x0800), 1519),
     0,
     dropped(DropReason::kOversize),
     {{"drop.oversize", 1}}},
    {"JumboAcceptedOnAJumboPort",
     ether(kA.mac, kC.mac, 0x0800, ipv4_udp(kC, kA.ipv4, 9000, 8000)),
     2,
     forward(0),
     {{"forwarded", 1}}},
    {"LongestFrameThePortTakes",
     sized(ether(kB.mac, kA.mac, 0x88B5), 1518),
     0,
     forward(1),
     {{"forwarded", 1}, {"non_ip", 1}}},
    {"MulticastSourceMac",
     ether(kB.mac, {0x01, 0, 0x5E, 0, 0, 1}, 0x0800, ipv4_udp(kA, 1, 9, 8)),
     0,
     dropped(DropReason::kSourceMulticast),
     {{"drop.source_multicast", 1}}},
    {"BroadcastSourceMac",
     ether(kB.mac, kBroadcast, 0x0800, ipv4_udp(kA, 1, 9, 8)),
     0,
     dropped(DropReason::kSourceMulticast),
     {{"drop.source_multicast", 1}}},
    {"InputPortOutOfRange",
     ether(kB.mac, kA.mac, 0x0800, ipv4_udp(kA, kB.ipv4, 9, 8)),
     4,
     dropped(DropReason::kNoPort),
     {{"drop.no_port", 1}}},

    // ---- L2 switching ----
    {"KnownUnicastForwarded",
     ether(kB.mac, kA.mac, 0x0800, ipv4_udp(kA, kB.ipv4, 9, 8)),
     0,
     forward(1),
     {{"forwarded", 1}}},
    {"UnknownUnicastFlooded",
     ether(kC.mac, kA.mac, 0x0800, ipv4_udp(kA, kC.ipv4, 9, 8)),
     0,
     flood(),
     {{"flooded", 1}}},
    {"BroadcastFlooded",
     ether(kBroadcast, kA.mac, 0x0800, ipv4_udp(kA, 0xFFFFFFFF, 9, 8)),
     0,
     flood(),
     {{"flooded", 1}}},
    {"DestinationOnTheInputPortIsAHairpin",
     ether(kA.mac, kC.mac, 0x0800, ipv4_udp(kC, kA.ipv4, 9, 8)),
     0,
     dropped(DropReason::kHairpin),
     {{"drop.hairpin", 1}}},
    {"DestinationLearnedOnAPortThatNoLongerExists",
     ether(kGone, kA.mac, 0x0800, ipv4_udp(kA, 1, 9, 8)),
     0,
     dropped(DropReason::kNoPort),
     {{"drop.no_port", 1}}},
    {"TaggedUnicastForwarded",
     ether(kB.mac, kA.mac, 0x0800, ipv4_udp(kA, kB.ipv4, 9, 8), 0x0064),
     0,
     forward(1),
     {{"forwarded", 1}}},
    {"Ipv6UdpForwarded",
     ether(kB.mac, kA.mac, 0x86DD, ipv6_udp(53, 20)),
     0,
     forward(1),
     {{"forwarded", 1}}},
    {"LldpEthertypeForwardedAsNonIp",
     ether(kB.mac, kA.mac, 0x88CC, Bytes(30, 0x02)),
     0,
     forward(1),
     {{"forwarded", 1}, {"non_ip", 1}}},
    // 802.1D: a bridge never forwards the link-local group 01:80:C2:00:00:0X.
    {"LldpToItsLinkLocalGroupIsNotForwarded",
     ether(kLldpMulticast, kA.mac, 0x88CC, Bytes(30, 0x02)),
     0,
     dropped(DropReason::kLinkLocal),
     {{"drop.link_local", 1}, {"non_ip", 1}}},
    {"Ipv4WithOptionsToUdp4791IsNotRoceAndSwitched",
     ether(kB.mac, kA.mac, 0x0800, ipv4_udp(kA, kB.ipv4, 4791, 40, /*ihl=*/6)),
     0,
     forward(1),
     {{"forwarded", 1}}},
    // The switch has no IP stack: what is not ARP, RoCEv2 or an echo request stops here.
    {"NonRoceUdpToAnIncMacIsDroppedAsToSwitch",
     ether(kInc1.mac, kA.mac, 0x0800, ipv4_udp(kA, kInc1.ipv4, 53, 20)),
     0,
     dropped(DropReason::kToSwitch),
     {{"drop.to_switch", 1}}},
    {"NonIpToAnIncMacIsDroppedAsToSwitch",
     ether(kInc1.mac, kA.mac, 0x88B5, Bytes(46, 0x01)),
     0,
     dropped(DropReason::kToSwitch),
     {{"drop.to_switch", 1}, {"non_ip", 1}}},
    // A fragment after the first carries no UDP header: bytes that read like port 4791 are
    // data, and even a switch that drops bad RoCEv2 passes it.
    {"NonFirstIpv4FragmentIsNotRoce",
     ether(kB.mac, kA.mac, 0x0800, ipv4_udp(kA, kB.ipv4, 4791, 40, 5, /*offset 185*8=*/0x00B9)),
     0,
     forward(1),
     {{"forwarded", 1}},
     {},
     true},
    {"NonFirstIpv4FragmentToAnIncAddressIsNotRoce",
     ether(kInc1.mac, kA.mac, 0x0800, ipv4_udp(kA, kInc1.ipv4, 4791, 40, 5, 0x00B9)),
     0,
     dropped(DropReason::kToSwitch),
     {{"drop.to_switch", 1}}},

    // ---- ARP ----
    {"ArpRequestForAnIncAddressIsAnswered",
     arp(kBroadcast, kA, kInc1.ipv4, 1),
     0,
     replied(),
     {{"arp_replies", 1}},
     arp(kA.mac, {kInc1.mac, kInc1.ipv4}, kA.ipv4, 2, kA.mac)},
    {"ArpRequestForTheSecondIncAddressIsAnsweredWithItsMac",
     arp(kBroadcast, kB, kInc2.ipv4, 1),
     1,
     replied(),
     {{"arp_replies", 1}},
     arp(kB.mac, {kInc2.mac, kInc2.ipv4}, kB.ipv4, 2, kB.mac)},
    {"TaggedArpRequestIsAnsweredTagged",
     arp(kBroadcast, kA, kInc1.ipv4, 1, {}, 0x2064),
     0,
     replied(),
     {{"arp_replies", 1}},
     sized(arp(kA.mac, {kInc1.mac, kInc1.ipv4}, kA.ipv4, 2, kA.mac, 0x2064), 60)},
    {"ArpRequestForAHostIsFlooded",
     arp(kBroadcast, kA, kC.ipv4, 1),
     0,
     flood(),
     {{"flooded", 1}, {"non_ip", 1}}},
    {"ArpReplyFromAnIncAddressIsSwitched",
     arp(kB.mac, kA, kInc1.ipv4, 2, kB.mac),
     0,
     forward(1),
     {{"forwarded", 1}, {"non_ip", 1}}},

    // ---- frames "from the switch" that it did not send (issue 16) ----
    // A result or ACK toward a rank forged with the switch's INC address: dropped, not learned.
    {"RoceFromAnIncAddressIsDroppedAsSpoofed",
     roce(kB.mac, Host{kA.mac, kInc1.ipv4}, kB.ipv4, 0x11),
     0,
     dropped(DropReason::kSpoofedSwitch),
     {{"drop.spoofed_switch", 1}}},
    {"AnyFrameFromAnIncMacIsDroppedAsSpoofed",
     ether(kB.mac, kInc2.mac, 0x88B5, Bytes(46, 0x01)),
     0,
     dropped(DropReason::kSpoofedSwitch),
     {{"drop.spoofed_switch", 1}}},

    // ---- RoCEv2 to an INC address ----
    {"RoceToOurGroupGoesToTheEngine",
     roce(kInc1.mac, kA, kInc1.ipv4, kOurQp),
     0,
     engine(),
     {{"to_engine", 1}}},
    {"RoceToAnotherWorkersGroupIsHandedOff",
     roce(kInc1.mac, kA, kInc1.ipv4, kWorker1Qp),
     0,
     handoff(1),
     {{"handed_off", 1}}},
    {"TaggedRoceToTheSecondAddressIsHandedOff",
     roce_tagged(kInc2.mac, kA, kInc2.ipv4, kWorker3Qp),
     1,
     handoff(3),
     {{"handed_off", 1}}},
    {"RoceToAnUnknownQpGoesToTheEngineWhichCountsIt",
     roce(kInc1.mac, kA, kInc1.ipv4, kNoEdgeQp),
     0,
     engine(),
     {{"to_engine", 1}}},
    {"SameQpOnTheOtherIncAddressIsAnotherEdge",
     roce(kInc2.mac, kA, kInc2.ipv4, kWorker1Qp),
     0,
     engine(),
     {{"to_engine", 1}}},
    {"RoceToAnIncAddressWithABadIcrcIsLeftToTheEngine",
     with_bad_icrc(roce(kInc1.mac, kA, kInc1.ipv4, kWorker1Qp)),
     0,
     handoff(1),
     {{"handed_off", 1}},
     {},
     true},

    // ---- transit RoCEv2 ----
    {"TransitRoceForwardedAndCounted",
     roce(kB.mac, kA, kB.ipv4, 0x11),
     0,
     forward(1),
     {{"forwarded", 1}, {"transit_roce", 1}}},
    {"TransitRoceV6ForwardedAndCounted",
     roce_v6(kB.mac, kA),
     0,
     forward(1),
     {{"forwarded", 1}, {"transit_roce", 1}}},
    {"RoceV6IsTransitEvenToAnIncMac",
     roce_v6(kInc1.mac, kA),
     0,
     flood(),
     {{"flooded", 1}, {"transit_roce", 1}}},
    {"TransitBadIcrcPassedByDefault",
     with_bad_icrc(roce(kB.mac, kA, kB.ipv4, 0x11)),
     0,
     forward(1),
     {{"forwarded", 1}, {"transit_roce", 1}, {"transit_bad_icrc", 1}}},
    {"TransitBadIcrcDroppedWhenConfigured",
     with_bad_icrc(roce(kB.mac, kA, kB.ipv4, 0x11)),
     0,
     dropped(DropReason::kBadIcrc),
     {{"drop.bad_icrc", 1}, {"transit_roce", 1}, {"transit_bad_icrc", 1}},
     {},
     true},
    {"TransitMalformedPassedByDefault",
     udp_length_mismatch(kA, kB.ipv4),
     0,
     forward(1),
     {{"forwarded", 1}, {"transit_roce", 1}, {"transit_malformed", 1}}},
    {"TransitMalformedDroppedWhenConfigured",
     udp_length_mismatch(kA, kB.ipv4),
     0,
     dropped(DropReason::kBadIcrc),
     {{"drop.bad_icrc", 1}, {"transit_roce", 1}, {"transit_malformed", 1}},
     {},
     true},
    {"TransitTooShortForABthIsPlainUdp",
     ether(kB.mac, kA.mac, 0x0800, ipv4_udp(kA, kB.ipv4, 4791, 11), -1, /*min_len=*/0),
     0,
     forward(1),
     {{"forwarded", 1}},
     {},
     true},
};

INSTANTIATE_TEST_SUITE_P(Table, SwitchPipelineClassifies, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

// ---- sequences: what one frame teaches the next ----

struct Step {
  Bytes frame;
  uint16_t in_port;
  uint64_t now_ns;
};

std::vector<std::string> run(SwitchPipeline& p, std::initializer_list<Step> steps) {
  std::vector<std::string> out;
  engine::TxBatch replies;
  for (const Step& s : steps) {
    out.push_back(describe(p.classify(s.frame.data(), static_cast<uint32_t>(s.frame.size()),
                                      s.in_port, s.now_ns, replies)));
  }
  return out;
}

Bytes udp_frame(const Host& from, const Host& to) {
  return ether(to.mac, from.mac, 0x0800, ipv4_udp(from, to.ipv4, 9, 8));
}

TEST(SwitchPipeline, LearnsSourcesSoThatTheAnswerIsForwardedAndTheNextFrameToo) {
  const PipelineConfig config = make_config(false);
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&config);
  EXPECT_EQ(
      run(p, {{udp_frame(kA, kB), 0, 10}, {udp_frame(kB, kA), 1, 20}, {udp_frame(kA, kB), 0, 30}}),
      (std::vector<std::string>{"flood", "forward port 0", "forward port 1"}));
  EXPECT_EQ(p.l2().counters().learned, 2u);
  EXPECT_EQ(nonzero(p.counters()),
            (std::map<std::string, uint64_t>{{"frames", 3}, {"flooded", 1}, {"forwarded", 2}}));
}

TEST(SwitchPipeline, HostThatMovesIsFollowed) {
  const PipelineConfig config = make_config(false);
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&config);
  EXPECT_EQ(
      run(p, {{udp_frame(kB, kA), 1, 10},
              {udp_frame(kA, kB), 0, 20},
              {udp_frame(kB, kA), 3, 30},
              {udp_frame(kA, kB), 0, 40}}),
      (std::vector<std::string>{"flood", "forward port 1", "forward port 0", "forward port 3"}));
  EXPECT_EQ(p.l2().counters().moved, 1u);
}

TEST(SwitchPipeline, LearnedEntryAgesOutAndTheNextFrameIsFloodedAgain) {
  const PipelineConfig config = make_config(false);
  constexpr uint64_t kAging = 1'000'000;  // 1 ms
  SwitchPipeline p(kSelf, 64, kAging);
  p.set_config(&config);
  EXPECT_EQ(
      run(p, {{udp_frame(kB, kC), 1, 0},
              {udp_frame(kA, kB), 0, kAging},        // exactly aging_ns old: still known
              {udp_frame(kA, kB), 0, kAging + 1},    // older: aged
              {udp_frame(kB, kC), 1, kAging + 2},    // B speaks again: relearned
              {udp_frame(kA, kB), 0, kAging + 3}}),  // known again
      (std::vector<std::string>{"flood", "forward port 1", "flood", "flood", "forward port 1"}));
  EXPECT_EQ(p.l2().counters().aged_out, 1u);
  EXPECT_EQ(p.l2().counters().learned, 3u);  // B, A, B again
}

TEST(SwitchPipeline, RoceToAnIncAddressTeachesTheSendersPort) {
  const PipelineConfig config = make_config(false);
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&config);
  EXPECT_EQ(run(p, {{roce(kInc1.mac, kA, kInc1.ipv4, kOurQp), 2, 10}, {udp_frame(kB, kA), 1, 20}}),
            (std::vector<std::string>{"engine", "forward port 2"}));
}

TEST(SwitchPipeline, ArpRepliesAccumulateInTheBatchOnEachRequestsPort) {
  const PipelineConfig config = make_config(false);
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&config);
  engine::TxBatch replies;
  const Bytes to_inc1 = arp(kBroadcast, kA, kInc1.ipv4, 1);
  const Bytes to_host = arp(kBroadcast, kB, kC.ipv4, 1);
  const Bytes to_inc2 = arp(kBroadcast, kB, kInc2.ipv4, 1);
  p.classify(to_inc1.data(), static_cast<uint32_t>(to_inc1.size()), 0, 1, replies);
  p.classify(to_host.data(), static_cast<uint32_t>(to_host.size()), 1, 2, replies);
  p.classify(to_inc2.data(), static_cast<uint32_t>(to_inc2.size()), 3, 3, replies);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies.frame(0).port, 0);
  EXPECT_EQ(Bytes(replies.data(0), replies.data(0) + replies.frame(0).length),
            arp(kA.mac, {kInc1.mac, kInc1.ipv4}, kA.ipv4, 2, kA.mac));
  EXPECT_EQ(replies.frame(1).port, 3);
  EXPECT_EQ(Bytes(replies.data(1), replies.data(1) + replies.frame(1).length),
            arp(kB.mac, {kInc2.mac, kInc2.ipv4}, kB.ipv4, 2, kB.mac));
}

TEST(SwitchPipeline, NewConfigurationTakesEffectOnTheNextFrame) {
  PipelineConfig before = make_config(false);
  PipelineConfig after = make_config(true);
  after.owner[PipelineConfig::key(kInc1.ipv4, kOurQp)] = 2;
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&before);
  const Bytes to_group = roce(kInc1.mac, kA, kInc1.ipv4, kOurQp);
  const Bytes bad = with_bad_icrc(roce(kB.mac, kA, kB.ipv4, 0x11));
  EXPECT_EQ(run(p, {{to_group, 0, 1}, {bad, 0, 2}}), (std::vector<std::string>{"engine", "flood"}));
  p.set_config(&after);
  EXPECT_EQ(run(p, {{to_group, 0, 3}, {bad, 0, 4}}),
            (std::vector<std::string>{"handoff worker 2", "drop bad_icrc"}));
}

TEST(SwitchPipeline, EmptyConfigurationDropsEveryFrameAsNoPort) {
  const PipelineConfig empty;
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&empty);
  EXPECT_EQ(run(p, {{udp_frame(kA, kB), 0, 1}, {arp(kBroadcast, kA, kInc1.ipv4, 1), 0, 2}}),
            (std::vector<std::string>{"drop no_port", "drop no_port"}));
  EXPECT_EQ(p.l2().counters().learned, 0u);
}

TEST(SwitchPipeline, DropReasonsHaveStableNames) {
  const std::vector<std::string> names = {"runt",       "oversize",         "bad_icrc",
                                          "hairpin",    "source_multicast", "no_port",
                                          "link_local", "to_switch",        "spoofed_switch"};
  ASSERT_EQ(names.size(), kDropReasonCount);
  for (size_t r = 0; r < kDropReasonCount; ++r) {
    EXPECT_EQ(to_string(static_cast<DropReason>(r)), names[r]);
  }
}

// ICMP echo to an INC address: the reply swaps the addresses, keeps identifier, sequence and
// data, and carries valid IPv4 and ICMP checksums (Linux ping checks them end to end in
// integration.incd_faults). A request with a bad checksum, or to an INC MAC with another IP,
// is not answered.
Bytes echo_request(const vocab::MacAddr& dst_mac, uint32_t dst_ip, size_t data_len) {
  Bytes ip;
  const size_t ip_len = 20 + 8 + data_len;
  ip.insert(ip.end(), {0x45, 0});
  put16(ip, static_cast<uint16_t>(ip_len));
  put16(ip, 0x1234);
  put16(ip, 0x4000);
  ip.insert(ip.end(), {64, 1, 0, 0});
  put32(ip, kA.ipv4);
  put32(ip, dst_ip);
  const uint16_t ipsum = w::internet_checksum(ip.data(), 20);
  ip[10] = static_cast<uint8_t>(ipsum >> 8);
  ip[11] = static_cast<uint8_t>(ipsum);
  ip.insert(ip.end(), {8, 0, 0, 0, 0xAB, 0xCD, 0x00, 0x07});
  for (size_t i = 0; i < data_len; ++i) ip.push_back(static_cast<uint8_t>(i * 7));
  const uint16_t isum = w::internet_checksum(ip.data() + 20, 8 + data_len);
  ip[22] = static_cast<uint8_t>(isum >> 8);
  ip[23] = static_cast<uint8_t>(isum);
  return ether(dst_mac, kA.mac, 0x0800, ip, -1, 0);
}

TEST(SwitchPipeline, EchoRequestToAnIncAddressIsAnswered) {
  const PipelineConfig config = make_config(false);
  SwitchPipeline p(kSelf, 64, 0);
  p.set_config(&config);
  for (size_t data_len : {0, 1, 56, 1001}) {
    engine::TxBatch replies;
    const Bytes req = echo_request(kInc2.mac, kInc2.ipv4, data_len);
    const Decision d = p.classify(req.data(), static_cast<uint32_t>(req.size()), 3, kNow, replies);
    ASSERT_EQ(describe(d), "replied") << data_len;
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies.frame(0).port, 3);
    const Bytes rep(replies.data(0), replies.data(0) + replies.frame(0).length);
    ASSERT_EQ(rep.size(), req.size());
    EXPECT_TRUE(std::equal(rep.begin(), rep.begin() + 6, kA.mac.begin()));
    EXPECT_TRUE(std::equal(rep.begin() + 6, rep.begin() + 12, kInc2.mac.begin()));
    EXPECT_TRUE(std::equal(rep.begin() + 26, rep.begin() + 30, req.begin() + 30));  // src = old dst
    EXPECT_TRUE(std::equal(rep.begin() + 30, rep.begin() + 34, req.begin() + 26));
    EXPECT_EQ(w::internet_checksum(rep.data() + 14, 20), 0);
    EXPECT_EQ(rep[34], 0);  // echo reply
    EXPECT_EQ(w::internet_checksum(rep.data() + 34, rep.size() - 34), 0);
    EXPECT_TRUE(std::equal(rep.begin() + 38, rep.end(), req.begin() + 38));  // id, seq, data
  }
  EXPECT_EQ(p.counters().icmp_replies, 4u);

  engine::TxBatch replies;
  Bytes bad = echo_request(kInc1.mac, kInc1.ipv4, 8);
  bad.back() ^= 1;
  EXPECT_EQ(describe(p.classify(bad.data(), static_cast<uint32_t>(bad.size()), 0, kNow, replies)),
            "drop to_switch");
  const Bytes wrong_ip = echo_request(kInc1.mac, kInc2.ipv4, 8);
  EXPECT_EQ(describe(p.classify(wrong_ip.data(), static_cast<uint32_t>(wrong_ip.size()), 0, kNow,
                                replies)),
            "drop to_switch");
  p.l2().learn(kB.mac, 1, kNow);
  const Bytes to_host = echo_request(kB.mac, kB.ipv4, 8);
  EXPECT_EQ(
      describe(p.classify(to_host.data(), static_cast<uint32_t>(to_host.size()), 0, kNow, replies)),
      "forward port 1");
  EXPECT_EQ(replies.size(), 0u);
}

}  // namespace
}  // namespace epic::switching
