// fp16 conversion against an implementation we did not write: CPython's
// struct 'e' format (PyFloat_Pack2 / PyFloat_Unpack2). fp16_python_oracle.py
// produced the two CRC-32s below (python 3.11.2) over exactly the element
// streams built here; run it again to re-derive them.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <vector>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/element.h"

namespace epic::arith {
namespace {

constexpr uint32_t kPythonWidenCrc = 0x58A2254B;
constexpr uint32_t kPythonNarrowCrc = 0xC0B731BF;
constexpr size_t kPythonNarrowCount = 6266884;
constexpr uint32_t kLowBits[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF};

bool is_fp32_nan(uint32_t b) { return (b & 0x7F800000) == 0x7F800000 && (b & 0x007FFFFF) != 0; }
bool is_fp16_nan(uint32_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }

uint32_t crc(uint32_t c, const std::vector<uint8_t>& bytes) {
  return static_cast<uint32_t>(::crc32(c, bytes.data(), static_cast<uInt>(bytes.size())));
}

// Every non-NaN fp16 pattern, widened by reference::load, as python decodes it.
TEST(Fp16PythonOracle, WideningOfEveryPatternMatchesStructUnpack) {
  std::vector<uint8_t> wire;
  for (uint32_t h = 0; h < 65536; ++h) {
    if (is_fp16_nan(h)) continue;
    wire.push_back(static_cast<uint8_t>(h));
    wire.push_back(static_cast<uint8_t>(h >> 8));
  }
  const size_t n = wire.size() / 2;
  std::vector<uint8_t> acc(4 * n);
  reference::load(DType::kFp16, acc.data(), wire.data(), n);
  EXPECT_EQ(crc(0, acc), kPythonWidenCrc);
  std::vector<uint8_t> vec(4 * n);
  load(DType::kFp16, vec.data(), wire.data(), n);
  EXPECT_EQ(crc(0, vec), kPythonWidenCrc);
}

// fp32 patterns on, next to and at every fp16 rounding midpoint, both signs,
// rounded by reference::store, as python packs them.
TEST(Fp16PythonOracle, NarrowingAtEveryMidpointMatchesStructPack) {
  std::vector<uint32_t> acc;
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t hi = 0; hi < (1u << 19); ++hi)
      for (uint32_t lo : kLowBits) {
        const uint32_t b = (sign << 31) | (hi << 13) | lo;
        if (!is_fp32_nan(b)) acc.push_back(b);
      }
  ASSERT_EQ(acc.size(), kPythonNarrowCount);
  std::vector<uint8_t> wire(2 * acc.size());
  const auto* a = reinterpret_cast<const uint8_t*>(acc.data());
  reference::store(DType::kFp16, wire.data(), a, acc.size());
  EXPECT_EQ(crc(0, wire), kPythonNarrowCrc);
  store(DType::kFp16, wire.data(), a, acc.size());
  EXPECT_EQ(crc(0, wire), kPythonNarrowCrc);
}

}  // namespace
}  // namespace epic::arith
