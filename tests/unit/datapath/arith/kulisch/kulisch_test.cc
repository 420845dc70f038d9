// KULISCH_FIXED (datapath/arith/kulisch.h) on its own: the sideband canonicalisation on values
// worked out by hand, the AUTO form each state travels in and its byte length
// (vocab::partial_bytes), every malformed partial refused without touching the accumulator,
// and random trees of partials giving the bits of one flat accumulator. (The exact reference in
// Python, adversarial inputs and loss: tests/harness/exact_sum_test.cc, through the engine.)
#include "datapath/arith/kulisch.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "datapath/arith/kulisch_layout.h"

namespace epic::arith::kulisch {
namespace {

using vocab::DType;
using vocab::PartialForm;
using Bytes = std::vector<uint8_t>;

Bytes f32(std::initializer_list<uint32_t> bits) {
  Bytes b(bits.size() * 4);
  size_t k = 0;
  for (uint32_t x : bits) std::memcpy(b.data() + 4 * k++, &x, 4);
  return b;
}

// The sum of `contributions` (each n elements of t) rounded once.
Bytes sum(DType t, uint32_t R, const std::vector<Bytes>& contributions) {
  const size_t n = contributions[0].size() / vocab::wire_bytes(t);
  Bytes acc(accum_bytes(t, R, n)), out(contributions[0].size());
  load(t, R, acc.data(), contributions[0].data(), n);
  for (size_t k = 1; k < contributions.size(); ++k)
    deposit(t, R, acc.data(), contributions[k].data(), n);
  store(t, R, out.data(), acc.data(), n);
  return out;
}

TEST(Kulisch, SpecialValuesAndZerosAreCanonical) {
  const uint32_t kNan = 0x7FC00000, kInf = 0x7F800000, kMax = 0x7F7FFFFF;
  // NaN with payload; +inf and -inf; +inf; -0 + -0; -0 + +0; 1 + -1; max + max; -max - max.
  const Bytes a =
      f32({0x7FA00001, kInf, kInf, 0x80000000, 0x80000000, 0x3F800000, kMax, 0xFF7FFFFF});
  const Bytes b = f32(
      {0x3F800000, 0xFF800000, 0x3F800000, 0x80000000, 0x00000000, 0xBF800000, kMax, 0xFF7FFFFF});
  EXPECT_EQ(sum(DType::kFp32, 2, {a, b}),
            f32({kNan, kNan, kInf, 0x80000000, 0, 0, kInf, 0xFF800000}));
  EXPECT_EQ(sum(DType::kFp32, 2, {b, a}),
            f32({kNan, kNan, kInf, 0x80000000, 0, 0, kInf, 0xFF800000}));
  // E4M3 has no infinity: 448 + 448 overflows to its NaN, 448 + 16 = 464 ties to 448.
  EXPECT_EQ(sum(DType::kFp8E4M3, 2, {{0x7E, 0x7E, 0x01}, {0x7E, 0x58, 0x81}}),
            (Bytes{0x7F, 0x7E, 0x00}));
  // fp16 2048 + 1 + 1 = 2050 exactly; 65504 + 65504 - 65504 = 65504.
  EXPECT_EQ(sum(DType::kFp16, 3,
                {{0x00, 0x68, 0xFF, 0x7B}, {0x00, 0x3C, 0xFF, 0x7B}, {0x00, 0x3C, 0xFF, 0xFB}}),
            (Bytes{0x01, 0x68, 0xFF, 0x7B}));
}

TEST(KulischPartial, AutoPicksTheNarrowestLosslessFormAndRoundTrips) {
  struct Row {
    const char* what;
    std::vector<Bytes> in;
    PartialForm form;
    bool flags;
  };
  const std::vector<Row> rows = {
      {"fp32 values: plain",
       {f32({0x3F800000, 0x40000000}), f32({0x3F800000, 0xC0000000})},
       PartialForm::kPlain,
       false},
      {"1 + 2^-25: fixed64",
       {f32({0x3F800000, 0}), f32({0x33000000, 0})},
       PartialForm::kFixed64,
       false},
      {"2^127 + 2^-149: wide",
       {f32({0x7F000000, 0}), f32({0x00000001, 0})},
       PartialForm::kWide,
       false},
      {"-0 and 2^127 + 2^-149: wide with flags",
       {f32({0x7F000000, 0x80000000}), f32({0x00000001, 0x80000000})},
       PartialForm::kWide,
       true},
      {"+inf and 1 + 2^-25: fixed64 with flags",
       {f32({0x3F800000, 0x7F800000}), f32({0x33000000, 0})},
       PartialForm::kFixed64,
       true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    const uint32_t R = 4;
    const size_t n = 2;
    Bytes acc(accum_bytes(DType::kFp32, R, n));
    load(DType::kFp32, R, acc.data(), row.in[0].data(), n);
    deposit(DType::kFp32, R, acc.data(), row.in[1].data(), n);
    Bytes out(vocab::max_partial_bytes(256, DType::kFp32, R));
    const size_t len = encode_partial(DType::kFp32, R, acc.data(), n, out.data(), out.size());
    ASSERT_GT(len, 0u);
    EXPECT_EQ(out[1], static_cast<uint8_t>(row.form));
    EXPECT_EQ(out[3], row.flags ? 1 : 0);
    EXPECT_EQ(len, vocab::partial_bytes(row.form, DType::kFp32, n, R, row.flags));
    EXPECT_EQ(partial_elements(DType::kFp32, out.data(), len), 2);
    Bytes copy(acc.size(), 0x77);
    ASSERT_TRUE(merge_partial(DType::kFp32, R, copy.data(), n, out.data(), len, true));
    Bytes a(8), b(8);
    store(DType::kFp32, R, a.data(), acc.data(), n);
    store(DType::kFp32, R, b.data(), copy.data(), n);
    EXPECT_EQ(a, b);
    EXPECT_EQ(encode_partial(DType::kFp32, R, acc.data(), n, out.data(), len - 1), 0u) << "cap";
  }
}

TEST(KulischPartial, AMalformedPartialIsRefusedAndChangesNothing) {
  const uint32_t R = 4;
  const size_t n = 2;
  Bytes acc(accum_bytes(DType::kFp32, R, n));
  load(DType::kFp32, R, acc.data(), f32({0x7F000000, 0x3F800000}).data(), n);
  deposit(DType::kFp32, R, acc.data(), f32({0x00000001, 0x80000000}).data(), n);
  Bytes wide(vocab::max_partial_bytes(256, DType::kFp32, R));
  wide.resize(encode_partial(DType::kFp32, R, acc.data(), n, wide.data(), wide.size()));
  ASSERT_EQ(wide[1], static_cast<uint8_t>(PartialForm::kWide));
  Bytes fixed(vocab::max_partial_bytes(256, DType::kFp32, R));
  Bytes small(accum_bytes(DType::kFp32, R, n));
  load(DType::kFp32, R, small.data(), f32({0x3F800000, 0x3F800000}).data(), n);
  deposit(DType::kFp32, R, small.data(), f32({0x33000000, 0}).data(), n);
  fixed.resize(encode_partial(DType::kFp32, R, small.data(), n, fixed.data(), fixed.size()));
  ASSERT_EQ(fixed[1], static_cast<uint8_t>(PartialForm::kFixed64));
  std::vector<std::pair<const char*, Bytes>> bad;
  auto edit = [&](const char* what, Bytes b, size_t at, uint8_t v) {
    b[at] = v;
    bad.push_back({what, b});
  };
  bad.push_back({"truncated", Bytes(wide.begin(), wide.end() - 1)});
  bad.push_back({"one byte too many", [&] {
                   Bytes b = wide;
                   b.push_back(0);
                   return b;
                 }()});
  bad.push_back({"header only", Bytes(wide.begin(), wide.begin() + 8)});
  edit("magic", wide, 0, 0xE4);
  edit("form 0", wide, 1, 0);
  edit("form 4", wide, 1, 4);
  edit("dtype fp16", wide, 2, static_cast<uint8_t>(DType::kFp16));
  edit("unknown header flag", wide, 3, 3);
  edit("element count 3", wide, 4, 3);
  edit("wide with a scale", wide, 6, 1);
  edit("scale beyond the width", fixed, 7, 0x01);
  edit("negative scale", fixed, 7, 0x80);
  {  // a kWide digit above the width W = 281 bits: digit 8 holds bits 256..287
    Bytes b = wide;
    b[8 + 8 * 4 + 3] = 0x40;
    bad.push_back({"digit beyond the width", b});
  }
  {  // kFixed64 INT64_MIN
    Bytes b = fixed;
    const int64_t m = INT64_MIN;
    std::memcpy(b.data() + 8, &m, 8);
    bad.push_back({"INT64_MIN", b});
  }
  {  // a flags section byte with an unknown bit
    Bytes z(accum_bytes(DType::kFp32, R, n));
    load(DType::kFp32, R, z.data(), f32({0x7F000000, 0x80000000}).data(), n);
    deposit(DType::kFp32, R, z.data(), f32({0x00000001, 0x80000000}).data(), n);
    Bytes b(vocab::max_partial_bytes(256, DType::kFp32, R));
    b.resize(encode_partial(DType::kFp32, R, z.data(), n, b.data(), b.size()));
    ASSERT_EQ(b[3], 1) << "a flags section";
    b.back() = 0x10;
    bad.push_back({"unknown flag bit", b});
  }
  for (const auto& [what, b] : bad) {
    SCOPED_TRACE(what);
    for (bool first : {false, true}) {
      Bytes target(accum_bytes(DType::kFp32, R, n));
      load(DType::kFp32, R, target.data(), f32({0x3F800000, 0x40000000}).data(), n);
      const Bytes before = target;
      EXPECT_FALSE(merge_partial(DType::kFp32, R, target.data(), n, b.data(), b.size(), first));
      EXPECT_EQ(target, before);
    }
  }
}

// Random bit patterns (every class: NaN, infinities, zeros, subnormals, normals) over random
// trees of partials give the bits of one flat accumulator, for every float type.
TEST(KulischPartial, RandomTreesOfPartialsGiveTheFlatBits) {
  std::mt19937_64 rng(2026);
  for (DType t : {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E5M2, DType::kFp8E4M3}) {
    SCOPED_TRACE(std::string(vocab::to_string(t)));
    const size_t w = vocab::wire_bytes(t);
    for (int trial = 0; trial < 200; ++trial) {
      const auto R = static_cast<uint32_t>(2 + rng() % 12);
      const size_t n = 1 + rng() % 40;
      std::vector<Bytes> in(R, Bytes(n * w));
      for (Bytes& b : in) {
        for (size_t i = 0; i < n; ++i) {
          // Mostly finite values near one binade, sometimes anything.
          uint32_t x = static_cast<uint32_t>(rng());
          if (rng() % 4 != 0 && w == 4) x = (x & 0x803FFFFF) | 0x3F000000;
          std::memcpy(b.data() + i * w, &x, w);
        }
      }
      const Bytes flat = sum(t, R, in);
      // A random tree: contributions split into groups, each group a switch whose partial its
      // parent merges (in a random order, first or not) with a random number of raw ones.
      std::vector<size_t> order(R);
      for (size_t k = 0; k < R; ++k) order[k] = k;
      std::shuffle(order.begin(), order.end(), rng);
      const size_t split = 1 + rng() % (R - 1);
      Bytes lower(accum_bytes(t, R, n));
      load(t, R, lower.data(), in[order[0]].data(), n);
      for (size_t k = 1; k < split; ++k) deposit(t, R, lower.data(), in[order[k]].data(), n);
      Bytes partial(vocab::max_partial_bytes(static_cast<uint32_t>(n * w), t, R) + 64);
      const size_t len = encode_partial(t, R, lower.data(), n, partial.data(), partial.size());
      ASSERT_GT(len, 0u);
      Bytes upper(accum_bytes(t, R, n));
      const bool partial_first = rng() % 2 == 0;
      size_t k = split;
      if (partial_first) {
        ASSERT_TRUE(merge_partial(t, R, upper.data(), n, partial.data(), len, true));
      } else {
        load(t, R, upper.data(), in[order[k++]].data(), n);
      }
      for (; k < R; ++k) deposit(t, R, upper.data(), in[order[k]].data(), n);
      if (!partial_first) {
        ASSERT_TRUE(merge_partial(t, R, upper.data(), n, partial.data(), len, false));
      }
      Bytes got(n * w);
      store(t, R, got.data(), upper.data(), n);
      ASSERT_EQ(got, flat) << "trial " << trial << " R " << R << " n " << n;
    }
  }
}

// The vector deposits (AVX-512, where the CPU has it) write the portable loop's bytes, for every
// length, every bit pattern, both E4M3 layouts, without touching a byte past the accumulator.
TEST(KulischDeposit, VectorAndPortableWriteTheSameBytes) {
  if (!detail::avx512_deposits()) GTEST_SKIP() << "no AVX-512 deposits on this CPU or ISA cap";
  std::mt19937_64 rng(7);
  for (DType t : {DType::kFp16, DType::kFp8E5M2, DType::kFp8E4M3}) {
    for (uint32_t R : {4u, 9000u}) {
      const size_t w = vocab::wire_bytes(t);
      for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{15}, size_t{16}, size_t{17},
                       size_t{33}, size_t{70}, 1024 / w}) {
        SCOPED_TRACE(std::string(vocab::to_string(t)) + " R " + std::to_string(R) + " n " +
                     std::to_string(n));
        const size_t bytes = accum_bytes(t, R, n);
        Bytes a(bytes + 64, 0xC3), b(bytes + 64, 0xC3);
        for (int k = 0; k < 5; ++k) {
          Bytes in(n * w + 1);
          for (uint8_t& x : in) x = static_cast<uint8_t>(rng());
          deposit(t, R, a.data(), in.data(), n);
          detail::deposit_portable(t, R, b.data(), in.data(), n);
          ASSERT_EQ(a, b) << "contribution " << k;
        }
        for (size_t g = bytes; g < a.size(); ++g) ASSERT_EQ(a[g], 0xC3) << "guard byte " << g;
      }
    }
  }
}

}  // namespace
}  // namespace epic::arith::kulisch
