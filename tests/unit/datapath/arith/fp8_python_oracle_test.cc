// fp8 conversions against an oracle we did not write in C++:
// fp8_python_oracle.py decodes the 256 patterns of each OCP format with
// fractions.Fraction and rounds binary32 values to the nearest decoded value
// with an exact integer comparison and an explicit ties-to-even rule. It
// produced the CRC-32s below (python 3.11.2) over exactly the element streams
// built here; run it again to re-derive them. Checked on the reference and on
// every kernel table this CPU runs.
#include <gtest/gtest.h>
#include <zlib.h>

#include <vector>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kernels.h"

namespace epic::arith {
namespace {

struct Oracle {
  DType t;
  int drop;  // binary32 mantissa bits the format drops at normal magnitudes
  uint32_t widen_crc;
  uint32_t midpoints_crc;
  size_t midpoints_count;
  uint32_t dense_crc;
  size_t dense_count;
};
constexpr Oracle kOracles[] = {
    {DType::kFp8E4M3, 20, 0x2FDEE9AC, 0xA442E071, 57344, 0x6B9AF962, 2097152},
    {DType::kFp8E5M2, 21, 0x3D83FD11, 0xA724A141, 28672, 0xAEF1198A, 2097152},
};

uint32_t crc(const std::vector<uint8_t>& bytes) {
  return static_cast<uint32_t>(::crc32(0, bytes.data(), static_cast<uInt>(bytes.size())));
}

// The python script's low_bits(drop): on, next to and at each midpoint, and every eighth.
std::vector<uint32_t> low_bits(int drop) {
  const uint32_t full = 1u << drop, half = full >> 1, eighth = full >> 3;
  return {0,    1,        2,          eighth,     2 * eighth, 3 * eighth, half - 1,
          half, half + 1, 5 * eighth, 6 * eighth, 7 * eighth, full - 2,   full - 1};
}

std::vector<uint32_t> midpoint_inputs(int drop) {
  std::vector<uint32_t> out;
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t hi = 0; hi < (1u << (31 - drop)); ++hi)
      for (uint32_t lo : low_bits(drop)) out.push_back((sign << 31) | (hi << drop) | lo);
  return out;
}

std::vector<uint32_t> dense_inputs() {
  std::vector<uint32_t> out;
  for (uint32_t hi = 0; hi < (1u << 20); ++hi)
    for (uint32_t lo : {0u, 0xFFFu}) out.push_back((hi << 12) | lo);
  return out;
}

// The tables to check: the reference and every one this CPU runs.
std::vector<const Kernels*> tables() {
  std::vector<const Kernels*> out;
  for (Isa isa : {Isa::kReference, Isa::kPortable, Isa::kAvx2, Isa::kAvx512})
    if (const Kernels* k = kernels_for(isa)) out.push_back(k);
  return out;
}

std::vector<uint8_t> stored(const Kernels& k, DType t, const std::vector<uint32_t>& acc) {
  std::vector<uint8_t> wire(acc.size());
  store(k, t, wire.data(), reinterpret_cast<const uint8_t*>(acc.data()), acc.size());
  return wire;
}

TEST(Fp8PythonOracle, WideningOfEveryPatternMatchesFractionDecoding) {
  std::vector<uint8_t> wire(256);
  for (uint32_t b = 0; b < 256; ++b) wire[b] = static_cast<uint8_t>(b);
  for (const Oracle& o : kOracles)
    for (const Kernels* k : tables()) {
      std::vector<uint8_t> acc(4 * 256);
      load(*k, o.t, acc.data(), wire.data(), 256);
      EXPECT_EQ(crc(acc), o.widen_crc) << to_string(o.t) << " " << to_string(k->isa);
    }
}

TEST(Fp8PythonOracle, NarrowingAtEveryMidpointMatchesExactRounding) {
  for (const Oracle& o : kOracles) {
    const auto acc = midpoint_inputs(o.drop);
    ASSERT_EQ(acc.size(), o.midpoints_count);
    for (const Kernels* k : tables())
      EXPECT_EQ(crc(stored(*k, o.t, acc)), o.midpoints_crc)
          << to_string(o.t) << " " << to_string(k->isa);
  }
}

TEST(Fp8PythonOracle, NarrowingOfDenseBinary32PatternsMatchesExactRounding) {
  const auto acc = dense_inputs();
  for (const Oracle& o : kOracles) {
    ASSERT_EQ(acc.size(), o.dense_count);
    for (const Kernels* k : tables())
      EXPECT_EQ(crc(stored(*k, o.t, acc)), o.dense_crc)
          << to_string(o.t) << " " << to_string(k->isa);
  }
}

}  // namespace
}  // namespace epic::arith
