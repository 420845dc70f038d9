#include "datapath/wire/icrc_delta.h"

#include "datapath/wire/crc32.h"
#include "datapath/wire/layout.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace epic::wire {
namespace {

constexpr size_t kBlock = 16;

size_t headers_len(IpVersion ip) {  // IP + UDP + BTH
  return (ip == IpVersion::kV4 ? ipv4::kHeaderLen : ipv6::kHeaderLen) + udp::kHeaderLen +
         bth::kHeaderLen;
}

// out = (src | mask) ^ base over n bytes, n a multiple of kBlock; no pointer need be aligned
// (the constructor's zero block is a plain stack array).
void masked_xor(const uint8_t* src, const uint8_t* mask, const uint8_t* base, uint8_t* out,
                size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  for (; i < n; i += kBlock) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_xor_si128(_mm_or_si128(v, m), b));
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<uint8_t>((src[i] | mask[i]) ^ base[i]);
}

}  // namespace

IcrcDelta::IcrcDelta(const uint8_t* base, IpVersion ip, uint16_t l3_off, uint16_t icrc_off,
                     uint32_t base_icrc)
    : ip_(ip),
      l3_off_(l3_off),
      icrc_off_(icrc_off),
      base_icrc_(base_icrc),
      shift_(icrc_off - l3_off - headers_len(ip)) {
  // The compared span ends with the BTH and is rounded up to whole blocks by starting inside
  // the LRH stand-in, whose mask is all ones: those bytes compare equal.
  const size_t hdr = headers_len(ip);
  span_ = static_cast<uint16_t>((hdr + kBlock - 1) / kBlock * kBlock);
  const size_t lead = span_ - hdr;  // <= kIcrcLrhLen
  start_ = static_cast<uint16_t>(l3_off - lead);
  mask_ = icrc_variant_mask(ip) + kIcrcLrhLen - lead;
  const std::array<uint8_t, kSpan> zero{};
  masked_xor(base + start_, mask_, zero.data(), base_.data(), span_);
}

uint32_t IcrcDelta::icrc_of(const uint8_t* frame) const {
  alignas(16) uint8_t diff[kSpan];
  masked_xor(frame + start_, mask_, base_.data(), diff, span_);
  // The register of the difference alone (started from 0: crc32_update's argument ~0), moved
  // over the bytes after the BTH; leading zero bytes leave a zero register as it is.
  const uint32_t reg = ~crc32_update(~0u, diff, span_);
  return base_icrc_ ^ shift_.apply(reg);
}

}  // namespace epic::wire
