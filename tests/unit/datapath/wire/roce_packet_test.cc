#include "datapath/wire/roce_packet.h"

#include <gtest/gtest.h>

#include "datapath/wire/parser.h"
#include "test_frames.h"

namespace epic::wire {
namespace {

using testing::base_send;

// decode(parse(encode(p))) == p for every known opcode, over IPv4, IPv4 with a
// VLAN tag and IPv6, with every header field set to something non-default.
TEST(RocePacket, EncodeDecodeRoundTripsEveryKnownOpcode) {
  int checked = 0;
  for (int c = 0; c < 256; ++c) {
    const auto& info = opcode_info(static_cast<uint8_t>(c));
    if (!info.known) continue;
    for (int variant = 0; variant < 3; ++variant) {
      auto b = base_send(info.has_payload ? 37 : 0)
                   .bth(static_cast<uint8_t>(c), 0xABCDEF, 0xFFFFFE)
                   .tos(0x8A)
                   .ttl(3)
                   .ipv4_id(0x4242)
                   .pkey(0x8001)
                   .solicited()
                   .mig_req()
                   .fecn()
                   .becn();
      if (variant == 1) b.vlan(0xE00A);
      if (variant == 2)
        b.ipv6(*vocab::parse_ipv6("fd00:9::1"), *vocab::parse_ipv6("fd00:9::2"), 0x54321);
      RocePacket& p = b.packet();
      if (!info.ends_message()) p.payload.resize(info.has_payload ? 36 : 0);  // no pad
      p.udp_checksum = 0x1234;
      p.bth_reserved6 = 0x15;
      p.bth_reserved7 = 0x2A;
      p.reth = {0x0102030405060708ull, 0x090A0B0C, 0x0D0E0F10};
      p.aeth = {0x61, 0xFEDCBA};
      p.deth = {0x80010000, 0x5A, 0x123456};
      p.atomic_eth = {1, 2, 3, 4};
      p.atomic_ack_orig = 0x5555;
      p.immdt = 0xCAFEBABE;
      p.ieth_rkey = 0x77;
      p.cnp_reserved[3] = 9;
      const auto frame = encode(p);
      ASSERT_EQ(frame.size(), p.encoded_size());
      const auto r = parse(frame.data(), frame.size());
      ASSERT_TRUE(r.ok()) << info.name << " variant " << variant << ": " << to_string(r.error);
      RocePacket back = decode(r.view);
      // Fields of extension headers the opcode does not carry are not on the wire.
      RocePacket expect = p;
      if (!info.has(kExtReth)) expect.reth = {};
      if (!info.has(kExtAeth)) expect.aeth = {};
      if (!info.has(kExtDeth)) expect.deth = {};
      if (!info.has(kExtAtomicEth)) expect.atomic_eth = {};
      if (!info.has(kExtAtomicAckEth)) expect.atomic_ack_orig = 0;
      if (!info.has(kExtImmDt)) expect.immdt = 0;
      if (!info.has(kExtIeth)) expect.ieth_rkey = 0;
      if (!info.has(kExtCnpPad)) expect.cnp_reserved = {};
      if (variant == 2) {
        const RocePacket defaults;
        expect.ipv4_src = defaults.ipv4_src;
        expect.ipv4_dst = defaults.ipv4_dst;
        expect.ipv4_id = defaults.ipv4_id;
        expect.ipv4_flags_frag = defaults.ipv4_flags_frag;
      } else {
        expect.ipv6_flow_label = 0;
      }
      EXPECT_TRUE(back == expect) << info.name << " variant " << variant;
      EXPECT_EQ(encode(back), frame) << info.name << " variant " << variant;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 38 * 3);
}

TEST(RocePacket, EncodeRefusesTooSmallBuffer) {
  const auto p = base_send(100).packet();
  std::vector<uint8_t> out(p.encoded_size() - 1);
  EXPECT_EQ(encode(p, out.data(), out.size()), 0u);
}

TEST(RocePacket, PadCountAlignsPayloadToFourBytes) {
  for (size_t n = 0; n < 9; ++n) {
    const auto p = base_send(n).packet();
    EXPECT_EQ((n + p.effective_pad_count()) % 4, 0u) << n;
  }
}

}  // namespace
}  // namespace epic::wire
