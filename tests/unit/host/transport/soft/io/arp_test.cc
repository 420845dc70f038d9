// ARP frames and the endpoint's ARP agent: exact bytes of requests and
// replies, what is learned, what is ignored.
#include "host/transport/soft/io/arp.h"

#include <gtest/gtest.h>

#include <vector>

namespace epic::soft::io {
namespace {

constexpr vocab::MacAddr kOurMac = {0x02, 0x00, 0x0a, 0x09, 0x00, 0xc8};
constexpr uint32_t kOurIp = 0x0A0900C8;  // 10.9.0.200
constexpr vocab::MacAddr kPeerMac = {0x52, 0x54, 0x00, 0x11, 0x01, 0x00};
constexpr uint32_t kPeerIp = 0x0A090001;  // 10.9.0.1

ArpMessage request_from_peer(uint32_t target_ip) {
  ArpMessage m;
  m.op = ArpOp::kRequest;
  m.sender_mac = kPeerMac;
  m.sender_ip = kPeerIp;
  m.target_ip = target_ip;
  return m;
}

TEST(Arp, RequestFrameHasTheExactRfc826Bytes) {
  const ArpAgent agent(kOurMac, kOurIp);
  const ArpFrame f = agent.request(kPeerIp);
  const std::vector<uint8_t> want = {
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x0a, 0x09, 0x00, 0xc8,  // eth dst, src
      0x08, 0x06,                                                              // ARP
      0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,               // Ethernet/IPv4, request
      0x02, 0x00, 0x0a, 0x09, 0x00, 0xc8, 0x0a, 0x09, 0x00, 0xc8,   // sender
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x09, 0x00, 0x01};  // target
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.end()), want);
}

TEST(Arp, ParseRoundTripsBuild) {
  const ArpMessage m = request_from_peer(kOurIp);
  const ArpFrame f = build_arp(kBroadcastMac, m);
  auto back = parse_arp(f.data(), f.size());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, m);
}

TEST(Arp, ParseAcceptsMinimumSizePaddedFrames) {
  const ArpFrame f = build_arp(kBroadcastMac, request_from_peer(kOurIp));
  std::vector<uint8_t> padded(f.begin(), f.end());
  padded.resize(60, 0);
  EXPECT_TRUE(parse_arp(padded.data(), padded.size()).has_value());
}

TEST(Arp, ParseRejectsShortNonArpAndNonIpv4Frames) {
  ArpFrame f = build_arp(kBroadcastMac, request_from_peer(kOurIp));
  EXPECT_FALSE(parse_arp(f.data(), f.size() - 1).has_value());
  ArpFrame ipv4 = f;
  ipv4[12] = 0x08;
  ipv4[13] = 0x00;
  EXPECT_FALSE(parse_arp(ipv4.data(), ipv4.size()).has_value());
  ArpFrame not_ether = f;
  not_ether[15] = 6;  // hardware type 6 (IEEE 802)
  EXPECT_FALSE(parse_arp(not_ether.data(), not_ether.size()).has_value());
  ArpFrame bad_op = f;
  bad_op[21] = 3;  // RARP request
  EXPECT_FALSE(parse_arp(bad_op.data(), bad_op.size()).has_value());
}

TEST(ArpAgent, AnswersARequestForItsAddressWithAUnicastReply) {
  ArpAgent agent(kOurMac, kOurIp);
  auto reply = agent.handle(request_from_peer(kOurIp));
  ASSERT_TRUE(reply.has_value());
  auto m = parse_arp(reply->data(), reply->size());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->op, ArpOp::kReply);
  EXPECT_EQ(m->sender_mac, kOurMac);
  EXPECT_EQ(m->sender_ip, kOurIp);
  EXPECT_EQ(m->target_mac, kPeerMac);
  EXPECT_EQ(m->target_ip, kPeerIp);
  EXPECT_EQ(vocab::MacAddr(
                {(*reply)[0], (*reply)[1], (*reply)[2], (*reply)[3], (*reply)[4], (*reply)[5]}),
            kPeerMac);
  EXPECT_EQ(agent.requests_answered(), 1u);
  EXPECT_EQ(agent.lookup(kPeerIp), kPeerMac);  // learned from the request
}

TEST(ArpAgent, IgnoresRequestsForOtherAddressesAndLearnsNothingFromThem) {
  ArpAgent agent(kOurMac, kOurIp);
  EXPECT_FALSE(agent.handle(request_from_peer(0x0A090064)).has_value());  // the kernel's
  EXPECT_FALSE(agent.lookup(kPeerIp).has_value());
  EXPECT_EQ(agent.requests_answered(), 0u);
}

TEST(ArpAgent, LearnsFromARepliesToItsRequest) {
  ArpAgent agent(kOurMac, kOurIp);
  ArpMessage reply;
  reply.op = ArpOp::kReply;
  reply.sender_mac = kPeerMac;
  reply.sender_ip = kPeerIp;
  reply.target_mac = kOurMac;
  reply.target_ip = kOurIp;
  EXPECT_FALSE(agent.handle(reply).has_value());  // replies are not answered
  EXPECT_EQ(agent.lookup(kPeerIp), kPeerMac);
}

TEST(ArpAgent, IgnoresProbesAndItsOwnAddressAsSender) {
  ArpAgent agent(kOurMac, kOurIp);
  ArpMessage probe = request_from_peer(kOurIp);
  probe.sender_ip = 0;  // RFC 5227 probe: learn nothing, but the address is in use
  EXPECT_FALSE(agent.handle(probe).has_value());
  ArpMessage gratuitous = request_from_peer(kOurIp);
  gratuitous.sender_ip = kOurIp;
  EXPECT_FALSE(agent.handle(gratuitous).has_value());
  EXPECT_FALSE(agent.lookup(0).has_value());
}

}  // namespace
}  // namespace epic::soft::io
