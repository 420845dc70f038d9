#include "host/collective/inputs.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "datapath/arith/element.h"
#include "host/collective/layout.h"

namespace epic::host {

namespace {

// splitmix64's finaliser: decorrelates nearby (seed, index, rank) triples.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Largest integer magnitude below which every integer is exact in the float wire type
// (2^precision: 11 significand bits for fp16, 8 for bf16, 4 for E4M3, 3 for E5M2).
uint32_t exact_integer_limit(vocab::DType t) {
  switch (t) {
    case vocab::DType::kFp16:
      return 1u << 11;
    case vocab::DType::kBf16:
      return 1u << 8;
    case vocab::DType::kFp8E4M3:
      return 1u << 4;
    case vocab::DType::kFp8E5M2:
      return 1u << 3;
    default:
      return 1u << 24;
  }
}

// x, a small integer, in the float wire type t at p (wire_bytes(t) bytes).
void write_integer(vocab::DType t, float x, uint8_t* p) {
  namespace ref = arith::reference;
  switch (t) {
    case vocab::DType::kFp32:
      std::memcpy(p, &x, 4);
      return;
    case vocab::DType::kFp16:
    case vocab::DType::kBf16: {
      const uint16_t h = t == vocab::DType::kFp16 ? ref::narrow_fp16(x) : ref::narrow_bf16(x);
      std::memcpy(p, &h, 2);
      return;
    }
    case vocab::DType::kFp8E4M3:
      *p = ref::narrow_e4m3(x);
      return;
    case vocab::DType::kFp8E5M2:
      *p = ref::narrow_e5m2(x);
      return;
    case vocab::DType::kInt32:
    case vocab::DType::kInt8:
      return;  // integers are drawn as random bits (exact_input)
  }
}

}  // namespace

std::vector<uint8_t> exact_input(const vocab::CollectiveDescriptor& d, uint16_t ranks,
                                 uint64_t seed, uint64_t index, uint16_t rank) {
  std::mt19937_64 rng(mix(mix(mix(seed) ^ index) ^ rank));
  const size_t wb = vocab::wire_bytes(d.dtype);
  std::vector<uint8_t> out(send_bytes(d, ranks));
  const size_t n = out.size() / wb;
  if (d.dtype == vocab::DType::kInt32 || d.dtype == vocab::DType::kInt8) {
    // Integer sums wrap (modulo 2^32, 2^8): any bits are exact.
    for (size_t i = 0; i < n; ++i) {
      const auto y = static_cast<uint32_t>(rng());
      std::memcpy(out.data() + i * wb, &y, wb);
    }
    return out;
  }
  // E4M3's largest finite value is 448: min/max inputs stay finite.
  int32_t bound = d.dtype == vocab::DType::kFp8E4M3 ? 448 : 1024;
  if (d.op == vocab::ReduceOp::kSum) {
    const uint32_t limit = exact_integer_limit(d.dtype);
    bound = static_cast<int32_t>(std::min<uint32_t>(8, limit / std::max<uint16_t>(ranks, 1)));
    if (bound == 0) bound = rank < limit ? 1 : 0;
  }
  const uint64_t span = 2 * static_cast<uint64_t>(bound) + 1;
  for (size_t i = 0; i < n; ++i) {
    const auto x = static_cast<float>(static_cast<int32_t>(rng() % span) - bound);
    write_integer(d.dtype, x, out.data() + i * wb);
  }
  return out;
}

std::vector<std::vector<uint8_t>> exact_inputs(const vocab::CollectiveDescriptor& d, uint16_t ranks,
                                               uint64_t seed, uint64_t index) {
  std::vector<std::vector<uint8_t>> in;
  in.reserve(ranks);
  for (uint16_t r = 0; r < ranks; ++r) in.push_back(exact_input(d, ranks, seed, index, r));
  return in;
}

}  // namespace epic::host
