#include "host/collective/adversarial.h"

#include "host/collective/layout.h"
#include "proto/vocab/arith.h"

namespace epic::host {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A format's bit fields.
struct Fields {
  uint32_t ebits, mbits;
  bool has_inf;
};

// Draws from one stream: element-wide choices (shared by every rank) or one rank's own.
class Stream {
 public:
  explicit Stream(uint64_t key) : s_(key) {}
  uint32_t in(uint32_t lo, uint32_t hi) {
    s_ = mix(s_);
    return lo + static_cast<uint32_t>(s_ % (uint64_t{hi} - lo + 1));
  }

 private:
  uint64_t s_;
};

uint32_t element(const Fields& f, uint16_t ranks, uint16_t rank, size_t i, Stream& shared,
                 Stream& own) {
  const uint32_t top = (1u << f.ebits) - 1;
  const uint32_t max_field = f.has_inf ? top - 1 : top;  // E4M3FN: field 15 is a binade
  const uint32_t max_mant = (1u << f.mbits) - 1;
  const uint32_t bias = (1u << (f.ebits - 1)) - 1;
  const uint32_t neg = 1u << (f.ebits + f.mbits);
  const uint32_t nan = top << f.mbits | (f.has_inf ? 1u << (f.mbits - 1) : max_mant);
  const uint32_t inf = f.has_inf ? top << f.mbits : nan;
  auto bits = [&](uint32_t sign, uint32_t field, uint32_t mant) {
    if (!f.has_inf && field == top && mant == max_mant) mant -= 1;  // S.1111.111 is NaN
    return sign << (f.ebits + f.mbits) | field << f.mbits | mant;
  };
  const uint32_t big = shared.in(max_field - 3, max_field);
  const bool first = rank == 0, last = rank + 1 == ranks;
  switch (i % 9) {
    case 0:
      return bits(own.in(0, 1), own.in(0, max_field), own.in(0, max_mant));
    case 1:  // cancellation
      if (first) return bits(0, big, max_mant);
      if (last) return bits(1, big, max_mant);
      return bits(own.in(0, 1), own.in(0, 3), own.in(0, max_mant));
    case 2:  // 1 + tiny terms
      return first ? bits(0, bias, 0)
                   : bits(0, bias - f.mbits - 1 - own.in(0, 1), own.in(0, max_mant));
    case 3:  // subnormals
      return bits(own.in(0, 1), 0, own.in(0, max_mant));
    case 4:  // the largest magnitude
      return bits(rank % 3 == 2 ? 1 : 0, max_field, max_mant);
    case 5: {  // specials among finite values
      const uint32_t pick = own.in(0, 11);
      if (pick == 0) return nan;
      if (pick <= 2) return pick == 1 ? inf : inf | neg;
      if (pick <= 4) return neg;
      return bits(own.in(0, 1), own.in(0, max_field), own.in(0, max_mant));
    }
    case 6:  // signed zeros
      return own.in(0, 3) == 0 ? 0 : neg;
    case 7:  // near-equal magnitudes
      return bits(own.in(0, 1), bias + 2 + own.in(0, 2), own.in(0, max_mant));
    default:  // 1e8 + small - 1e8
      if (first) return bits(0, bias + f.mbits + 3, 0);
      if (rank == 1) return bits(1, bias + f.mbits + 3, 0);
      return bits(own.in(0, 1), bias, own.in(0, max_mant));
  }
}

}  // namespace

std::vector<uint8_t> adversarial_input(const vocab::CollectiveDescriptor& d, uint16_t ranks,
                                       uint64_t seed, uint64_t index, uint16_t rank) {
  std::vector<uint8_t> out(send_bytes(d, ranks));
  const auto fmt = vocab::float_format(d.dtype);
  if (!fmt) return out;
  const Fields f{static_cast<uint32_t>(fmt->exponent_bits),
                 static_cast<uint32_t>(fmt->precision - 1), d.dtype != vocab::DType::kFp8E4M3};
  const size_t w = vocab::wire_bytes(d.dtype);
  const uint64_t key = mix(mix(seed) ^ index);
  for (size_t i = 0; i < out.size() / w; ++i) {
    Stream shared(mix(key ^ i));
    Stream own(mix(mix(key ^ i) ^ (uint64_t{rank} + 1)));
    const uint32_t x = element(f, ranks, rank, i, shared, own);
    for (size_t b = 0; b < w; ++b) out[i * w + b] = static_cast<uint8_t>(x >> (8 * b));
  }
  return out;
}

std::vector<std::vector<uint8_t>> adversarial_inputs(const vocab::CollectiveDescriptor& d,
                                                     uint16_t ranks, uint64_t seed,
                                                     uint64_t index) {
  std::vector<std::vector<uint8_t>> in;
  in.reserve(ranks);
  for (uint16_t r = 0; r < ranks; ++r) in.push_back(adversarial_input(d, ranks, seed, index, r));
  return in;
}

}  // namespace epic::host
