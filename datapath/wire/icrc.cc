#include "datapath/wire/icrc.h"

#include <array>
#include <cstring>

#include "datapath/wire/crc32.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace epic::wire {
namespace {

constexpr size_t kLrh = kIcrcLrhLen;
constexpr size_t kMaxPseudo = kLrh + ipv6::kHeaderLen + udp::kHeaderLen + bth::kHeaderLen;

// OR-masks over [LRH(8) | IP | UDP | BTH]: all-ones where the ICRC treats a
// field as variant. The LRH bytes are all ones, whatever the frame holds there.
constexpr std::array<uint8_t, kIcrcMaskLen> make_mask(IpVersion ip) {
  std::array<uint8_t, kIcrcMaskLen> m{};
  for (size_t i = 0; i < kLrh; ++i) m[i] = 0xFF;
  const size_t iph = kLrh;
  size_t udph = 0;
  if (ip == IpVersion::kV4) {
    m[iph + ipv4::kTos] = 0xFF;
    m[iph + ipv4::kTtl] = 0xFF;
    m[iph + ipv4::kChecksum] = m[iph + ipv4::kChecksum + 1] = 0xFF;
    udph = iph + ipv4::kHeaderLen;
  } else {
    m[iph + 0] = 0x0F;  // version nibble stays; traffic class and flow label are variant
    m[iph + 1] = m[iph + 2] = m[iph + 3] = 0xFF;
    m[iph + ipv6::kHopLimit] = 0xFF;
    udph = iph + ipv6::kHeaderLen;
  }
  m[udph + udp::kChecksum] = m[udph + udp::kChecksum + 1] = 0xFF;
  m[udph + udp::kHeaderLen + bth::kFecnBecn] = 0xFF;
  return m;
}

alignas(16) constexpr std::array<uint8_t, kIcrcMaskLen> kMaskV4 = make_mask(IpVersion::kV4);
alignas(16) constexpr std::array<uint8_t, kIcrcMaskLen> kMaskV6 = make_mask(IpVersion::kV6);

}  // namespace

const uint8_t* icrc_variant_mask(IpVersion ip) {
  return ip == IpVersion::kV4 ? kMaskV4.data() : kMaskV6.data();
}

uint32_t icrc_after_headers(const uint8_t* frame, IpVersion ip, uint16_t l3_off) {
  const size_t ip_len = ip == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen;
  const size_t n = kLrh + ip_len + udp::kHeaderLen + bth::kHeaderLen;  // 68 or 88
  const uint8_t* mask = icrc_variant_mask(ip);
  // The pseudo-header starts 8 bytes before the IP header (inside the Ethernet
  // header, so always in the buffer); the mask turns those bytes into the LRH.
  const uint8_t* src = frame + l3_off - kLrh;
  alignas(16) uint8_t pseudo[kMaxPseudo + 16];
  size_t i = 0;
#if defined(__SSE2__)
  // Whole 16-byte stores, so the CRC's vector loads forward from them without
  // a store-forwarding stall (byte stores followed by wide loads cost ~15 ns).
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i m = _mm_load_si128(reinterpret_cast<const __m128i*>(mask + i));
    _mm_store_si128(reinterpret_cast<__m128i*>(pseudo + i), _mm_or_si128(v, m));
  }
#endif
  for (; i < n; ++i) pseudo[i] = src[i] | mask[i];

  return crc32_update(0, pseudo, n);
}

uint32_t compute_icrc(const uint8_t* frame, IpVersion ip, uint16_t l3_off, uint16_t icrc_off) {
  const size_t ip_len = ip == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen;
  const size_t rest_off = l3_off + ip_len + udp::kHeaderLen + bth::kHeaderLen;
  return crc32_update(icrc_after_headers(frame, ip, l3_off), frame + rest_off, icrc_off - rest_off);
}

}  // namespace epic::wire
