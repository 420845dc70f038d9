#include "datapath/wire/icrc.h"

#include <gtest/gtest.h>

#include <vector>

#include "datapath/wire/crc32.h"
#include "datapath/wire/parser.h"
#include "test_frames.h"

namespace epic::wire {
namespace {

// Frames built and ICRC'd by scapy 2.5 (scapy.contrib.roce), an independent
// implementation: an RC SEND ONLY with ECN ECT(0) and pad 2, and an ACK at
// PSN 0xFFFFFF.
const auto kScapySend = testing::from_hex(
    "020000000002020000000001080045020038123440004011147d0a0000010a000002c00112b7002400000420ff"
    "ff0000001180000007000102030405060708090000e98455cd");
const auto kScapyAck = testing::from_hex(
    "02000000000102000000000208004500003000004000401126bb0a0000020a000001c00212b7001c00001100ff"
    "ff0000001200ffffff1f000005eddc5bcf");

TEST(Icrc, MatchesScapyOnSendOnly) {
  const auto r = parse(kScapySend.data(), kScapySend.size(), {.verify_icrc = false});
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_EQ(compute_icrc(r.view), 0xCD5584E9u);
  EXPECT_TRUE(icrc_ok(r.view));
}

TEST(Icrc, MatchesScapyOnAck) {
  const auto r = parse(kScapyAck.data(), kScapyAck.size(), {.verify_icrc = false});
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_TRUE(icrc_ok(r.view));
}

// The masked (variant) fields may change in flight without changing the ICRC;
// every other header bit is covered.
TEST(Icrc, IgnoresVariantFieldsAndCoversTheRest) {
  auto frame = kScapySend;
  const uint32_t icrc = compute_icrc(frame.data(), IpVersion::kV4, 14, frame.size() - 4);
  for (size_t byte = 14; byte < frame.size() - 4; ++byte) {
    const size_t ip = byte - 14;
    const bool variant = ip == 1 || ip == 8 || ip == 10 || ip == 11  // TOS, TTL, checksum
                         || ip == 26 || ip == 27                     // UDP checksum
                         || ip == 32;                                // BTH FECN/BECN/resv
    frame[byte] ^= 0x01;
    const uint32_t now = compute_icrc(frame.data(), IpVersion::kV4, 14, frame.size() - 4);
    EXPECT_EQ(now == icrc, variant) << "byte " << byte;
    frame[byte] ^= 0x01;
  }
}

TEST(Icrc, Ipv6MasksTrafficClassFlowLabelAndHopLimit) {
  auto b = testing::base_send(32);
  b.ipv6(*vocab::parse_ipv6("fd00::1"), *vocab::parse_ipv6("fd00::2"), 0x12345);
  auto frame = b.build();
  const auto r = parse(frame.data(), frame.size());
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  const uint32_t icrc = compute_icrc(r.view);
  frame[14] = 0x6A;   // version 6, traffic class high nibble changed
  frame[15] ^= 0xFF;  // traffic class low nibble + flow label
  frame[14 + 7] = 3;  // hop limit
  EXPECT_EQ(compute_icrc(frame.data(), IpVersion::kV6, 14, r.view.icrc_off), icrc);
  frame[14 + 8] ^= 1;  // source address is covered
  EXPECT_NE(compute_icrc(frame.data(), IpVersion::kV6, 14, r.view.icrc_off), icrc);
}

// Piecewise: the pseudo-header's CRC continued over the bytes after the BTH, from any buffer.
TEST(Icrc, AfterHeadersContinuedOverTheRestEqualsTheWhole) {
  for (size_t payload : {0, 1, 4, 255, 1024, 4096}) {
    const auto frame = testing::base_send(payload).build();
    const auto r = parse(frame.data(), frame.size());
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    const size_t rest = 14 + 20 + 8 + 12;
    const std::vector<uint8_t> after(frame.begin() + static_cast<long>(rest),
                                     frame.begin() + r.view.icrc_off);
    const uint32_t crc = icrc_after_headers(frame.data(), IpVersion::kV4, 14);
    EXPECT_EQ(crc32_update(crc, after.data(), after.size()), compute_icrc(r.view)) << payload;
  }
}

}  // namespace
}  // namespace epic::wire
