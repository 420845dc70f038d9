#include "datapath/wire/addr.h"

#include <gtest/gtest.h>

namespace epic::wire {
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

}  // namespace
}  // namespace epic::wire
