// Seeded loss injection: reproducible, independent streams, the rates asked for.
#include "host/transport/soft/io/loss_injector.h"

#include <gtest/gtest.h>

#include <vector>

namespace epic::soft::io {
namespace {

std::vector<bool> tx_decisions(LossInjector& l, int n) {
  std::vector<bool> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = l.drop_tx();
  return v;
}

TEST(LossInjector, OffByDefaultNeverDrops) {
  LossInjector l;
  EXPECT_FALSE(l.config().enabled());
  for (int i = 0; i < 10000; ++i) {
    ASSERT_FALSE(l.drop_tx());
    ASSERT_FALSE(l.drop_rx_ack());
    ASSERT_FALSE(l.drop_rx_request());
  }
}

TEST(LossInjector, RateOneAlwaysDrops) {
  LossInjector l({1.0, 1.0, 1.0, 7});
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(l.drop_tx());
    ASSERT_TRUE(l.drop_rx_ack());
    ASSERT_TRUE(l.drop_rx_request());
  }
}

TEST(LossInjector, SameSeedSameDecisionsOtherSeedOtherDecisions) {
  LossInjector a({0.3, 0.0, 0.0, 42}), b({0.3, 0.0, 0.0, 42}), c({0.3, 0.0, 0.0, 43});
  const auto da = tx_decisions(a, 1000);
  EXPECT_EQ(da, tx_decisions(b, 1000));
  EXPECT_NE(da, tx_decisions(c, 1000));
}

TEST(LossInjector, IncomingDecisionsDoNotPerturbTheOutgoingStream) {
  LossInjector quiet({0.3, 0.5, 0.5, 9}), busy({0.3, 0.5, 0.5, 9});
  std::vector<bool> with_rx;
  for (int i = 0; i < 1000; ++i) {
    (void)busy.drop_rx_ack();
    (void)busy.drop_rx_request();
    with_rx.push_back(busy.drop_tx());
  }
  EXPECT_EQ(tx_decisions(quiet, 1000), with_rx);
}

TEST(LossInjector, DropsTheRequestedFraction) {
  LossInjector l({0.05, 0.2, 0.0, 1});
  int tx = 0, ack = 0;
  constexpr int kN = 200000;
  for (int i = 0; i < kN; ++i) {
    tx += l.drop_tx();
    ack += l.drop_rx_ack();
  }
  EXPECT_NEAR(tx / double(kN), 0.05, 0.003);
  EXPECT_NEAR(ack / double(kN), 0.2, 0.005);
}

}  // namespace
}  // namespace epic::soft::io
