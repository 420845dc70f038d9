// ECN through aggregation, and CNPs (datapath/engine/congestion.h).
// ECN through aggregation (RFC 3168 codepoints): a result carries CE when any contribution did,
// Not-ECT when any contribution was not ECN-capable, ECT otherwise — so a rank's DCQCN sees the
// congestion on any path of the collective. The result frames' IPv4 header checksum is checked
// here with plain arithmetic (RFC 1071), not with our checksum code.
#include <gtest/gtest.h>

#include <vector>

#include "datapath/engine/aggregate_data.h"
#include "datapath/engine/congestion.h"
#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/parser.h"
#include "tests/unit/datapath/engine/engine_test_util.h"
#include "tests/unit/datapath/wire/test_frames.h"

namespace epic::engine {
namespace {

namespace w = epic::wire;

TEST(Ecn, CombineFollowsRfc3168) {
  EXPECT_EQ(combine_ecn(kEcnEct0, kEcnCe), kEcnCe);
  EXPECT_EQ(combine_ecn(kEcnNotEct, kEcnCe), kEcnCe);
  EXPECT_EQ(combine_ecn(kEcnEct0, kEcnNotEct), kEcnNotEct);
  EXPECT_EQ(combine_ecn(kEcnEct0, kEcnEct0), kEcnEct0);
  EXPECT_EQ(combine_ecn(kEcnEct1, kEcnEct1), kEcnEct1);
  EXPECT_EQ(combine_ecn(kEcnEct1, kEcnEct0), kEcnEct0);
}

TEST(Ecn, AnAllReduceResultCarriesTheCombinedCodepointOfItsContributions) {
  Mode2Engine engine;
  SlotRegion slots(4, 256);
  engine.install_group(testing::two_rank_group(1, 0x1000), &slots);
  const CollectiveDescriptor d{CollectiveType::kAllReduce, vocab::DType::kInt32,
                               vocab::ReduceOp::kSum, 0, 64};  // one 256-byte packet
  TxBatch tx;
  auto feed = [&](const std::vector<uint8_t>& f) {
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), testing::ingress_port(f)};
    engine.process(&rx, 1, tx);
  };
  // {rank 0's, rank 1's} ECN on the data packet of three collectives, and what the result
  // frames to both ranks must carry.
  struct Case {
    uint8_t e0, e1, want;
  };
  const Case cases[] = {{kEcnCe, kEcnEct0, kEcnCe},
                        {kEcnEct0, kEcnNotEct, kEcnNotEct},
                        {kEcnEct1, kEcnEct1, kEcnEct1}};
  uint32_t psn = 100;
  for (const Case& c : cases) {
    for (uint8_t r = 0; r < 2; ++r) {
      feed(testing::frame(0x1000 + r, w::op::kSendOnlyImm, psn, testing::control(d), kControlImm, r,
                          kEcnEct0));
    }
    tx.clear();
    feed(testing::frame(0x1000, w::op::kSendOnly, psn + 1, std::vector<uint8_t>(256, 1), 0, 0,
                        c.e0));
    feed(testing::frame(0x1001, w::op::kSendOnly, psn + 1, std::vector<uint8_t>(256, 2), 0, 1,
                        c.e1));
    size_t results = 0;
    for (size_t k = 0; k < tx.size(); ++k) {
      const w::ParseResult p = w::parse(tx.data(k), tx.frame(k).length);
      ASSERT_TRUE(p.ok());
      if (p.view.opcode() != w::op::kSendOnly) continue;  // ACKs of the uploads
      ++results;
      EXPECT_EQ(p.view.ecn(), c.want) << int{c.e0} << "+" << int{c.e1};
      EXPECT_TRUE(wire::testing::ipv4_header_sums_to_ones(tx.data(k) + 14));
    }
    EXPECT_EQ(results, 2u);
    psn += 2;
  }
  EXPECT_EQ(engine.counters().ecn_ce_in, 1u);
  EXPECT_EQ(engine.counters().ecn_ce_out, 2u);
}

// A group's traffic class (GroupContext::dscp) is the DSCP of every frame the switch sends for
// it: the control message's and the data's results (the data's ECN the combined one below it)
// and CNPs.
TEST(Ecn, EveryFrameOfAGroupCarriesItsTrafficClass) {
  Mode2Engine engine;
  SlotRegion slots(4, 256);
  GroupConfig g = testing::two_rank_group(1, 0x1000);
  g.dscp = 46;
  engine.install_group(g, &slots);
  const CollectiveDescriptor d{CollectiveType::kAllReduce, vocab::DType::kInt32,
                               vocab::ReduceOp::kSum, 0, 64};
  TxBatch tx;
  auto feed = [&](const std::vector<uint8_t>& f) {
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), testing::ingress_port(f)};
    engine.process(&rx, 1, tx, 1'000'000);
  };
  for (uint8_t r = 0; r < 2; ++r) {
    feed(testing::frame(0x1000 + r, w::op::kSendOnlyImm, 100, testing::control(d), kControlImm, r,
                        kEcnEct0));
  }
  feed(testing::frame(0x1000, w::op::kSendOnly, 101, std::vector<uint8_t>(256, 1), 0, 0, kEcnCe));
  feed(testing::frame(0x1001, w::op::kSendOnly, 101, std::vector<uint8_t>(256, 2), 0, 1, kEcnEct0));
  feed(testing::frame(0x1000, w::op::kCnp, 0, {}, 0, 0, kEcnNotEct));
  size_t results = 0, cnps = 0;
  ASSERT_GT(tx.size(), 0u);
  for (size_t k = 0; k < tx.size(); ++k) {
    const w::ParseResult p = w::parse(tx.data(k), tx.frame(k).length);
    ASSERT_TRUE(p.ok());  // the ICRC masks the TOS byte; the IPv4 checksum covers it
    const uint8_t tos = tx.data(k)[14 + 1];
    EXPECT_EQ(tos >> 2, 46) << "frame " << k << " opcode " << int{p.view.opcode()};
    EXPECT_TRUE(wire::testing::ipv4_header_sums_to_ones(tx.data(k) + 14));
    if (p.view.opcode() == w::op::kSendOnly) {
      ++results;
      EXPECT_EQ(p.view.ecn(), kEcnCe);  // one contribution was CE
    } else if (p.view.opcode() == w::op::kCnp) {
      ++cnps;
      EXPECT_EQ(p.view.ecn(), kEcnNotEct);
    }
  }
  EXPECT_EQ(results, 2u);
  EXPECT_EQ(cnps, 1u);
}

// A CNP from rank 0 (its NIC saw CE on a result) goes on to every other edge of the group, to
// the member's own QP, BECN set, paced to one per edge per kCnpIntervalNs; in Mode-III the
// switch consumes it.
TEST(Cnp, AModeTwoSwitchForwardsACnpToTheOtherEdgesPaced) {
  Mode2Engine engine;
  SlotRegion slots(4, 256);
  engine.install_group(testing::two_rank_group(1, 0x1000), &slots);
  TxBatch tx;
  auto cnp_at = [&](uint64_t now) {
    const auto f = testing::frame(0x1000, w::op::kCnp, 0, {}, 0, 0, kEcnNotEct);
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), 0};
    tx.clear();
    engine.process(&rx, 1, tx, now);
  };
  cnp_at(1'000'000);
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.frame(0).port, 1);
  const w::ParseResult p = w::parse(tx.data(0), tx.frame(0).length);
  ASSERT_TRUE(p.ok());  // ICRC included
  EXPECT_EQ(p.view.opcode(), w::op::kCnp);
  EXPECT_EQ(p.view.dest_qp(), 0x101u);  // rank 1's QP (two_rank_group)
  EXPECT_TRUE(p.view.becn());
  EXPECT_EQ(p.view.ecn(), kEcnNotEct);
  EXPECT_TRUE(wire::testing::ipv4_header_sums_to_ones(tx.data(0) + 14));
  cnp_at(1'000'000 + kCnpIntervalNs / 2);
  EXPECT_EQ(tx.size(), 0u);
  cnp_at(1'000'000 + kCnpIntervalNs);
  EXPECT_EQ(tx.size(), 1u);
  const EngineCounters& c = engine.counters();
  EXPECT_EQ(c.cnps, 3u);
  EXPECT_EQ(c.cnps_forwarded, 2u);
  EXPECT_EQ(c.cnps_rate_limited, 1u);
  EXPECT_EQ(c.rx_accounted(), c.rx_frames);
}

TEST(Cnp, AModeThreeSwitchConsumesIt) {
  Mode2Engine engine;
  GroupConfig cfg = testing::two_rank_group(1, 0x1000);
  cfg.mode = vocab::GroupMode::kMode3;
  SlotRegion slots(4, 256);
  engine.install_group(cfg, &slots);
  TxBatch tx;
  const auto f = testing::frame(0x1000, w::op::kCnp, 0, {}, 0, 0, kEcnNotEct);
  const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), 0};
  engine.process(&rx, 1, tx, 1000);
  EXPECT_EQ(tx.size(), 0u);
  EXPECT_EQ(engine.counters().cnps, 1u);
  EXPECT_EQ(engine.counters().rx_accounted(), engine.counters().rx_frames);
}

}  // namespace
}  // namespace epic::engine
