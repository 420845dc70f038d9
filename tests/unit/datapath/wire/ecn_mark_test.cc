// mark_ce (ecn_mark.h): ECT(0) and ECT(1) become CE, with a header checksum that still sums
// to 0xFFFF (RFC 1071, plain arithmetic here) and an ICRC that still verifies; Not-ECT, CE,
// VLAN-tagged and IPv6 frames as RFC 3168 says; short and non-IP frames untouched. traffic_class
// reads the TOS byte / traffic class the builder wrote.
#include "datapath/wire/ecn_mark.h"

#include <gtest/gtest.h>

#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/opcode.h"
#include "datapath/wire/parser.h"
#include "test_frames.h"

namespace epic::wire {
namespace {

std::vector<uint8_t> roce(uint8_t ecn, bool vlan = false) {
  PacketBuilder b;
  b.eth({2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2});
  if (vlan) b.vlan(7);
  b.ipv4(0x0A000001, 0x0A000002).tos(0xB8).ecn(ecn);
  b.bth(op::kSendOnly, 0x12, 5).payload(std::vector<uint8_t>(64, 0x5A));
  return b.build();
}

TEST(MarkCe, EcnCapableIpv4BecomesCeWithAValidChecksumAndIcrc) {
  for (uint8_t ect : {uint8_t{1}, uint8_t{2}}) {
    for (bool vlan : {false, true}) {
      auto f = roce(ect, vlan);
      const size_t l3 = vlan ? 18 : 14;
      ASSERT_TRUE(testing::ipv4_header_sums_to_ones(f.data() + l3));
      EXPECT_TRUE(mark_ce(f.data(), f.size()));
      EXPECT_EQ(f[l3 + 1], 0xB8 | 3);  // DSCP kept
      EXPECT_TRUE(testing::ipv4_header_sums_to_ones(f.data() + l3));
      const ParseResult p = parse(f.data(), f.size());
      ASSERT_TRUE(p.ok());  // the ICRC masks the TOS
      EXPECT_EQ(p.view.ecn(), 3);
    }
  }
}

TEST(MarkCe, NotEctAndCeAreLeftAlone) {
  for (uint8_t ecn : {uint8_t{0}, uint8_t{3}}) {
    auto f = roce(ecn);
    const auto before = f;
    EXPECT_FALSE(mark_ce(f.data(), f.size()));
    EXPECT_EQ(f, before);
  }
}

std::vector<uint8_t> roce_v6(uint8_t traffic_class) {
  PacketBuilder b;
  b.eth({2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2});
  std::array<uint8_t, 16> a{}, c{};
  a[15] = 1;
  c[15] = 2;
  b.ipv6(a, c).tos(traffic_class);
  b.bth(op::kSendOnly, 0x12, 5).payload(std::vector<uint8_t>(8));
  return b.build();
}

TEST(MarkCe, Ipv6TrafficClassIsMarked) {
  auto f = roce_v6(0x02);
  EXPECT_TRUE(mark_ce(f.data(), f.size()));
  const ParseResult p = parse(f.data(), f.size());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.view.ecn(), 3);
}

TEST(MarkCe, ShortAndNonIpFramesAreUntouched) {
  auto f = roce(2);
  EXPECT_FALSE(mark_ce(f.data(), 20));
  f[12] = 0x08;
  f[13] = 0x06;  // ARP
  EXPECT_FALSE(mark_ce(f.data(), f.size()));
  EXPECT_FALSE(mark_ce(f.data(), 0));
}

TEST(TrafficClass, ReadsTheTosOfIpv4AndIpv6AndZeroOtherwise) {
  EXPECT_EQ(traffic_class(roce(2).data(), roce(2).size()), 0xB8 | 2);
  const auto tagged = roce(1, true);
  EXPECT_EQ(traffic_class(tagged.data(), tagged.size()), 0xB8 | 1);
  const auto v6 = roce_v6(0xA9);
  EXPECT_EQ(traffic_class(v6.data(), v6.size()), 0xA9);
  auto arp = roce(2);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(traffic_class(arp.data(), arp.size()), 0);
  EXPECT_EQ(traffic_class(arp.data(), 10), 0);
}

}  // namespace
}  // namespace epic::wire
