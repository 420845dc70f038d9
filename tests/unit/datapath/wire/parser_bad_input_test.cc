// Bad input is a first-class case: each malformation has its own reason and
// the parser never reads outside the buffer (ASan checks the latter: every
// frame below lives in a heap buffer of exactly its length).
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "datapath/wire/bytes.h"
#include "datapath/wire/parser.h"
#include "test_frames.h"

namespace epic::wire {
namespace {

using testing::base_send;

ParseError parse_exact(const std::vector<uint8_t>& f, const ParseOptions& o = {}) {
  // Copy into an allocation of exactly f.size() so any overread trips ASan.
  auto buf = std::make_unique<uint8_t[]>(f.size() ? f.size() : 1);
  std::copy(f.begin(), f.end(), buf.get());
  return parse(buf.get(), f.size(), o).error;
}

struct BadCase {
  const char* description;
  std::function<std::vector<uint8_t>()> frame;
  ParseError expected;
};

std::vector<uint8_t> mutate(std::vector<uint8_t> f, size_t at, uint8_t value) {
  f[at] = value;
  return f;
}
std::vector<uint8_t> with_packet(const std::function<void(RocePacket&)>& change,
                                 size_t payload = 64) {
  auto b = base_send(payload);
  change(b.packet());
  return b.build();
}

const std::vector<BadCase>& bad_cases() {
  static const std::vector<BadCase> kCases = {
      {"empty frame", [] { return std::vector<uint8_t>{}; }, ParseError::kTruncatedEthernet},
      {"13 bytes of Ethernet", [] { return std::vector<uint8_t>(13, 0); },
       ParseError::kTruncatedEthernet},
      {"VLAN tag cut short",
       [] {
         auto f = base_send().vlan(5).build();
         f.resize(16);
         return f;
       },
       ParseError::kTruncatedVlan},
      {"ARP EtherType", [] { return mutate(base_send().build(), 13, 0x06); }, ParseError::kNotIp},
      {"IPv4 header cut short",
       [] {
         auto f = base_send().build();
         f.resize(30);
         return f;
       },
       ParseError::kTruncatedIpv4},
      {"IPv4 EtherType carrying version 6", [] { return mutate(base_send().build(), 14, 0x65); },
       ParseError::kBadIpVersion},
      {"IPv4 options (IHL 6)", [] { return mutate(base_send().build(), 14, 0x46); },
       ParseError::kIpv4Options},
      {"IPv4 more-fragments flag",
       [] { return with_packet([](RocePacket& p) { p.ipv4_flags_frag = 0x2000; }); },
       ParseError::kIpv4Fragment},
      {"IPv4 fragment offset",
       [] { return with_packet([](RocePacket& p) { p.ipv4_flags_frag = 0x0010; }); },
       ParseError::kIpv4Fragment},
      {"IPv4 total length below IP+UDP",
       [] { return with_packet([](RocePacket& p) { p.ip_length = 27; }); },
       ParseError::kIpv4BadTotalLength},
      {"IPv4 total length beyond the frame",
       [] { return with_packet([](RocePacket& p) { p.ip_length = 200; }); },
       ParseError::kIpv4TruncatedPayload},
      {"TCP instead of UDP", [] { return mutate(base_send().build(), 14 + 9, 6); },
       ParseError::kNotUdp},
      {"IPv4 header checksum wrong",
       [] { return with_packet([](RocePacket& p) { p.ipv4_checksum = 0x1234; }); },
       ParseError::kIpv4BadChecksum},
      {"IPv6 header cut short",
       [] {
         auto f = base_send().ipv6({}, {}).build();
         f.resize(50);
         return f;
       },
       ParseError::kTruncatedIpv6},
      {"IPv6 payload length beyond the frame",
       [] {
         return with_packet([](RocePacket& p) {
           p.ip_version = IpVersion::kV6;
           p.ip_length = 500;
         });
       },
       ParseError::kIpv6TruncatedPayload},
      {"IPv6 extension header (hop-by-hop)",
       [] { return mutate(base_send().ipv6({}, {}).build(), 14 + 6, 0); }, ParseError::kNotUdp},
      {"UDP length disagrees with IP",
       [] { return with_packet([](RocePacket& p) { p.udp_length = 50; }); },
       ParseError::kUdpLengthMismatch},
      {"IP datagram too short for a UDP header",
       [] { return with_packet([](RocePacket& p) { p.ip_length = 20 + 7; }); },
       ParseError::kIpv4BadTotalLength},
      {"wrong UDP destination port", [] { return base_send().udp_dst_port(4790).build(); },
       ParseError::kNotRoceV2Port},
      {"datagram ends inside the BTH",
       [] {
         return with_packet(
             [](RocePacket& p) {
               p.ip_length = 20 + 8 + 11;
               p.udp_length = 8 + 11;
             },
             0);
       },
       ParseError::kTruncatedBth},
      {"transport version 1",
       [] { return with_packet([](RocePacket& p) { p.transport_version = 1; }); },
       ParseError::kBadTransportVersion},
      {"reserved opcode 0x15", [] { return with_packet([](RocePacket& p) { p.opcode = 0x15; }); },
       ParseError::kUnknownOpcode},
      {"RD opcode (unsupported transport)",
       [] { return with_packet([](RocePacket& p) { p.opcode = 0x40; }); },
       ParseError::kUnknownOpcode},
      {"WRITE FIRST whose RETH is cut",
       [] {
         return with_packet(
             [](RocePacket& p) {
               p.opcode = op::kWriteFirst;
               p.ip_length = 20 + 8 + 12 + 10;
               p.udp_length = 8 + 12 + 10;
             },
             0);
       },
       ParseError::kTruncatedExtHeaders},
      {"no room for the ICRC",
       [] {
         return with_packet(
             [](RocePacket& p) {
               p.opcode = op::kAck;
               p.ip_length = 20 + 8 + 12 + 4 + 2;
               p.udp_length = 8 + 12 + 4 + 2;
             },
             0);
       },
       ParseError::kMissingIcrc},
      {"ACK with a payload", [] { return with_packet([](RocePacket& p) { p.opcode = op::kAck; }); },
       ParseError::kUnexpectedPayload},
      {"READ REQUEST with a payload",
       [] { return with_packet([](RocePacket& p) { p.opcode = op::kReadRequest; }); },
       ParseError::kUnexpectedPayload},
      {"pad count 3 on an empty SEND ONLY",
       [] { return mutate(base_send(0).build(), 42 + 1, 0x30); }, ParseError::kPadExceedsPayload},
      {"pad on a SEND MIDDLE",
       [] {
         return with_packet([](RocePacket& p) {
           p.opcode = op::kSendMiddle;
           p.pad_count = 1;
         });
       },
       ParseError::kPadNotAllowed},
      {"pad count on an ACK",
       [] { return mutate(base_send(0).bth(op::kAck, 1, 1).build(), 42 + 1, 0x10); },
       ParseError::kPadNotAllowed},
      {"payload above 4096 bytes", [] { return base_send(4100).build(); },
       ParseError::kPayloadTooLarge},
      {"ICRC wrong", [] { return with_packet([](RocePacket& p) { p.icrc = 0; }); },
       ParseError::kBadIcrc},
      {"payload bit flipped after the ICRC was computed",
       [] {
         auto f = base_send().build();
         f[60] ^= 0x10;
         return f;
       },
       ParseError::kBadIcrc},
  };
  return kCases;
}

TEST(ParserBadInput, EachMalformationHasItsOwnReason) {
  for (const auto& c : bad_cases()) {
    EXPECT_EQ(to_string(parse_exact(c.frame())), to_string(c.expected)) << c.description;
  }
}

TEST(ParserBadInput, EveryReasonIsExercised) {
  std::vector<bool> seen(kParseErrorCount, false);
  for (const auto& c : bad_cases()) seen[static_cast<int>(c.expected)] = true;
  for (int e = 1; e < kParseErrorCount; ++e) {
    EXPECT_TRUE(seen[e]) << "no bad-input case for " << to_string(static_cast<ParseError>(e));
  }
}

// Every prefix of a valid frame is rejected, never accepted and never overread.
TEST(ParserBadInput, EveryTruncationIsRejected) {
  std::vector<std::vector<uint8_t>> frames = {
      base_send(33).build(), base_send(0).vlan(1).bth(op::kAck, 1, 1).build(),
      base_send(64).ipv6({}, {}).bth(op::kWriteOnlyImm, 2, 3).build(),
      base_send(0).bth(op::kCnp, 1, 0).build()};
  for (const auto& f : frames) {
    ASSERT_EQ(parse_exact(f), ParseError::kOk);
    for (size_t n = 0; n < f.size(); ++n) {
      std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<long>(n));
      EXPECT_NE(parse_exact(cut), ParseError::kOk) << "prefix " << n << " of " << f.size();
    }
  }
}

TEST(ParserBadInput, ChecksumAndIcrcChecksCanBeSkipped) {
  const auto f = with_packet([](RocePacket& p) {
    p.ipv4_checksum = 1;
    p.icrc = 2;
  });
  EXPECT_EQ(parse_exact(f), ParseError::kIpv4BadChecksum);
  EXPECT_EQ(parse_exact(f, {.verify_ipv4_checksum = false}), ParseError::kBadIcrc);
  EXPECT_EQ(parse_exact(f, {.verify_ipv4_checksum = false, .verify_icrc = false}), ParseError::kOk);
}

}  // namespace
}  // namespace epic::wire
