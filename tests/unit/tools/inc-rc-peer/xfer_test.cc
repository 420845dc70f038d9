// EPICXFER1 messages and the receive-side checks both roles apply.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tools/inc-rc-peer/pattern.h"
#include "tools/inc-rc-peer/xfer_common.h"
#include "tools/inc-rc-peer/xfer_wire.h"

namespace epic::tools::rc_peer {
namespace {

TEST(XferWire, ParamsMessageHasTheRxeXferLayoutAndRoundTrips) {
  XferParams p{0x123, 0xffffc0, 0x00C0DE01, 0x7f0012345000, 0x102000, gid_from_ipv4(0x0A0900C8)};
  const XferMsg m = format_xfer_params(p);
  const std::string text(m.data());
  EXPECT_EQ(text,
            "EPICXFER1 000123 ffffc0 00c0de01 00007f0012345000 0000000000102000 "
            "00000000000000000000ffff0a0900c8");
  EXPECT_EQ(parse_xfer_params(text), p);
  EXPECT_FALSE(parse_xfer_params(text + " extra").has_value());
  EXPECT_FALSE(parse_xfer_params("EPICXFER1 1 2 3").has_value());
}

TEST(XferWire, StepRoundTripsEveryOpAndDirection) {
  for (XferOp op : {XferOp::kSend, XferOp::kSendImm, XferOp::kWrite, XferOp::kWriteImm}) {
    for (XferDir dir : {XferDir::kToAgent, XferDir::kToController}) {
      XferStep s{17, op, dir, 1048576, 122, 0xE1C00011, 4000, 30};
      const XferMsg m = format_xfer_step(s);
      EXPECT_EQ(parse_xfer_step(m.data()), s) << m.data();
    }
  }
  EXPECT_EQ(std::string(format_xfer_step(
                            {3, XferOp::kWriteImm, XferDir::kToController, 0, 24, 0xE1C00003, 183})
                            .data()),
            "STEP 3 WRITE_IMM a2c 0 24 e1c00003 183 0");
  EXPECT_FALSE(parse_xfer_step("STEP 3 READ a2c 0 24 e1c00003 183 0").has_value());
  EXPECT_FALSE(parse_xfer_step("STEP 3 WRITE up 0 24 e1c00003 183 0").has_value());
  EXPECT_FALSE(parse_xfer_step("STEP 3 WRITE a2c 0 24 e1c00003 183").has_value());  // no late_ms
}

TEST(XferCommon, CheckBytesFindsAWrongByteAndAnOverrunGuard) {
  XferMemory mem(4096);
  uint8_t* p = mem.window();
  std::memset(p, kGuardByte, 4096 + kGuardLen);
  pattern_fill(p, 1000, 5);
  EXPECT_EQ(check_bytes(p, 1000, 5), "");
  EXPECT_NE(check_bytes(p, 1000, 6), "");
  p[1000] = 0;  // one byte past the message
  EXPECT_NE(check_bytes(p, 1000, 5).find("after the 1000-byte message"), std::string::npos);
}

TEST(XferCommon, RecvCompletionMustMatchOpcodeLengthAndImmediate) {
  XferStep s{1, XferOp::kWriteImm, XferDir::kToController, 100, 1, 0xE1C00001, 0, 0};
  soft::Completion c;
  c.opcode = soft::WcOpcode::kRecvRdmaWithImm;
  c.byte_len = 100;
  c.with_imm = true;
  c.imm_data = 0xE1C00001;
  EXPECT_EQ(check_recv_completion(c, s), "");
  c.imm_data = 0x0100C0E1;  // byte-swapped
  EXPECT_NE(check_recv_completion(c, s), "");
  c.imm_data = 0xE1C00001;
  c.opcode = soft::WcOpcode::kRecv;
  EXPECT_NE(check_recv_completion(c, s), "");
  s.op = XferOp::kSend;
  c.with_imm = false;
  c.byte_len = 99;
  EXPECT_NE(check_recv_completion(c, s), "");
}

TEST(XferCommon, StepsMustFitTheWindow) {
  XferMemory mem(1 << 20);
  XferStep s{1, XferOp::kWrite, XferDir::kToAgent, 1 << 20, 1, 0, kMaxWriteOffset - 1, 0};
  EXPECT_EQ(step_fits(s, mem.window_len()), "");
  s.size += 1 + static_cast<uint32_t>(mem.window_len());
  EXPECT_NE(step_fits(s, mem.window_len()), "");
}

}  // namespace
}  // namespace epic::tools::rc_peer
