// Parking a waiting rank (park_rank, retransmission.h) through the whole engine: rank 0 of
// a two-rank AllReduce has sent its control message and data while rank 1 is late. Its
// retransmissions are answered with RNR NAK naming its oldest unacknowledged upload — for the
// oldest and for the newest upload it has sent, not for those between — and the RNR timer
// backs off, one code per round, from 0.64 ms (12) to 15.36 ms (21), and starts again once the
// rank progresses. (retransmission_test.cc has the module's own packet tables.)
#include <gtest/gtest.h>

#include <vector>

#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/parser.h"
#include "proto/vocab/aeth.h"
#include "tests/unit/datapath/engine/engine_test_util.h"

namespace epic::engine {
namespace {

namespace w = epic::wire;
namespace aeth = vocab::aeth;
using testing::control;
using testing::frame;

constexpr uint32_t kQp = 0x3000;  // rank 0's switch endpoint; rank 1's is kQp + 1
constexpr uint32_t kPsn = 100;    // two_rank_group's initial PSN

struct Ack {
  uint32_t psn;
  uint8_t syndrome;
  friend bool operator==(const Ack&, const Ack&) = default;
};

struct Park : ::testing::Test {
  Mode2Engine engine;
  SlotRegion slots{4, 256};
  const CollectiveDescriptor d{CollectiveType::kAllReduce, vocab::DType::kInt32,
                               vocab::ReduceOp::kSum, 0, 192};  // 3 data packets of 256 B
  void SetUp() override { engine.install_group(testing::two_rank_group(7, kQp), &slots); }
  // Feeds one upload of `rank` (0: the control message, j+1: data packet j); returns the
  // ACK/NAKs the switch sent to that rank.
  std::vector<Ack> upload(uint8_t rank, uint32_t k) {
    const auto f =
        k == 0
            ? frame(kQp + rank, w::op::kSendOnlyImm, kPsn, control(d), kControlImm, rank)
            : frame(kQp + rank, w::op::kSendOnly, kPsn + k, std::vector<uint8_t>(256, 1), 0, rank);
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), rank};
    TxBatch tx;
    engine.process(&rx, 1, tx);
    std::vector<Ack> acks;
    for (size_t i = 0; i < tx.size(); ++i) {
      const auto r = w::parse(tx.data(i), tx.frame(i).length);
      if (r.ok() && r.view.op->kind == w::OpKind::kAck && tx.frame(i).port == rank) {
        acks.push_back({r.view.psn(), r.view.aeth().syndrome});
      }
    }
    return acks;
  }
};

TEST_F(Park, FirstTransmissionIsNotAnswered) {
  for (uint32_t k = 0; k <= 3; ++k) EXPECT_TRUE(upload(0, k).empty()) << k;
  EXPECT_EQ(engine.counters().rnr_naks_sent, 0u);
}

TEST_F(Park, OldestAndNewestRetransmissionsAreParkedFromTheOldest) {
  for (uint32_t k = 0; k <= 3; ++k) upload(0, k);
  const std::vector<Ack> rnr12 = {{kPsn, aeth::rnr_nak(12)}};
  EXPECT_EQ(upload(0, 0), rnr12);     // the oldest: round 1
  EXPECT_TRUE(upload(0, 1).empty());  // between: nothing
  EXPECT_TRUE(upload(0, 2).empty());
  EXPECT_EQ(upload(0, 3), rnr12);  // the newest, same round, same timer
  EXPECT_EQ(upload(0, 3), rnr12);  // the oldest was lost: no new round
  const std::vector<Ack> rnr13 = {{kPsn, aeth::rnr_nak(13)}};
  EXPECT_EQ(upload(0, 0), rnr13);  // round 2
  EXPECT_EQ(engine.counters().rnr_naks_sent, 4u);
  EXPECT_EQ(engine.counters().upward_duplicate, 6u);
}

TEST_F(Park, TimerBacksOffToFifteenMillisecondsAndRestartsAfterProgress) {
  for (uint32_t k = 0; k <= 3; ++k) upload(0, k);
  std::vector<uint8_t> codes;
  for (int round = 0; round < 14; ++round) codes.push_back(upload(0, 0).at(0).syndrome & 0x1F);
  const std::vector<uint8_t> want = {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 21, 21, 21, 21};
  EXPECT_EQ(codes, want);
  EXPECT_EQ(aeth::kRnrTimerNs[21], 15'360'000u);
  // Rank 1 arrives: every slot completes, results go to both; rank 0 acknowledges them all,
  // which the switch reflects as the ACK of all its uploads.
  for (uint32_t k = 0; k <= 3; ++k) upload(1, k);
  const auto ack_frame = [&] {
    auto f = w::PacketBuilder()
                 .eth(testing::kSwitchMac, {2, 0xAA, 0, 0, 0, 0})
                 .ipv4(0x0A640000, testing::kSwitchIp)
                 .bth(w::op::kAck, kQp, kPsn + 3)
                 .aeth(aeth::kAckUnlimitedCredits, 0)
                 .build();
    return f;
  }();
  const RxFrame rx{ack_frame.data(), static_cast<uint16_t>(ack_frame.size()), 0};
  TxBatch tx;
  engine.process(&rx, 1, tx);
  // The next collective: its first retransmission is parked at 0.64 ms again.
  const auto f = frame(kQp, w::op::kSendOnlyImm, kPsn + 4, control(d), kControlImm, 0);
  for (int i = 0; i < 2; ++i) {
    const RxFrame c{f.data(), static_cast<uint16_t>(f.size()), 0};
    tx.clear();
    engine.process(&c, 1, tx);
  }
  ASSERT_EQ(tx.size(), 1u);
  const auto r = w::parse(tx.data(0), tx.frame(0).length);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.view.psn(), kPsn + 4);
  EXPECT_EQ(r.view.aeth().syndrome, aeth::rnr_nak(12));
}

}  // namespace
}  // namespace epic::engine
