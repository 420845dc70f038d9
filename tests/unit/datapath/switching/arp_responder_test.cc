#include "datapath/switching/arp_responder.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "proto/vocab/addr.h"

namespace epic::switching {
namespace {

// Hand-built frames: every byte written here, none by the code under test.
struct ArpFrame {
  std::array<uint8_t, 6> eth_dst{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  std::array<uint8_t, 6> eth_src{0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
  int vlan_tci = -1;  // -1: untagged
  uint16_t htype = 1, ptype = 0x0800;
  uint8_t hlen = 6, plen = 4;
  uint16_t oper = 1;
  std::array<uint8_t, 6> sha{0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
  std::array<uint8_t, 4> spa{10, 0, 0, 7};
  std::array<uint8_t, 6> tha{};
  std::array<uint8_t, 4> tpa{10, 0, 0, 1};
  size_t trailer = 18;  // requests are padded to 60 bytes on the wire

  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> f(eth_dst.begin(), eth_dst.end());
    f.insert(f.end(), eth_src.begin(), eth_src.end());
    if (vlan_tci >= 0) {
      f.insert(f.end(),
               {0x81, 0x00, static_cast<uint8_t>(vlan_tci >> 8), static_cast<uint8_t>(vlan_tci)});
    }
    f.insert(f.end(), {0x08, 0x06, static_cast<uint8_t>(htype >> 8), static_cast<uint8_t>(htype),
                       static_cast<uint8_t>(ptype >> 8), static_cast<uint8_t>(ptype), hlen, plen,
                       static_cast<uint8_t>(oper >> 8), static_cast<uint8_t>(oper)});
    f.insert(f.end(), sha.begin(), sha.end());
    f.insert(f.end(), spa.begin(), spa.end());
    f.insert(f.end(), tha.begin(), tha.end());
    f.insert(f.end(), tpa.begin(), tpa.end());
    f.insert(f.end(), trailer, 0);
    return f;
  }
};

const std::array<IncAddress, 2> self_addrs = {
    IncAddress{*vocab::parse_ipv4("10.0.0.1"), *vocab::parse_mac("02:00:00:00:00:01")},
    IncAddress{*vocab::parse_ipv4("10.0.1.1"), *vocab::parse_mac("02:00:00:00:01:01")},
};

std::vector<uint8_t> reply_to(const std::vector<uint8_t>& req, size_t cap = 128) {
  std::vector<uint8_t> out(cap, 0xEE);
  const size_t n =
      arp_reply(req.data(), req.size(), self_addrs.data(), self_addrs.size(), out.data(), cap);
  out.resize(n);
  return out;
}

const std::vector<uint8_t> expected_untagged = {
    0x02, 0x11, 0x22, 0x33, 0x44, 0x55,                    // dst: requester's sender MAC
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01,                    // src: our MAC
    0x08, 0x06,                                            // ARP
    0x00, 0x01, 0x08, 0x00, 6,    4,    0x00, 0x02,        // Ethernet/IPv4, reply
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 10,   0,    0, 1,  // sender: us
    0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 10,   0,    0, 7,  // target: requester
    0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // pad to 60

TEST(ArpResponder, RequestForOurAddressGetsAReplyFromItsMac) {
  EXPECT_EQ(reply_to(ArpFrame{}.bytes()), expected_untagged);
}

TEST(ArpResponder, ReplyUsesTheMacOfTheAddressAsked) {
  ArpFrame req;
  req.tpa = {10, 0, 1, 1};
  const auto rep = reply_to(req.bytes());
  ASSERT_EQ(rep.size(), 60u);
  EXPECT_EQ(std::vector<uint8_t>(rep.begin() + 6, rep.begin() + 12),
            (std::vector<uint8_t>{0x02, 0, 0, 0, 0x01, 0x01}));
  EXPECT_EQ(std::vector<uint8_t>(rep.begin() + 22, rep.begin() + 32),
            (std::vector<uint8_t>{0x02, 0, 0, 0, 0x01, 0x01, 10, 0, 1, 1}));
}

TEST(ArpResponder, TaggedRequestGetsAReplyWithTheSameTag) {
  ArpFrame req;
  req.vlan_tci = 0x6064;  // PCP 3, VID 100
  const std::vector<uint8_t> rep = reply_to(req.bytes());
  std::vector<uint8_t> want = expected_untagged;
  want.insert(want.begin() + 12, {0x81, 0x00, 0x60, 0x64});
  want.resize(60);  // still padded to 60, not 64
  EXPECT_EQ(rep, want);
}

TEST(ArpResponder, UnpaddedRequestIsAnswered) {
  ArpFrame req;
  req.trailer = 0;
  EXPECT_EQ(reply_to(req.bytes()), expected_untagged);
}

TEST(ArpResponder, RequestFromAnotherSenderMacThanEthernetSourceRepliesToSenderMac) {
  ArpFrame req;
  req.sha = {0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE};
  const auto rep = reply_to(req.bytes());
  ASSERT_EQ(rep.size(), 60u);
  EXPECT_EQ(std::vector<uint8_t>(rep.begin(), rep.begin() + 6),
            (std::vector<uint8_t>{0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE}));
  EXPECT_EQ(std::vector<uint8_t>(rep.begin() + 32, rep.begin() + 38),
            (std::vector<uint8_t>{0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE}));
}

TEST(ArpResponder, ProbeFromZeroAddressIsAnsweredToZero) {
  ArpFrame req;
  req.spa = {0, 0, 0, 0};
  const auto rep = reply_to(req.bytes());
  ASSERT_EQ(rep.size(), 60u);
  EXPECT_EQ(std::vector<uint8_t>(rep.begin() + 38, rep.begin() + 42),
            (std::vector<uint8_t>{0, 0, 0, 0}));
}

TEST(ArpResponder, ReplyCanBeBuiltInTheRequestBuffer) {
  ArpFrame req;
  req.vlan_tci = 0x0064;
  std::vector<uint8_t> buf = req.bytes();
  buf.resize(128);
  const std::vector<uint8_t> want = reply_to(req.bytes());
  const size_t n =
      arp_reply(buf.data(), 64, self_addrs.data(), self_addrs.size(), buf.data(), buf.size());
  buf.resize(n);
  EXPECT_EQ(buf, want);
}

struct NoReplyCase {
  const char* what;
  std::vector<uint8_t> frame;
};

std::vector<NoReplyCase> no_reply_cases() {
  std::vector<NoReplyCase> cases;
  auto add = [&](const char* what, auto edit) {
    ArpFrame f;
    edit(f);
    cases.push_back({what, f.bytes()});
  };
  add("other target", [](ArpFrame& f) { f.tpa = {10, 0, 0, 2}; });
  add("ARP reply", [](ArpFrame& f) { f.oper = 2; });
  add("RARP-style oper 3", [](ArpFrame& f) { f.oper = 3; });
  add("gratuitous (spa == tpa)", [](ArpFrame& f) { f.spa = f.tpa; });
  add("htype 6 (IEEE 802)", [](ArpFrame& f) { f.htype = 6; });
  add("ptype IPv6", [](ArpFrame& f) { f.ptype = 0x86DD; });
  add("hlen 8", [](ArpFrame& f) { f.hlen = 8; });
  add("plen 16", [](ArpFrame& f) { f.plen = 16; });
  add("multicast sender MAC", [](ArpFrame& f) { f.sha[0] = 0x01; });
  add("target 0.0.0.0", [](ArpFrame& f) { f.tpa = {0, 0, 0, 0}; });
  std::vector<uint8_t> truncated = ArpFrame{}.bytes();
  truncated.resize(14 + 27);
  cases.push_back({"ARP body one byte short", truncated});
  ArpFrame tagged;
  tagged.vlan_tci = 5;
  truncated = tagged.bytes();
  truncated.resize(18 + 27);
  cases.push_back({"tagged ARP body one byte short", truncated});
  std::vector<uint8_t> ipv4 = ArpFrame{}.bytes();
  ipv4[12] = 0x08;
  ipv4[13] = 0x00;
  cases.push_back({"IPv4 ethertype", ipv4});
  std::vector<uint8_t> qinq = ArpFrame{}.bytes();
  qinq.insert(qinq.begin() + 12, {0x88, 0xA8, 0x00, 0x05, 0x81, 0x00, 0x00, 0x06});
  cases.push_back({"QinQ", qinq});
  cases.push_back({"empty", {}});
  cases.push_back({"runt", {0xFF, 0xFF, 0xFF}});
  return cases;
}

TEST(ArpResponder, EverythingButARequestForUsGetsNoReply) {
  for (const NoReplyCase& c : no_reply_cases()) {
    EXPECT_EQ(reply_to(c.frame).size(), 0u) << c.what;
  }
}

TEST(ArpResponder, NoAddressesMeansNoReply) {
  const std::vector<uint8_t> req = ArpFrame{}.bytes();
  uint8_t out[64];
  EXPECT_EQ(arp_reply(req.data(), req.size(), nullptr, 0, out, sizeof out), 0u);
}

TEST(ArpResponder, OutputSmallerThanSixtyBytesGetsNoReplyAndIsUntouched) {
  const std::vector<uint8_t> rep = reply_to(ArpFrame{}.bytes(), 59);
  EXPECT_EQ(rep.size(), 0u);
  std::vector<uint8_t> out(59, 0xEE);
  const std::vector<uint8_t> req = ArpFrame{}.bytes();
  arp_reply(req.data(), req.size(), self_addrs.data(), self_addrs.size(), out.data(), out.size());
  EXPECT_EQ(out, std::vector<uint8_t>(59, 0xEE));
}

TEST(ArpResponder, IsArpLooksAtTheEtherTypeBehindAtMostOneTag) {
  auto arp = [](const ArpFrame& f) {
    const std::vector<uint8_t> b = f.bytes();
    return is_arp(b.data(), b.size());
  };
  ArpFrame f;
  EXPECT_TRUE(arp(f));
  f.oper = 2;
  EXPECT_TRUE(arp(f));  // replies are ARP too
  f.vlan_tci = 100;
  EXPECT_TRUE(arp(f));
  const uint8_t tag_only[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x00, 0x00, 0x64};
  EXPECT_FALSE(is_arp(tag_only, sizeof tag_only));
  const uint8_t eth_only[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x06};
  EXPECT_TRUE(is_arp(eth_only, sizeof eth_only));
  EXPECT_FALSE(is_arp(eth_only, 13));
  const uint8_t ipv4[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00};
  EXPECT_FALSE(is_arp(ipv4, sizeof ipv4));
}

}  // namespace
}  // namespace epic::switching
