// EdgeBinding (edge_binding.h): a frame routed to an edge by its destination (IPv4, QPN) is
// acted on only when it comes from the member installed on that edge — its port, source MAC,
// source IPv4 and a UDP source port in the switch's range. Each forgery is dropped before any
// state changes (the group's slots, its per-group counters, what the switch sends), counted
// under its reason and its ingress port; the member's own frames still go through.
#include "datapath/engine/edge_binding.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/parser.h"
#include "tests/unit/datapath/engine/engine_test_util.h"

namespace epic::engine {
namespace {

namespace w = epic::wire;

using testing::control;
using testing::kSwitchIp;
using testing::kSwitchMac;

const CollectiveDescriptor kAllReduce{CollectiveType::kAllReduce, vocab::DType::kInt32,
                                      vocab::ReduceOp::kSum, 0, 64};

// How a forger differs from rank `r` of two_rank_group (rank r: port r, MAC 02:aa:00:00:00:r,
// IPv4 10.100.0.r).
struct Sender {
  uint16_t port = 0;
  vocab::MacAddr mac{2, 0xAA, 0, 0, 0, 0};
  uint32_t ipv4 = 0x0A640000u;
  uint16_t udp_src = 0xC000;
  uint16_t pkey = vocab::kDefaultPkey;
};
Sender rank(uint8_t r) {
  return {r, {2, 0xAA, 0, 0, 0, r}, 0x0A640000u + r, static_cast<uint16_t>(0xC000 + r)};
}

std::vector<uint8_t> control_from(const Sender& s, uint32_t dest_qp) {
  auto b = w::PacketBuilder().eth(kSwitchMac, s.mac).ipv4(s.ipv4, kSwitchIp);
  b.udp_src_port(s.udp_src);
  b.pkey(s.pkey);
  b.bth(w::op::kSendOnlyImm, dest_qp, 100).immdt(kControlImm).payload(control(kAllReduce));
  return b.build();
}

TEST(EdgeBinding, EachFieldIsCheckedInOrder) {
  const GroupConfig cfg = testing::two_rank_group(1, 0x1000);
  const UdpPortRange any;
  auto verdict = [&](const Sender& s, int16_t child, const UdpPortRange& udp) {
    const std::vector<uint8_t> f = control_from(s, 0x1000u + static_cast<uint32_t>(child));
    const w::ParseResult r = w::parse(f.data(), f.size());
    EXPECT_TRUE(r.ok());
    return check_binding(cfg, child, r.view, s.port, udp);
  };
  EXPECT_EQ(verdict(rank(0), 0, any), Binding::kMatch);
  EXPECT_EQ(verdict(rank(1), 1, any), Binding::kMatch);
  // Rank 1's frame to rank 0's edge: every field is rank 1's, so the port is the first wrong one.
  EXPECT_EQ(verdict(rank(1), 0, any), Binding::kWrongPort);
  Sender s = rank(0);
  s.ipv4 = 0x0A640009u;
  EXPECT_EQ(verdict(s, 0, any), Binding::kWrongIpv4);
  s.mac[5] = 9;
  EXPECT_EQ(verdict(s, 0, any), Binding::kWrongMac);  // MAC before IPv4
  // The UDP source port: inside the range, then one below and one above it.
  const UdpPortRange rxe{0xC000, 0xFFFF};
  EXPECT_EQ(verdict(rank(0), 0, rxe), Binding::kMatch);
  s = rank(0);
  s.udp_src = 0xBFFF;
  EXPECT_EQ(verdict(s, 0, rxe), Binding::kWrongUdpPort);
  const UdpPortRange one{0xC000, 0xC000};
  s.udp_src = 0xC001;
  EXPECT_EQ(verdict(s, 0, one), Binding::kWrongUdpPort);
  EXPECT_EQ(verdict(s, 0, any), Binding::kMatch);
}

TEST(EdgeBinding, ForgeriesChangeNothingAndAreCountedByReasonAndPort) {
  for (const vocab::GroupMode mode : {vocab::GroupMode::kMode2, vocab::GroupMode::kMode3}) {
    SCOPED_TRACE(static_cast<int>(mode));
    Mode2Engine engine;
    engine.set_udp_source_ports({0xC000, 0xFFFF});
    SlotRegion slots(4, 256);
    GroupConfig cfg = testing::two_rank_group(1, 0x1000);
    cfg.mode = mode;
    if (mode == vocab::GroupMode::kMode3) cfg.hop_timeout_us = 100;
    engine.install_group(cfg, &slots);
    TxBatch tx;
    auto feed = [&](const std::vector<uint8_t>& f, uint16_t port) {
      const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), port};
      tx.clear();
      engine.process(&rx, 1, tx, 1'000'000);
      return tx.size();
    };
    const std::vector<Slot> meta = slots.meta;
    const GroupStats stats = engine.groups().front()->stats;

    // A third host on port 5 that knows rank 0's switch QPN announces a collective as rank 0.
    Sender third{5, {2, 0xBB, 0, 0, 0, 5}, 0x0A640005u, 0xC005};
    EXPECT_EQ(feed(control_from(third, 0x1000), third.port), 0u);
    EXPECT_EQ(engine.counters().drop_edge_port, 1u);
    // Spoofing rank 0's addresses from its own port 5.
    Sender spoof = rank(0);
    spoof.port = 5;
    EXPECT_EQ(feed(control_from(spoof, 0x1000), spoof.port), 0u);
    EXPECT_EQ(engine.counters().drop_edge_port, 2u);
    // On rank 0's port (a hub, a misconfigured bridge): wrong MAC, wrong IPv4, wrong UDP port.
    Sender on_port = third;
    on_port.port = 0;
    EXPECT_EQ(feed(control_from(on_port, 0x1000), 0), 0u);
    EXPECT_EQ(engine.counters().drop_edge_mac, 1u);
    on_port.mac = rank(0).mac;
    EXPECT_EQ(feed(control_from(on_port, 0x1000), 0), 0u);
    EXPECT_EQ(engine.counters().drop_edge_ipv4, 1u);
    on_port = rank(0);
    on_port.udp_src = 4791;
    EXPECT_EQ(feed(control_from(on_port, 0x1000), 0), 0u);
    EXPECT_EQ(engine.counters().drop_edge_udp_port, 1u);
    // Rank 1's real frame sent to rank 0's edge (a member forging another member's packet).
    EXPECT_EQ(feed(control_from(rank(1), 0x1000), 1), 0u);
    EXPECT_EQ(engine.counters().drop_edge_port, 3u);

    // Nothing changed: slots, the group's counters; each drop counted once, by port.
    EXPECT_EQ(std::memcmp(slots.meta.data(), meta.data(), meta.size() * sizeof(Slot)), 0);
    EXPECT_EQ(engine.groups().front()->stats.rx_frames, stats.rx_frames);
    EXPECT_EQ(engine.binding_drops()[5], 2u);
    EXPECT_EQ(engine.binding_drops()[0], 3u);
    EXPECT_EQ(engine.binding_drops()[1], 1u);
    EXPECT_EQ(engine.counters().rx_frames, 6u);
    EXPECT_EQ(engine.counters().rx_accounted(), 6u);

    // Rank 0 itself: taken (Mode-III ACKs it; Mode-II waits silently for rank 1).
    feed(control_from(rank(0), 0x1000), 0);
    EXPECT_EQ(engine.counters().rx_accounted(), 7u);
    EXPECT_EQ(engine.groups().front()->stats.rx_frames, stats.rx_frames + 1);
    const uint64_t taken = mode == vocab::GroupMode::kMode3 ? engine.counters().hop_taken
                                                            : engine.counters().upward_accepted;
    EXPECT_EQ(taken, 1u);
  }
}

// A group bound to a partition (GroupConfig::pkey, off by default): IBTA's P_Key match — the
// same partition number, one of the two keys a full member — and the switch's own frames carry
// the group's key.
TEST(EdgeBinding, AGroupBoundToAPartitionTakesOnlyMatchingPKeysAndSendsItsOwn) {
  GroupConfig cfg = testing::two_rank_group(1, 0x1000);
  auto verdict = [&](uint16_t pkey) {
    Sender s = rank(0);
    s.pkey = pkey;
    const std::vector<uint8_t> f = control_from(s, 0x1000);
    const w::ParseResult r = w::parse(f.data(), f.size());
    EXPECT_TRUE(r.ok());
    return check_binding(cfg, 0, r.view, s.port, UdpPortRange{});
  };
  EXPECT_EQ(verdict(0x1234), Binding::kMatch) << "no partition: not checked";
  cfg.pkey = 0x8012;
  EXPECT_EQ(verdict(0x8012), Binding::kMatch);
  EXPECT_EQ(verdict(0x0012), Binding::kMatch) << "a limited member of the same partition";
  EXPECT_EQ(verdict(0x8013), Binding::kWrongPkey);
  EXPECT_EQ(verdict(0xFFFF), Binding::kWrongPkey) << "the default partition is another one";
  EXPECT_EQ(verdict(0x0000), Binding::kWrongPkey);
  cfg.pkey = 0x0012;  // the group's ranks are limited members: so may not be the packet
  EXPECT_EQ(verdict(0x0012), Binding::kWrongPkey);
  EXPECT_EQ(verdict(0x8012), Binding::kMatch);

  Mode2Engine engine;
  SlotRegion slots(4, 256);
  cfg = testing::two_rank_group(1, 0x1000);
  cfg.mode = vocab::GroupMode::kMode3;  // it ACKs what it takes: a frame of its own to look at
  cfg.hop_timeout_us = 100;
  cfg.pkey = 0x8012;
  engine.install_group(cfg, &slots);
  TxBatch tx;
  auto feed = [&](uint16_t pkey) {
    Sender s = rank(0);
    s.pkey = pkey;
    const std::vector<uint8_t> f = control_from(s, 0x1000);
    const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), 0};
    tx.clear();
    engine.process(&rx, 1, tx, 1'000'000);
  };
  const std::vector<Slot> meta = slots.meta;
  feed(vocab::kDefaultPkey);
  EXPECT_EQ(tx.size(), 0u);
  EXPECT_EQ(engine.counters().drop_edge_pkey, 1u);
  EXPECT_EQ(engine.binding_drops()[0], 1u);
  EXPECT_EQ(std::memcmp(slots.meta.data(), meta.data(), meta.size() * sizeof(Slot)), 0);
  feed(0x8012);
  EXPECT_EQ(engine.counters().hop_taken, 1u);
  ASSERT_EQ(tx.size(), 1u);
  const w::ParseResult ack = w::parse(tx.data(0), tx.frame(0).length);
  ASSERT_TRUE(ack.ok()) << "the ICRC covers the P_Key: it must be computed after it is written";
  EXPECT_EQ(ack.view.opcode(), w::op::kAck);
  EXPECT_EQ(ack.view.pkey(), 0x8012);
}

TEST(EdgeBinding, AFrameFromAPortBeyondTheCountedOnesIsCountedOnTheLast) {
  Mode2Engine engine;
  SlotRegion slots(4, 256);
  engine.install_group(testing::two_rank_group(1, 0x1000), &slots);
  const std::vector<uint8_t> f = control_from(rank(0), 0x1000);
  const RxFrame rx{f.data(), static_cast<uint16_t>(f.size()), 400};
  TxBatch tx;
  engine.process(&rx, 1, tx);
  EXPECT_EQ(engine.counters().drop_edge_port, 1u);
  EXPECT_EQ(engine.binding_drops()[kMaxIngressPorts - 1], 1u);
}

}  // namespace
}  // namespace epic::engine
