#include "datapath/engine/translate_header.h"

#include <gtest/gtest.h>

#include "datapath/wire/parser.h"

namespace epic::engine {
namespace {

// Every frame the switch emits must be one a NIC accepts: our own parser (checked against
// scapy and Linux rxe, see tests/oracle) verifies the IPv4 checksum and the ICRC.
TEST(TranslateHeader, BuildsFramesThatParseWithValidIcrcForEveryOpcodeUsed) {
  const Endpoint sw{{2, 0xEE, 0, 0, 0, 1}, 0x0AC80001, 0x1003};
  const Endpoint rank{{2, 0xAA, 0, 0, 0, 7}, 0x0A640007, 0x107};
  uint8_t payload[1024];
  for (size_t i = 0; i < sizeof payload; ++i) payload[i] = static_cast<uint8_t>(i);
  for (uint8_t opcode : {wire::op::kSendFirst, wire::op::kSendMiddle, wire::op::kSendLast,
                         wire::op::kSendOnly, wire::op::kSendOnlyImm, wire::op::kAck}) {
    FrameSpec f;
    f.src = &sw;
    f.dst = &rank;
    f.opcode = opcode;
    f.psn = 0xFFFFFF;
    f.ack_req = true;
    f.immdt = 0x45504943;
    f.aeth_syndrome = 0x20 | 12;
    f.aeth_msn = 5;
    const bool has_payload = wire::opcode_info(opcode).has_payload;
    f.payload = payload;
    f.payload_len = has_payload ? (opcode == wire::op::kSendLast ? 13 : 256) : 0;
    uint8_t buf[2048];
    const size_t n = build_frame(buf, sizeof buf, f);
    ASSERT_EQ(n, frame_size(f));
    const auto r = wire::parse(buf, n);
    ASSERT_TRUE(r.ok()) << int(opcode) << ": " << wire::to_string(r.error);
    EXPECT_EQ(r.view.dest_qp(), rank.qpn);
    EXPECT_EQ(r.view.psn(), 0xFFFFFFu);
    EXPECT_EQ(r.view.ipv4_src(), sw.ipv4);
    EXPECT_EQ(r.view.ipv4_dst(), rank.ipv4);
    EXPECT_EQ(r.view.data_len(), f.payload_len);
    if (r.view.op->has(wire::kExtImmDt)) {
      EXPECT_EQ(r.view.immdt(), 0x45504943u);
    }
    if (r.view.op->has(wire::kExtAeth)) {
      EXPECT_EQ(r.view.aeth(), (wire::Aeth{0x20 | 12, 5}));
    }
    EXPECT_EQ(build_frame(buf, n - 1, f), 0u);  // refuses a buffer too small
  }
}

}  // namespace
}  // namespace epic::engine
