// Every kernel table (portable, AVX2, AVX-512) equals the reference bit for bit: all
// types and operators, lengths 0..4099 (every ragged tail), unaligned
// pointers, and nothing written outside the n elements.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kernels.h"
#include "tests/unit/datapath/arith/arith_test_util.h"

namespace epic::arith {
namespace {

using test::GuardedBuffer;

constexpr DType kTypes[] = {DType::kInt32, DType::kFp32,    DType::kFp16,   DType::kBf16,
                            DType::kInt8,  DType::kFp8E4M3, DType::kFp8E5M2};
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax};

std::vector<size_t> lengths() {
  std::vector<size_t> n;
  for (size_t i = 0; i <= 70; ++i) n.push_back(i);
  for (size_t base : {128, 256, 512, 1024, 2048, 4096})
    for (size_t d : {base - 1, base, base + 1}) n.push_back(d);
  n.push_back(4099);
  return n;
}

// (acc offset, wire offset) from a 64-byte boundary.
constexpr std::pair<size_t, size_t> kOffsets[] = {{0, 0}, {1, 3}, {2, 1}, {3, 2}, {4, 60}};

class KernelsMatchReference : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    kernels_ = kernels_for(GetParam());
    if (kernels_ == nullptr) GTEST_SKIP() << "this CPU lacks " << to_string(GetParam());
  }
  const Kernels* kernels_ = nullptr;
  std::mt19937_64 rng_{0xA217};
};

TEST_P(KernelsMatchReference, LoadBitForBit) {
  for (DType t : kTypes)
    for (size_t n : lengths())
      for (auto [acc_off, wire_off] : kOffsets) {
        const auto wire_bytes_in = test::random_wire(t, n, rng_);
        GuardedBuffer wire(wire_bytes_in.size(), wire_off), got(accum_bytes(t) * n, acc_off);
        wire.fill(wire_bytes_in);
        std::vector<uint8_t> want(accum_bytes(t) * n);
        reference::load(t, want.data(), wire_bytes_in.data(), n);
        load(*kernels_, t, got.data(), wire.data(), n);
        ASSERT_EQ(got.bytes(), want) << to_string(t) << " n=" << n << " off=" << acc_off;
        ASSERT_TRUE(got.intact()) << to_string(t) << " n=" << n;
        ASSERT_EQ(wire.bytes(), wire_bytes_in);
      }
}

TEST_P(KernelsMatchReference, CombineBitForBit) {
  for (DType t : kTypes)
    for (ReduceOp op : kOps)
      for (size_t n : lengths())
        for (auto [acc_off, wire_off] : kOffsets) {
          const auto acc_in = test::random_acc(t, n, rng_);
          const auto wire_in = test::random_wire(t, n, rng_);
          GuardedBuffer wire(wire_in.size(), wire_off), got(acc_in.size(), acc_off);
          wire.fill(wire_in);
          got.fill(acc_in);
          auto want = acc_in;
          reference::combine(t, op, want.data(), wire_in.data(), n);
          combine(*kernels_, t, op, got.data(), wire.data(), n);
          ASSERT_EQ(got.bytes(), want) << to_string(t) << " " << to_string(op) << " n=" << n;
          ASSERT_TRUE(got.intact()) << to_string(t) << " " << to_string(op) << " n=" << n;
          ASSERT_EQ(wire.bytes(), wire_in);
        }
}

TEST_P(KernelsMatchReference, StoreBitForBit) {
  for (DType t : kTypes)
    for (size_t n : lengths())
      for (auto [acc_off, wire_off] : kOffsets) {
        const auto acc_in = test::random_acc(t, n, rng_);
        GuardedBuffer acc(acc_in.size(), acc_off), got(n * wire_bytes(t), wire_off);
        acc.fill(acc_in);
        std::vector<uint8_t> want(n * wire_bytes(t));
        reference::store(t, want.data(), acc_in.data(), n);
        store(*kernels_, t, got.data(), acc.data(), n);
        ASSERT_EQ(got.bytes(), want) << to_string(t) << " n=" << n;
        ASSERT_TRUE(got.intact()) << to_string(t) << " n=" << n;
        ASSERT_EQ(acc.bytes(), acc_in);
      }
}

// A slot's life: load the first contribution, combine seven more in arrival
// order, store the result.
TEST_P(KernelsMatchReference, SlotLifetimeBitForBit) {
  constexpr size_t kN = 1031;
  for (DType t : kTypes)
    for (ReduceOp op : kOps) {
      std::vector<std::vector<uint8_t>> contributions;
      for (int c = 0; c < 8; ++c) contributions.push_back(test::random_wire(t, kN, rng_));
      std::vector<uint8_t> acc_got(accum_bytes(t) * kN), acc_want(accum_bytes(t) * kN);
      std::vector<uint8_t> out_got(kN * wire_bytes(t)), out_want(kN * wire_bytes(t));
      load(*kernels_, t, acc_got.data(), contributions[0].data(), kN);
      reference::load(t, acc_want.data(), contributions[0].data(), kN);
      for (int c = 1; c < 8; ++c) {
        combine(*kernels_, t, op, acc_got.data(), contributions[c].data(), kN);
        reference::combine(t, op, acc_want.data(), contributions[c].data(), kN);
      }
      store(*kernels_, t, out_got.data(), acc_got.data(), kN);
      reference::store(t, out_want.data(), acc_want.data(), kN);
      EXPECT_EQ(acc_got, acc_want) << to_string(t) << " " << to_string(op);
      EXPECT_EQ(out_got, out_want) << to_string(t) << " " << to_string(op);
    }
}

// fp16 widening, every one of the 65536 patterns (the kernels convert with
// F16C, the reference with exact double arithmetic).
TEST_P(KernelsMatchReference, Fp16LoadOfEveryPattern) {
  std::vector<uint8_t> wire(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto v = static_cast<uint16_t>(h);
    std::memcpy(wire.data() + 2 * h, &v, 2);
  }
  std::vector<uint8_t> got(4 * 65536), want(4 * 65536);
  load(*kernels_, DType::kFp16, got.data(), wire.data(), 65536);
  reference::load(DType::kFp16, want.data(), wire.data(), 65536);
  for (uint32_t h = 0; h < 65536; ++h)
    ASSERT_EQ(std::memcmp(got.data() + 4 * h, want.data() + 4 * h, 4), 0)
        << "fp16 0x" << std::hex << h;
}

// fp8 widening, every one of the 256 patterns of each format.
TEST_P(KernelsMatchReference, Fp8LoadOfEveryPattern) {
  for (DType t : {DType::kFp8E4M3, DType::kFp8E5M2}) {
    std::vector<uint8_t> wire(256);
    for (uint32_t b = 0; b < 256; ++b) wire[b] = static_cast<uint8_t>(b);
    std::vector<uint8_t> got(4 * 256), want(4 * 256);
    load(*kernels_, t, got.data(), wire.data(), 256);
    reference::load(t, want.data(), wire.data(), 256);
    for (uint32_t b = 0; b < 256; ++b)
      ASSERT_EQ(std::memcmp(got.data() + 4 * b, want.data() + 4 * b, 4), 0)
          << to_string(t) << " 0x" << std::hex << b;
  }
}

// Narrowing of fp32 patterns placed on, just below and just above every
// rounding midpoint of the target format, over the whole fp32 range. For fp8,
// also at every eighth of the dropped bits (points between the midpoints).
void expect_store_matches_at_midpoints(const Kernels& k, DType t) {
  const int drop = t == DType::kFp16      ? 13  // fp32 mantissa bits the format drops
                   : t == DType::kBf16    ? 16
                   : t == DType::kFp8E4M3 ? 20
                                          : 21;
  const uint32_t half = 1u << (drop - 1);
  std::vector<uint32_t> lows = {0, 1, half - 1, half, half + 1, (1u << drop) - 1};
  if (wire_bytes(t) == 1)
    for (uint32_t e = 1; e < 8; ++e) lows.push_back(e << (drop - 3));
  const uint32_t highs = 1u << (32 - drop);
  std::vector<uint32_t> acc;
  acc.reserve(size_t{highs} * lows.size());
  for (uint32_t hi = 0; hi < highs; ++hi)
    for (uint32_t lo : lows) acc.push_back((hi << drop) | lo);
  const size_t n = acc.size();
  std::vector<uint8_t> got(n * wire_bytes(t)), want(n * wire_bytes(t));
  const auto* a = reinterpret_cast<const uint8_t*>(acc.data());
  store(k, t, got.data(), a, n);
  reference::store(t, want.data(), a, n);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(
        std::memcmp(got.data() + i * wire_bytes(t), want.data() + i * wire_bytes(t), wire_bytes(t)),
        0)
        << to_string(t) << " from fp32 0x" << std::hex << acc[i];
}

TEST_P(KernelsMatchReference, Fp16StoreAtEveryRoundingMidpoint) {
  expect_store_matches_at_midpoints(*kernels_, DType::kFp16);
}

TEST_P(KernelsMatchReference, Bf16StoreAtEveryRoundingMidpoint) {
  expect_store_matches_at_midpoints(*kernels_, DType::kBf16);
}

TEST_P(KernelsMatchReference, Fp8E4M3StoreAtEveryRoundingMidpoint) {
  expect_store_matches_at_midpoints(*kernels_, DType::kFp8E4M3);
}

TEST_P(KernelsMatchReference, Fp8E5M2StoreAtEveryRoundingMidpoint) {
  expect_store_matches_at_midpoints(*kernels_, DType::kFp8E5M2);
}

// fp8 narrowing over every binary32 pattern whose low 12 bits are 0 or 0xFFF
// (2^21 inputs per format: every exponent, all mantissas at a resolution of
// 2^-11, both signs, NaNs and infinities included), so subnormal midpoints,
// which sit at other bit positions than the normal ones, are all covered.
TEST_P(KernelsMatchReference, Fp8StoreOfDenseBinary32Patterns) {
  std::vector<uint32_t> acc;
  acc.reserve(size_t{1} << 21);
  for (uint32_t hi = 0; hi < (1u << 20); ++hi)
    for (uint32_t lo : {0u, 0xFFFu}) acc.push_back((hi << 12) | lo);
  const auto* a = reinterpret_cast<const uint8_t*>(acc.data());
  for (DType t : {DType::kFp8E4M3, DType::kFp8E5M2}) {
    std::vector<uint8_t> got(acc.size()), want(acc.size());
    store(*kernels_, t, got.data(), a, acc.size());
    reference::store(t, want.data(), a, acc.size());
    for (size_t i = 0; i < acc.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << to_string(t) << " from fp32 0x" << std::hex << acc[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, KernelsMatchReference,
                         ::testing::Values(Isa::kPortable, Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The public functions go through the active table.
TEST(Dispatched, ApiEqualsActiveKernels) {
  std::mt19937_64 rng(7);
  const Kernels& k = active_kernels();
  for (DType t : kTypes) {
    const size_t n = 333;
    const auto wire = test::random_wire(t, n, rng);
    const auto wire2 = test::random_wire(t, n, rng);
    std::vector<uint8_t> a(accum_bytes(t) * n), b(accum_bytes(t) * n);
    std::vector<uint8_t> out_a(n * wire_bytes(t)), out_b(n * wire_bytes(t));
    load(t, a.data(), wire.data(), n);
    load(k, t, b.data(), wire.data(), n);
    combine(t, ReduceOp::kSum, a.data(), wire2.data(), n);
    combine(k, t, ReduceOp::kSum, b.data(), wire2.data(), n);
    store(t, out_a.data(), a.data(), n);
    store(k, t, out_b.data(), b.data(), n);
    EXPECT_EQ(a, b) << to_string(t);
    EXPECT_EQ(out_a, out_b) << to_string(t);
  }
}

}  // namespace
}  // namespace epic::arith
