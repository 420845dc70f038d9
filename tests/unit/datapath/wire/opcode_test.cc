#include "datapath/wire/opcode.h"

#include <gtest/gtest.h>

namespace epic::wire {
namespace {

TEST(Opcode, WriteOnlyWithImmediateCarriesRethThenImmDt) {
  const auto& i = opcode_info(op::kWriteOnlyImm);
  ASSERT_TRUE(i.known);
  EXPECT_EQ(i.name, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(i.off_reth, 0);
  EXPECT_EQ(i.off_immdt, 16);
  EXPECT_EQ(i.ext_len, 20);
  EXPECT_EQ(i.position, Position::kOnly);
  EXPECT_TRUE(i.has_payload);
}

TEST(Opcode, AckAndAtomicAckLayout) {
  EXPECT_EQ(opcode_info(op::kAck).ext_len, 4);
  EXPECT_FALSE(opcode_info(op::kAck).has_payload);
  const auto& aa = opcode_info(op::kAtomicAck);
  EXPECT_EQ(aa.off_aeth, 0);
  EXPECT_EQ(aa.off_atomic_ack_eth, 4);
  EXPECT_EQ(aa.ext_len, 12);
  EXPECT_EQ(opcode_info(op::kCompareSwap).ext_len, 28);
}

TEST(Opcode, UcMirrorsRcSendAndWriteOnly) {
  for (uint8_t c = 0; c <= op::kWriteOnlyImm; ++c) {
    const auto& rc = opcode_info(c);
    const auto& uc = opcode_info(static_cast<uint8_t>(op::kUcBase + c));
    ASSERT_TRUE(uc.known) << int(c);
    EXPECT_EQ(uc.transport, Transport::kUc);
    EXPECT_EQ(uc.ext, rc.ext);
    EXPECT_EQ(uc.position, rc.position);
    EXPECT_EQ(uc.name.substr(3), rc.name.substr(3));
  }
  EXPECT_FALSE(opcode_info(op::kUcBase + op::kReadRequest).known);  // UC has no READ
  EXPECT_FALSE(opcode_info(op::kUcBase + op::kAck).known);
}

TEST(Opcode, UdAndCnp) {
  EXPECT_EQ(opcode_info(op::kUdSendOnly).off_deth, 0);
  EXPECT_EQ(opcode_info(op::kUdSendOnlyImm).off_immdt, 8);
  EXPECT_EQ(opcode_info(op::kCnp).ext_len, 16);
  EXPECT_EQ(opcode_info(op::kCnp).kind, OpKind::kCnp);
}

TEST(Opcode, ReservedAndRdAreUnknown) {
  EXPECT_FALSE(opcode_info(0x15).known);
  EXPECT_FALSE(opcode_info(0x40).known);  // RD SEND FIRST: RD is not supported
  EXPECT_FALSE(opcode_info(0xFF).known);
  int known = 0;
  for (int c = 0; c < 256; ++c) known += opcode_info(static_cast<uint8_t>(c)).known;
  EXPECT_EQ(known, 23 + 12 + 2 + 1);  // RC, UC, UD, CNP
}

}  // namespace
}  // namespace epic::wire
