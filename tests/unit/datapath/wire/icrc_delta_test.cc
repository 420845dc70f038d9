#include "datapath/wire/icrc_delta.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "datapath/wire/bytes.h"
#include "datapath/wire/layout.h"

namespace epic::wire {
namespace {

constexpr uint16_t kL3 = eth::kHeaderLen;

size_t headers_len(IpVersion ip) {
  return (ip == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen) + udp::kHeaderLen +
         bth::kHeaderLen;
}

// A frame of random bytes with `after` bytes between the BTH and the ICRC, its ICRC stored.
// compute_icrc reads only offsets, so random headers are as good as parsed ones here.
std::vector<uint8_t> random_frame(IpVersion ip, size_t after, std::mt19937& rng) {
  std::vector<uint8_t> f(kL3 + headers_len(ip) + after + kIcrcLen);
  for (auto& b : f) b = static_cast<uint8_t>(rng());
  const auto icrc_off = static_cast<uint16_t>(f.size() - kIcrcLen);
  store_icrc(f.data(), ip, kL3, icrc_off);
  return f;
}

// What a replicating switch rewrites per child: destination MAC, IP addresses, UDP source
// port, destination QP, AckReq, PSN, and the IP checksum; plus some random header bytes.
void rewrite_headers(std::vector<uint8_t>& f, IpVersion ip, std::mt19937& rng) {
  for (size_t i = 0; i < 6; ++i) f[eth::kDst + i] = static_cast<uint8_t>(rng());
  uint8_t* l3 = f.data() + kL3;
  const size_t ip_len = ip == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen;
  if (ip == IpVersion::kV4) {
    store_be32(l3 + ipv4::kDst, rng());
    store_be16(l3 + ipv4::kChecksum, static_cast<uint16_t>(rng()));
  } else {
    store_be32(l3 + ipv6::kDst + 12, rng());  // the low word of the destination
  }
  uint8_t* udph = l3 + ip_len;
  store_be16(udph + udp::kSrcPort, static_cast<uint16_t>(rng()));
  uint8_t* bthp = udph + udp::kHeaderLen;
  store_be24(bthp + bth::kDestQp, rng());
  bthp[bth::kAckReq] = static_cast<uint8_t>(rng());
  store_be24(bthp + bth::kPsn, rng());
  const size_t extra = rng() % 4;
  for (size_t i = 0; i < extra; ++i) l3[rng() % headers_len(ip)] = static_cast<uint8_t>(rng());
}

// Every length between the BTH and the ICRC a frame up to a 4 KB payload (plus its extension
// headers) can have, IPv4 and IPv6: the adjusted ICRC equals a full recomputation.
TEST(IcrcDelta, EqualsAFullRecomputationForEveryLength) {
  std::mt19937 rng(11);
  for (IpVersion ip : {IpVersion::kV4, IpVersion::kV6}) {
    for (size_t after = 0; after <= 4096 + 32; ++after) {
      const auto base = random_frame(ip, after, rng);
      const auto icrc_off = static_cast<uint16_t>(base.size() - kIcrcLen);
      // Only the headers of the base are read: given alone, they make the same delta.
      const std::vector<uint8_t> head(base.begin(),
                                      base.begin() + static_cast<long>(kL3 + headers_len(ip)));
      const IcrcDelta delta(head.data(), ip, kL3, icrc_off, load_le32(base.data() + icrc_off));
      ASSERT_TRUE(delta.matches(ip, kL3, icrc_off));
      EXPECT_EQ(delta.icrc_of(base.data()), load_le32(base.data() + icrc_off));
      for (int copy = 0; copy < 3; ++copy) {
        auto f = base;
        rewrite_headers(f, ip, rng);
        ASSERT_EQ(delta.icrc_of(f.data()), compute_icrc(f.data(), ip, kL3, icrc_off))
            << (ip == IpVersion::kV4 ? "IPv4" : "IPv6") << ", " << after << " bytes after BTH";
      }
    }
  }
}

// Every single header bit flipped alone, so each position of the compared span is exercised
// (variant fields included: they must leave the ICRC as it was).
TEST(IcrcDelta, EveryHeaderBit) {
  std::mt19937 rng(12);
  for (IpVersion ip : {IpVersion::kV4, IpVersion::kV6}) {
    const auto base = random_frame(ip, 1030, rng);
    const auto icrc_off = static_cast<uint16_t>(base.size() - kIcrcLen);
    const IcrcDelta delta(base.data(), ip, kL3, icrc_off, load_le32(base.data() + icrc_off));
    for (size_t byte = 0; byte < kL3 + headers_len(ip); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        auto f = base;
        f[byte] ^= static_cast<uint8_t>(1u << bit);
        ASSERT_EQ(delta.icrc_of(f.data()), compute_icrc(f.data(), ip, kL3, icrc_off))
            << "byte " << byte << " bit " << bit;
      }
    }
  }
}

TEST(IcrcDelta, MatchesOnlyTheSameLayout) {
  std::mt19937 rng(13);
  const auto base = random_frame(IpVersion::kV4, 100, rng);
  const auto icrc_off = static_cast<uint16_t>(base.size() - kIcrcLen);
  const IcrcDelta delta(base.data(), IpVersion::kV4, kL3, icrc_off,
                        load_le32(base.data() + icrc_off));
  EXPECT_TRUE(delta.matches(IpVersion::kV4, kL3, icrc_off));
  EXPECT_FALSE(delta.matches(IpVersion::kV6, kL3, icrc_off));
  EXPECT_FALSE(delta.matches(IpVersion::kV4, kL3 + 4, icrc_off));
  EXPECT_FALSE(delta.matches(IpVersion::kV4, kL3, icrc_off - 4));
}

}  // namespace
}  // namespace epic::wire
