// Bad input at a Mode-II switch: every malformed or misplaced packet is counted
// under its own reason and dropped, never touches another group's slots, and
// the counters add up.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "datapath/engine/mode2_engine.h"
#include "proto/vocab/limits.h"
#include "tests/unit/datapath/engine/engine_test_util.h"

namespace epic::engine {
namespace {

namespace w = epic::wire;

using testing::kSwitchIp;
using testing::kSwitchMac;

using testing::control;
using testing::frame;

GroupConfig group(uint32_t qp_base) { return testing::two_rank_group(qp_base, qp_base); }

TEST(Mode2BadInput, EachReasonCountedAndOtherGroupsUntouched) {
  Mode2Engine engine;
  SlotRegion slots_a(4, 256), slots_b(4, 256);
  engine.install_group(group(0x1000), &slots_a);
  engine.install_group(group(0x2000), &slots_b);
  // Group B has real state: rank 0's control message and first data packet.
  const CollectiveDescriptor d{CollectiveType::kAllReduce, vocab::DType::kInt32,
                               vocab::ReduceOp::kSum, 0, 64};
  TxBatch tx;
  auto feed = [&](const std::vector<uint8_t>& f) {
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), testing::ingress_port(f)};
    engine.process(&rx, 1, tx);
  };
  feed(frame(0x2000, w::op::kSendOnlyImm, 100, control(d), kControlImm));
  feed(frame(0x2000, w::op::kSendOnly, 101, std::vector<uint8_t>(256, 7)));
  const std::vector<Slot> b_meta = slots_b.meta;
  const std::vector<uint8_t> b_accum(slots_b.accum, slots_b.accum + slots_b.accum_bytes());
  const EngineCounters before = engine.counters();

  std::vector<uint8_t> garbage(60, 0xAB);
  feed(garbage);                                                          // drop_parse
  feed(frame(0x1777, w::op::kSendOnly, 100, std::vector<uint8_t>(8)));    // no route
  feed(frame(0x1000, w::op::kSendOnly, 101, std::vector<uint8_t>(256)));  // data before control
  feed(frame(0x1000, w::op::kSendOnly, 100 + 5000, std::vector<uint8_t>(256)));  // far outside
  feed(frame(0x1000, w::op::kSendOnlyImm, 100, std::vector<uint8_t>(16, 1),
             kControlImm));  // bad control
  // One int32 more than 2^22 packets' worth at the group's path MTU: refused, not announced.
  const uint32_t too_many = vocab::kMaxCollectivePackets * (group(0x1000).pmtu / 4) + 1;
  feed(frame(0x1000, w::op::kSendOnlyImm, 100,
             control({CollectiveType::kAllReduce, vocab::DType::kInt32, vocab::ReduceOp::kSum, 0,
                      too_many}),
             kControlImm));  // bad control: too large
  feed(frame(0x1000, w::op::kSendOnlyImm, 100,
             control({CollectiveType::kReduce, vocab::DType::kInt32, vocab::ReduceOp::kSum, 2, 64}),
             kControlImm));  // bad control: root 2 of a group of 2
  feed(frame(0x1000, w::op::kWriteOnly, 100, std::vector<uint8_t>(16)));   // unsupported opcode
  feed(frame(0x1000, w::op::kSendOnlyImm, 100, control(d), kControlImm));  // valid control
  feed(frame(0x1000, w::op::kSendOnly, 101, std::vector<uint8_t>(100)));   // wrong length
  feed(frame(
      0x1001, w::op::kSendOnlyImm, 100,
      control({CollectiveType::kAllReduce, vocab::DType::kFp32, vocab::ReduceOp::kSum, 0, 64}),
      kControlImm, 1));  // disagreeing control (from rank 1, on its edge)
  const EngineCounters& c = engine.counters();
  EXPECT_EQ(c.drop_parse - before.drop_parse, 1u);
  EXPECT_EQ(c.drop_no_route - before.drop_no_route, 1u);
  EXPECT_EQ(c.drop_data_before_control - before.drop_data_before_control, 2u);
  EXPECT_EQ(c.drop_bad_control - before.drop_bad_control, 4u);
  EXPECT_EQ(c.drop_unsupported - before.drop_unsupported, 1u);
  EXPECT_EQ(c.drop_inconsistent - before.drop_inconsistent, 1u);
  EXPECT_EQ(c.upward_accepted - before.upward_accepted, 1u);  // only the valid control message
  EXPECT_EQ(c.rx_accounted(), c.rx_frames);
  // Group B's slots are exactly as they were.
  ASSERT_EQ(slots_b.meta.size(), b_meta.size());
  for (size_t i = 0; i < b_meta.size(); ++i) {
    EXPECT_EQ(slots_b.meta[i].psn, b_meta[i].psn);
    EXPECT_EQ(slots_b.meta[i].bitmap, b_meta[i].bitmap);
    EXPECT_EQ(slots_b.meta[i].degree, b_meta[i].degree);
  }
  EXPECT_EQ(std::vector<uint8_t>(slots_b.accum, slots_b.accum + slots_b.accum_bytes()), b_accum);
}

// Issue 16: a frontier from the parent (or a switch child) beyond every PSN announced here can
// only be forged. It is dropped before it recycles a slot or acknowledges an upload.
TEST(Mode2BadInput, AFrontierBeyondEveryAnnouncedPsnIsDropped) {
  GroupConfig cfg = group(0x1000);
  ParentLink p;
  p.local = {kSwitchMac, kSwitchIp, 0x1002};
  p.remote = {{2, 0xBB, 0, 0, 0, 1}, 0x0A650001u, 0x4000};
  p.port = 2;
  cfg.parent = p;
  Mode2Engine engine;
  SlotRegion slots(4, 256);
  engine.install_group(cfg, &slots);
  TxBatch tx;
  auto frontier = [&](uint32_t psn) {
    auto b = w::PacketBuilder().eth(kSwitchMac, p.remote.mac).ipv4(p.remote.ipv4, kSwitchIp);
    b.bth(w::op::kAck, 0x1002, psn).aeth(0x1F, 0);
    const std::vector<uint8_t> f = b.build();
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), 2};
    tx.clear();
    engine.process(&rx, 1, tx);
  };
  // Rank 0 announces a 2-packet AllReduce (group PSNs 100..102) and sends its first packet.
  const CollectiveDescriptor d{CollectiveType::kAllReduce, vocab::DType::kInt32,
                               vocab::ReduceOp::kSum, 0, 128};
  for (const auto& f : {frame(0x1000, w::op::kSendOnlyImm, 100, control(d), kControlImm),
                        frame(0x1000, w::op::kSendFirst, 101, std::vector<uint8_t>(256, 1))}) {
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), testing::ingress_port(f)};
    tx.clear();
    engine.process(&rx, 1, tx);
  }
  const GroupState& g = *engine.groups().front();
  frontier(5000);  // nothing up to 5000 was announced here
  EXPECT_EQ(engine.counters().drop_frontier_ahead, 1u);
  EXPECT_EQ(tx.size(), 0u) << "a refused frontier must not acknowledge anything";
  EXPECT_EQ(g.global_frontier, 99u);
  frontier(103);  // one past the announced 100..102
  EXPECT_EQ(engine.counters().drop_frontier_ahead, 2u);
  frontier(100);  // the control message reached every rank: taken
  EXPECT_EQ(engine.counters().drop_frontier_ahead, 2u);
  EXPECT_EQ(engine.counters().frontier_from_parent, 1u);
  EXPECT_EQ(g.global_frontier, 100u);
  const EngineCounters& c = engine.counters();
  EXPECT_EQ(c.rx_accounted(), c.rx_frames);
}

TEST(Mode2BadInput, RejectsMalformedGroupConfiguration) {
  Mode2Engine engine;
  SlotRegion slots(4, 256);
  GroupConfig cfg = group(0x1000);
  cfg.window = 3;  // not a power of two
  EXPECT_THROW(engine.install_group(cfg, &slots), std::invalid_argument);
  cfg = group(0x1000);
  cfg.children[1].first_rank = 5;  // outside the group
  EXPECT_THROW(engine.install_group(cfg, &slots), std::invalid_argument);
  cfg = group(0x1000);
  SlotRegion wrong(8, 256);
  EXPECT_THROW(engine.install_group(cfg, &wrong), std::invalid_argument);
}

TEST(Mode2BadInput, RejectsDuplicateGroupsAndEndpointsAndRemovesGroups) {
  Mode2Engine engine;
  SlotRegion a(4, 256), b(4, 256), c(4, 256);
  engine.install_group(group(0x1000), &a);
  GroupConfig same_id = group(0x3000);
  same_id.group_id = 0x1000;
  EXPECT_THROW(engine.install_group(same_id, &b), std::invalid_argument);
  GroupConfig same_endpoint = group(0x1000);
  same_endpoint.group_id = 7;
  EXPECT_THROW(engine.install_group(same_endpoint, &b), std::invalid_argument);
  EXPECT_EQ(engine.groups().size(), 1u);
  EXPECT_FALSE(engine.remove_group(42));
  EXPECT_TRUE(engine.remove_group(0x1000));
  EXPECT_TRUE(engine.groups().empty());
  // Its endpoints are free again; frames to a removed endpoint are unrouted.
  engine.install_group(same_endpoint, &c);
  EXPECT_EQ(engine.groups().size(), 1u);
  TxBatch tx;
  const auto f = frame(0x5000, 0x04, 100, std::vector<uint8_t>(64));
  const RxFrame in{f.data(), static_cast<uint16_t>(f.size()), 0};
  engine.process(&in, 1, tx);
  EXPECT_EQ(engine.counters().drop_no_route, 1u);
}

}  // namespace
}  // namespace epic::engine
