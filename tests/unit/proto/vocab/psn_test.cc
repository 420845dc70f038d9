#include "proto/vocab/psn.h"

#include <gtest/gtest.h>

namespace epic::vocab {
namespace {

TEST(Psn, AddWrapsAt24Bits) {
  EXPECT_EQ(psn_add(0xFFFFFF, 1), 0u);
  EXPECT_EQ(psn_add(0xFFFFFE, 5), 3u);
  EXPECT_EQ(psn_add(2, -3), 0xFFFFFFu);
  EXPECT_EQ(psn_add(0, 1 << 24), 0u);
}

TEST(Psn, DiffIsSignedAcrossTheWrap) {
  EXPECT_EQ(psn_diff(0, 0xFFFFFF), 1);
  EXPECT_EQ(psn_diff(0xFFFFFF, 0), -1);
  EXPECT_EQ(psn_diff(5, 3), 2);
  EXPECT_EQ(psn_diff(3, 5), -2);
  EXPECT_EQ(psn_diff(0x7FFFFF, 0), 0x7FFFFF);
  EXPECT_EQ(psn_diff(0x800000, 0), -0x800000);
}

TEST(Psn, OrderingHoldsNearTheWrap) {
  EXPECT_TRUE(psn_lt(0xFFFFF0, 0x10));
  EXPECT_TRUE(psn_gt(0x10, 0xFFFFF0));
  EXPECT_TRUE(psn_le(7, 7));
  EXPECT_TRUE(psn_ge(7, 7));
  EXPECT_FALSE(psn_lt(7, 7));
}

TEST(Psn, WindowMembershipAcrossTheWrap) {
  EXPECT_TRUE(psn_in_window(0xFFFFFF, 0xFFFFFE, 4));
  EXPECT_TRUE(psn_in_window(1, 0xFFFFFE, 4));
  EXPECT_FALSE(psn_in_window(2, 0xFFFFFE, 4));
  EXPECT_FALSE(psn_in_window(0xFFFFFD, 0xFFFFFE, 4));
}

}  // namespace
}  // namespace epic::vocab
