#include "proto/vocab/limits.h"

#include <gtest/gtest.h>

#include "proto/vocab/aeth.h"

namespace epic::vocab {
namespace {

TEST(Limits, WindowIsAPowerOfTwoUpToTheLimit) {
  for (uint32_t w : {1u, 2u, 16u, 1024u, kMaxWindow}) EXPECT_TRUE(valid_window(w)) << w;
  for (uint32_t w : {0u, 3u, 24u, kMaxWindow * 2, kMaxWindow + 1})
    EXPECT_FALSE(valid_window(w)) << w;
  EXPECT_TRUE(valid_window(kDefaultWindow));
  EXPECT_TRUE(valid_window(kDefaultSwitchMaxWindow));
  EXPECT_LE(kDefaultWindow, kDefaultSwitchMaxWindow);
}

TEST(Limits, PathMtuIsAnIbMtu) {
  for (uint32_t p : {256u, 512u, 1024u, 2048u, 4096u}) EXPECT_TRUE(valid_pmtu(p)) << p;
  for (uint32_t p : {0u, 128u, 1000u, 1500u, 8192u, 9000u}) EXPECT_FALSE(valid_pmtu(p)) << p;
  EXPECT_TRUE(valid_pmtu(kDefaultPmtu));
  EXPECT_EQ(kPmtuChoices, "256, 512, 1024, 2048, 4096");
}

TEST(Aeth, SyndromeKinds) {
  EXPECT_EQ(aeth::kind(aeth::kAckUnlimitedCredits), aeth::Kind::kAck);
  EXPECT_EQ(aeth::kind(aeth::rnr_nak(12)), aeth::Kind::kRnrNak);
  EXPECT_EQ(aeth::rnr_nak(12), 0x2C);
  EXPECT_EQ(aeth::rnr_nak(0xFF), 0x3F);  // the timer code is 5 bits
  EXPECT_EQ(aeth::kind(aeth::kNakPsnSequenceError), aeth::Kind::kNak);
  EXPECT_EQ(aeth::kind(0x40), aeth::Kind::kReserved);
  EXPECT_EQ(aeth::kRnrTimerNs[12], 640'000u);  // IBA table 45
}

}  // namespace
}  // namespace epic::vocab
