// Helpers for the arith tests: bit casts, buffers with guard bytes at
// unaligned offsets, and random wire/accumulator elements that mix special
// values (NaNs with payloads, signed zeros, infinities, subnormals, extremes,
// fp8 rounding midpoints and overflow thresholds) into ordinary ones.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "datapath/arith/dtype.h"

namespace epic::arith::test {

inline uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float from_bits(uint32_t b) { return std::bit_cast<float>(b); }

// `size` bytes starting `offset` bytes past a 64-byte boundary, with guard
// bytes before and after; intact() says whether the guards are unchanged.
class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr uint8_t kPattern = 0xA5;

  GuardedBuffer(size_t size, size_t offset)
      : size_(size), offset_(offset), storage_(64 + kGuard + offset + size + kGuard, kPattern) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    start_ = static_cast<size_t>((64 - base % 64) % 64) + kGuard + offset_;
  }
  uint8_t* data() { return storage_.data() + start_; }
  const uint8_t* data() const { return storage_.data() + start_; }
  size_t size() const { return size_; }
  std::vector<uint8_t> bytes() const { return {data(), data() + size_}; }
  void fill(const std::vector<uint8_t>& b) { std::copy(b.begin(), b.end(), data()); }
  bool intact() const {
    for (size_t i = 0; i < start_; ++i)
      if (storage_[i] != kPattern) return false;
    for (size_t i = start_ + size_; i < storage_.size(); ++i)
      if (storage_[i] != kPattern) return false;
    return true;
  }

 private:
  size_t size_, offset_, start_ = 0;
  std::vector<uint8_t> storage_;
};

inline uint32_t random_fp32_bits(std::mt19937_64& rng) {
  static constexpr uint32_t kSpecial[] = {
      0x00000000, 0x80000000, 0x7F800000, 0xFF800000,  // zeros, infinities
      0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001,  // quiet NaNs, a signalling NaN
      0xFFBFFFFF, 0x00000001, 0x807FFFFF, 0x00800000,  // NaN, subnormals, FLT_MIN
      0x7F7FFFFF, 0xFF7FFFFF, 0x477FE000, 0x477FF000,  // FLT_MAX, 65504, 65520
      0x33800000, 0x33000000, 0x3F808000, 0x3F818000,  // 2^-24, 2^-25, bf16 ties
  };
  switch (rng() % 8) {
    case 0:
      return kSpecial[rng() % std::size(kSpecial)];
    case 1:
    case 2:
      return static_cast<uint32_t>(rng());  // any pattern
    case 3: {                               // a value near the fp16 range edges
      std::uniform_real_distribution<float> d(-70000.0f, 70000.0f);
      return bits(d(rng));
    }
    case 4: {  // near the fp16 subnormal range
      std::uniform_real_distribution<float> d(-1e-4f, 1e-4f);
      return bits(d(rng));
    }
    default: {  // ordinary magnitudes, so sums round
      std::uniform_real_distribution<float> d(-1000.0f, 1000.0f);
      return bits(d(rng));
    }
  }
}

inline uint16_t random_half_bits(DType t, std::mt19937_64& rng) {
  static constexpr uint16_t kFp16Special[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
                                              0xFE00, 0x7FFF, 0x0001, 0x8001, 0x03FF, 0x0400,
                                              0x7BFF, 0xFBFF, 0x3C00, 0xBC00};
  static constexpr uint16_t kBf16Special[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x7F81,
                                              0xFFC0, 0x7FFF, 0x0001, 0x8001, 0x007F, 0x0080,
                                              0x7F7F, 0xFF7F, 0x3F80, 0xBF80};
  const bool fp16 = t == DType::kFp16;
  switch (rng() % 8) {
    case 0:
      return fp16 ? kFp16Special[rng() % std::size(kFp16Special)]
                  : kBf16Special[rng() % std::size(kBf16Special)];
    case 1:
    case 2:
      return static_cast<uint16_t>(rng());
    default: {
      // Ordinary magnitudes: sign, a mid-range exponent, random mantissa.
      const uint16_t sign = (rng() & 1) ? 0x8000 : 0;
      const uint16_t mid = fp16 ? static_cast<uint16_t>((10 + rng() % 12) << 10)
                                : static_cast<uint16_t>((120 + rng() % 16) << 7);
      const uint16_t man = static_cast<uint16_t>(rng() & (fp16 ? 0x3FF : 0x7F));
      return sign | mid | man;
    }
  }
}

inline bool is_fp8(DType t) { return t == DType::kFp8E4M3 || t == DType::kFp8E5M2; }

// A wire byte of int8 or fp8: any pattern (all 256 are meaningful), or a special one.
inline uint8_t random_byte_element(DType t, std::mt19937_64& rng) {
  static constexpr uint8_t kInt8Special[] = {0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF};
  static constexpr uint8_t kE4M3Special[] = {0x00, 0x80, 0x7F, 0xFF, 0x7E, 0xFE,
                                             0x01, 0x81, 0x07, 0x08, 0x38, 0xB8};
  static constexpr uint8_t kE5M2Special[] = {0x00, 0x80, 0x7C, 0xFC, 0x7E, 0x7D, 0xFF,
                                             0x7B, 0xFB, 0x01, 0x03, 0x04, 0x3C, 0xBC};
  if (rng() % 4 != 0) return static_cast<uint8_t>(rng());
  if (t == DType::kInt8) return kInt8Special[rng() % std::size(kInt8Special)];
  if (t == DType::kFp8E4M3) return kE4M3Special[rng() % std::size(kE4M3Special)];
  return kE5M2Special[rng() % std::size(kE5M2Special)];
}

// A binary32 accumulator value for an fp8 type: near its range, its subnormal
// range, on and next to its rounding midpoints and overflow thresholds.
inline uint32_t random_fp8_acc_bits(DType t, std::mt19937_64& rng) {
  static constexpr uint32_t kSpecial[] = {
      0x43E00000, 0x43E80000, 0x43E80001, 0x43E7FFFF,  // 448, 464 (E4M3 tie), 464 +- ulp
      0x43F00000, 0x47600000, 0x47700000, 0x476FFFFF,  // 480, 57344, 61440 (E5M2 tie), below
      0x3A800000, 0x3A000000, 0x3AC00000, 0x3B000000,  // 2^-10, 2^-11, 1.5 * 2^-9, 2^-9
      0x37800000, 0x37000000, 0x37C00000, 0x38800000,  // 2^-16, 2^-17, 1.5 * 2^-16, 2^-14
      0x3C800000, 0x3C7FFFFF, 0x3F880000, 0x3F900000,  // 2^-6, below, 1 + 2^-4, 1 + 2^-3
      0x3FA00000, 0x3FB00000, 0x7F800000, 0x7FC00001,  // 1.25, 1.375, inf, a NaN
  };
  const uint32_t sign = (rng() & 1) ? 0x80000000u : 0;
  switch (rng() % 6) {
    case 0:
      return sign | kSpecial[rng() % std::size(kSpecial)];
    case 1:
      return static_cast<uint32_t>(rng());
    case 2: {  // an fp8-representable magnitude, or a midpoint, plus -1, 0 or +1 ulp
      const int drop = t == DType::kFp8E4M3 ? 20 : 21;
      const uint32_t exp = t == DType::kFp8E4M3 ? 110 + rng() % 30 : 95 + rng() % 50;
      const uint32_t kept = static_cast<uint32_t>(rng()) & ((1u << (23 - drop)) - 1);
      const uint32_t mid = (rng() & 1) ? (1u << (drop - 1)) : 0;
      const uint32_t b = (exp << 23) | (kept << drop) | mid;
      return sign | (b + static_cast<uint32_t>(static_cast<int>(rng() % 3) - 1));
    }
    default: {  // ordinary magnitudes within the format's range
      std::uniform_real_distribution<float> d(t == DType::kFp8E4M3 ? -500.0f : -70000.0f,
                                              t == DType::kFp8E4M3 ? 500.0f : 70000.0f);
      return bits(d(rng));
    }
  }
}

inline uint32_t random_int32_bits(std::mt19937_64& rng) {
  static constexpr uint32_t kSpecial[] = {0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x80000001};
  if (rng() % 8 == 0) return kSpecial[rng() % std::size(kSpecial)];
  return static_cast<uint32_t>(rng());
}

// n random wire elements of type t, as bytes.
inline std::vector<uint8_t> random_wire(DType t, size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> out(n * wire_bytes(t));
  for (size_t i = 0; i < n; ++i) {
    if (wire_bytes(t) == 1) {
      out[i] = random_byte_element(t, rng);
    } else if (t == DType::kInt32 || t == DType::kFp32) {
      const uint32_t b = t == DType::kInt32 ? random_int32_bits(rng) : random_fp32_bits(rng);
      std::memcpy(out.data() + 4 * i, &b, 4);
    } else {
      const uint16_t b = random_half_bits(t, rng);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
  }
  return out;
}

// n random accumulator elements for type t (any bits: kernels must agree with
// the reference even on patterns load/combine never write).
inline std::vector<uint8_t> random_acc(DType t, size_t n, std::mt19937_64& rng) {
  if (t == DType::kInt8) return random_wire(t, n, rng);  // int8_t accumulators
  std::vector<uint8_t> out(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t b = t == DType::kInt32 ? random_int32_bits(rng)
                       : is_fp8(t)        ? random_fp8_acc_bits(t, rng)
                                          : random_fp32_bits(rng);
    std::memcpy(out.data() + 4 * i, &b, 4);
  }
  return out;
}

}  // namespace epic::arith::test
