#include "datapath/wire/crc32_combine.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

#include "datapath/wire/crc32.h"

namespace epic::wire {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// The CRC of A‖B from the CRCs of A and B, for every length of B a frame can have after its
// headers and then some (the tables end at 16384; beyond, the squaring path).
TEST(Crc32Combine, EqualsTheCrcOfTheConcatenation) {
  const auto buf = random_bytes(20000, 1);
  const uint32_t a = crc32_update(0, buf.data(), 68);
  for (size_t len = 0; len <= 9100; ++len) {
    const uint32_t b = crc32_update(0, buf.data() + 68, len);
    ASSERT_EQ(wire::crc32_combine(a, b, len), crc32_update(0, buf.data(), 68 + len))
        << "len " << len;
  }
  for (size_t len : {16383, 16384, 16385, 19000, 19932}) {
    const uint32_t b = crc32_update(0, buf.data() + 68, len);
    EXPECT_EQ(wire::crc32_combine(a, b, len), crc32_update(0, buf.data(), 68 + len))
        << "len " << len;
  }
}

// zlib is an independent implementation of the same combination.
TEST(Crc32Combine, AgreesWithZlib) {
  std::mt19937 rng(2);
  for (int i = 0; i < 2000; ++i) {
    const uint32_t c1 = rng(), c2 = rng();
    const size_t len = rng() % 70000;
    EXPECT_EQ(wire::crc32_combine(c1, c2, len), ::crc32_combine(c1, c2, static_cast<z_off_t>(len)))
        << "len " << len;
    EXPECT_EQ(crc32_x8n(len), ::crc32_combine_gen(static_cast<z_off_t>(len))) << "len " << len;
  }
}

// Crc32Shift moves a register over n zero bytes: the linear part of the CRC register, as
// crc32_update sees it started from a zero register (argument ~0).
TEST(Crc32Shift, MovesARegisterOverZeroBytes) {
  const std::vector<uint8_t> zeros(5000, 0);
  std::mt19937 rng(3);
  for (size_t n = 0; n <= zeros.size(); n += 1 + n / 64) {
    const Crc32Shift shift(n);
    for (int i = 0; i < 4; ++i) {
      const uint32_t reg = rng();
      const uint32_t moved = ~crc32_update(~reg, zeros.data(), n);
      ASSERT_EQ(shift.apply(reg), moved) << "n " << n;
    }
  }
}

TEST(Crc32Mul, IsAFieldProduct) {
  constexpr uint32_t kOne = 0x80000000u;
  std::mt19937 rng(4);
  for (int i = 0; i < 200; ++i) {
    const uint32_t a = rng(), b = rng(), c = rng();
    EXPECT_EQ(crc32_mul(a, kOne), a);
    EXPECT_EQ(crc32_mul(a, b), crc32_mul(b, a));
    EXPECT_EQ(crc32_mul(a, b ^ c), crc32_mul(a, b) ^ crc32_mul(a, c));
    EXPECT_EQ(crc32_mul(crc32_mul(a, b), c), crc32_mul(a, crc32_mul(b, c)));
  }
  EXPECT_EQ(crc32_x8n(0), kOne);
}

}  // namespace
}  // namespace epic::wire
