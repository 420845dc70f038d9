// ibv_rc_pingpong's out-of-band message and GID forms, byte for byte.
#include "tools/inc-rc-peer/pingpong_wire.h"

#include <gtest/gtest.h>

#include <string>

namespace epic::tools::rc_peer {
namespace {

TEST(PingpongWire, MessageIsTheExact52ByteCString) {
  PingpongDest d;
  d.lid = 0;
  d.qpn = 0x000123;
  d.psn = 0xabcdef;
  d.gid = gid_from_ipv4(0x0A0900C8);
  const auto msg = format_pingpong_dest(d);
  ASSERT_EQ(msg.size(), 52u);
  EXPECT_EQ(std::string(msg.data()), "0000:000123:abcdef:00000000000000000000ffff0a0900c8");
  EXPECT_EQ(msg[51], '\0');
}

TEST(PingpongWire, ParsesWhatRcPingpongSends) {
  // as printed by ibv_rc_pingpong in a lab guest (rxe0, GID index 1)
  const std::string m = "0000:000011:dd9408:00000000000000000000ffff0a090001";
  auto d = parse_pingpong_dest(m.c_str(), m.size() + 1);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->lid, 0);
  EXPECT_EQ(d->qpn, 0x11u);
  EXPECT_EQ(d->psn, 0xdd9408u);
  EXPECT_EQ(ipv4_from_gid(d->gid), 0x0A090001u);
  EXPECT_EQ(format_gid(d->gid), "::ffff:10.9.0.1");
}

TEST(PingpongWire, RoundTrips) {
  PingpongDest d;
  d.lid = 0x1234;
  d.qpn = 0xFFFFFF;
  d.psn = 0;
  for (int i = 0; i < 16; ++i) d.gid[i] = static_cast<uint8_t>(0xF0 + i);
  const auto msg = format_pingpong_dest(d);
  EXPECT_EQ(parse_pingpong_dest(msg.data(), msg.size()), d);
}

TEST(PingpongWire, RejectsMalformedMessages) {
  const std::string good = "0000:000011:dd9408:00000000000000000000ffff0a090001";
  EXPECT_FALSE(parse_pingpong_dest(good.c_str(), good.size() - 1).has_value());  // short
  for (size_t pos : {4u, 11u, 18u}) {
    std::string bad = good;
    bad[pos] = '-';
    EXPECT_FALSE(parse_pingpong_dest(bad.c_str(), bad.size() + 1).has_value()) << pos;
  }
  std::string not_hex = good;
  not_hex[30] = 'g';
  EXPECT_FALSE(parse_pingpong_dest(not_hex.c_str(), not_hex.size() + 1).has_value());
  const std::string trailing = good + "x";
  EXPECT_FALSE(parse_pingpong_dest(trailing.c_str(), trailing.size() + 1).has_value());
}

TEST(PingpongWire, OnlyIpv4MappedGidsGiveAnAddress) {
  EXPECT_EQ(ipv4_from_gid(gid_from_ipv4(0xC0A80001)), 0xC0A80001u);
  auto link_local = gid_from_wire("fe800000000000005054001101010000");
  ASSERT_TRUE(link_local.has_value());
  EXPECT_FALSE(ipv4_from_gid(*link_local).has_value());
  EXPECT_EQ(gid_to_wire(*link_local), "fe800000000000005054001101010000");
  EXPECT_FALSE(gid_from_wire("fe80").has_value());
}

}  // namespace
}  // namespace epic::tools::rc_peer
