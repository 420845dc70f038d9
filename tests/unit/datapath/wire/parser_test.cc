#include "datapath/wire/parser.h"

#include <gtest/gtest.h>

#include "test_frames.h"

namespace epic::wire {
namespace {

using testing::base_send;

TEST(Parser, SendOnlyFieldsAndOffsets) {
  const auto f = base_send(10).tos(0x03).ttl(17).build();
  const auto r = parse(f.data(), f.size());
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  const PacketView& v = r.view;
  EXPECT_EQ(v.l3_off, 14);
  EXPECT_EQ(v.l4_off, 34);
  EXPECT_EQ(v.bth_off, 42);
  EXPECT_EQ(v.payload_off, 54);
  EXPECT_EQ(v.payload_len, 12);  // 10 data bytes + 2 pad
  EXPECT_EQ(v.data_len(), 10);
  EXPECT_EQ(v.pad_count(), 2);
  EXPECT_EQ(v.icrc_off, 66);
  EXPECT_EQ(v.frame_len, f.size());
  EXPECT_EQ(v.opcode(), op::kSendOnly);
  EXPECT_EQ(v.dest_qp(), 0x11u);
  EXPECT_EQ(v.psn(), 7u);
  EXPECT_TRUE(v.ack_req());
  EXPECT_EQ(v.ecn(), 3);
  EXPECT_EQ(v.ttl(), 17);
  EXPECT_EQ(v.ipv4_src(), 0x0A000001u);
  EXPECT_EQ(v.udp_src_port(), 0xC001);
}

TEST(Parser, VlanTaggedWriteFirst) {
  auto b = base_send(256).vlan(0x6064).bth(op::kWriteFirst, 0x22, 0xFFFFFF);
  b.reth(0x1122334455667788ull, 0xAABBCCDD, 4096);
  const auto f = b.build();
  const auto r = parse(f.data(), f.size());
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_TRUE(r.view.has_vlan);
  EXPECT_EQ(r.view.vlan_tci(), 0x6064);
  EXPECT_EQ(r.view.l3_off, 18);
  EXPECT_EQ(r.view.reth(), (Reth{0x1122334455667788ull, 0xAABBCCDD, 4096}));
  EXPECT_EQ(r.view.psn(), 0xFFFFFFu);
  EXPECT_EQ(r.view.payload_len, 256);
}

TEST(Parser, AckHasAethAndNoPayload) {
  const auto f = base_send(0).bth(op::kAck, 0x33, 100).aeth(0x60 | 0x00, 42).ack_req(false).build();
  const auto r = parse(f.data(), f.size());
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_EQ(r.view.aeth(), (Aeth{0x60, 42}));
  EXPECT_EQ(r.view.payload_len, 0);
}

TEST(Parser, Ipv6WriteOnlyImm) {
  auto b =
      base_send(100).ipv6(*vocab::parse_ipv6("fd00::1"), *vocab::parse_ipv6("fd00::2"), 0xABCDE);
  b.bth(op::kWriteOnlyImm, 5, 9).reth(0x1000, 7, 100).immdt(0xDEADBEEF);
  const auto f = b.build();
  const auto r = parse(f.data(), f.size());
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_EQ(r.view.ip_version, IpVersion::kV6);
  EXPECT_EQ(r.view.l4_off, 54);
  EXPECT_EQ(r.view.immdt(), 0xDEADBEEFu);
  EXPECT_EQ(r.view.reth().dma_len, 100u);
}

TEST(Parser, CnpCarriesSixteenReservedBytes) {
  const auto f = base_send(0).bth(op::kCnp, 0x44, 0).becn().ack_req(false).build();
  EXPECT_EQ(f.size(), 14 + 20 + 8 + 12 + 16 + 4u);
  const auto r = parse(f.data(), f.size());
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_TRUE(r.view.becn());
  EXPECT_EQ(r.view.op->kind, OpKind::kCnp);
}

TEST(Parser, IgnoresEthernetPaddingAfterTheDatagram) {
  auto f = base_send(0).bth(op::kAck, 1, 1).build();
  const size_t len = f.size();
  f.resize(len + 6, 0);
  const auto r = parse(f.data(), f.size());
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_EQ(r.view.frame_len, len);
}

}  // namespace
}  // namespace epic::wire
