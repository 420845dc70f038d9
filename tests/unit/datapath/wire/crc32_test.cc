#include "datapath/wire/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

namespace epic::wire {
namespace {

TEST(Crc32, CheckValueOf123456789) {
  const char* s = "123456789";
  EXPECT_EQ(crc32_update(0, reinterpret_cast<const uint8_t*>(s), 9), 0xCBF43926u);
}

// zlib is an independent implementation of the same CRC.
TEST(Crc32, AgreesWithZlibOnRandomBuffers) {
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(9000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t len : {0, 1, 3, 15, 16, 17, 63, 64, 65, 255, 1024, 4099, 9000}) {
    for (size_t start : {0, 1, 5}) {
      if (start + len > buf.size()) continue;
      EXPECT_EQ(crc32_update(0, buf.data() + start, len),
                crc32(0, buf.data() + start, static_cast<uInt>(len)))
          << "len " << len << " start " << start;
    }
  }
}

TEST(Crc32, ChainingEqualsOnePass) {
  std::vector<uint8_t> buf(3000);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 7);
  const uint32_t whole = crc32_update(0, buf.data(), buf.size());
  for (size_t cut : {0, 1, 68, 1500, 2999, 3000}) {
    const uint32_t a = crc32_update(0, buf.data(), cut);
    EXPECT_EQ(crc32_update(a, buf.data() + cut, buf.size() - cut), whole) << "cut " << cut;
  }
}

}  // namespace
}  // namespace epic::wire
