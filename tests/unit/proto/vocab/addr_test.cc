#include "proto/vocab/addr.h"

#include <gtest/gtest.h>

namespace epic::vocab {
namespace {

TEST(Addr, RoundTrips) {
  EXPECT_EQ(format_mac(*parse_mac("02:AB:00:00:00:01")), "02:ab:00:00:00:01");
  EXPECT_EQ(*parse_ipv4("10.9.0.1"), 0x0A090001u);
  EXPECT_EQ(format_ipv4(0x0A090001u), "10.9.0.1");
  EXPECT_EQ(format_ipv6(*parse_ipv6("fd00:9::1")), "fd00:9::1");
}

TEST(Addr, RejectsMalformed) {
  EXPECT_FALSE(parse_mac("02:ab:00:00:00"));
  EXPECT_FALSE(parse_mac("02-ab-00-00-00-01"));
  EXPECT_FALSE(parse_mac("02:ab:00:00:00:0g"));
  EXPECT_FALSE(parse_ipv4("10.0.0.256"));
  EXPECT_FALSE(parse_ipv4("fd00::1"));
  EXPECT_FALSE(parse_ipv6("10.0.0.1"));
}

TEST(Addr, UnicastHostAddressesOnly) {
  EXPECT_TRUE(is_unicast_ipv4(*parse_ipv4("10.77.0.1")));
  EXPECT_TRUE(is_unicast_ipv4(*parse_ipv4("223.255.255.254")));
  for (const char* bad : {"0.0.0.0", "255.255.255.255", "127.0.0.1", "224.0.0.1", "239.1.2.3",
                          "240.0.0.1", "250.1.1.1"}) {
    EXPECT_FALSE(is_unicast_ipv4(*parse_ipv4(bad))) << bad;
  }
  EXPECT_TRUE(is_unicast_mac(*parse_mac("02:00:00:00:00:01")));
  EXPECT_FALSE(is_unicast_mac(*parse_mac("00:00:00:00:00:00")));
  EXPECT_FALSE(is_unicast_mac(*parse_mac("01:00:5e:00:00:01")));
}

TEST(Addr, QpnAndGidForms) {
  EXPECT_EQ(format_qpn(0x100), "0x000100");
  EXPECT_EQ(format_qpn(0xFFFFFF), "0xffffff");
  EXPECT_EQ(format_ipv6(ipv4_mapped_gid(0x0A4D0001)), "::ffff:10.77.0.1");
}

}  // namespace
}  // namespace epic::vocab
