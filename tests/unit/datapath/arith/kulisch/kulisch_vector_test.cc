// The AVX-512 kernels of KULISCH_FIXED (datapath/arith/kulisch_avx512.cc) against the portable
// ones (kulisch_layout.h detail::*_portable), byte for byte: load, deposit and store for every
// float type and both E4M3 layouts, every length class of the 16- and 8-lane loops (0, 1, 7,
// 15, 16, 17, 33, 70 and a full 1024-byte payload), misaligned buffers, guard bytes after every
// buffer. Inputs are random bit patterns, specials (NaN payloads, +-inf, +-0), subnormals, the
// largest finite values, one-binade vectors (the two-plane path of the nine-limb deposit) and
// adversarial cancellation; stores are also compared on random accumulator states. The
// portable store itself is checked against round_once of the exact value (kulisch_format.h).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "datapath/arith/kulisch.h"
#include "datapath/arith/kulisch_format.h"
#include "datapath/arith/kulisch_layout.h"

namespace epic::arith::kulisch {
namespace {

using vocab::DType;
using Bytes = std::vector<uint8_t>;

constexpr uint8_t kGuard = 0xC3;
constexpr size_t kGuardBytes = 64;

struct LayoutCase {
  DType t;
  uint32_t R;  // 4: E4M3's int32 layout; 9000: its int64 one (the same layout for other types)
};
constexpr LayoutCase kLayouts[] = {
    {DType::kFp32, 4},    {DType::kFp32, 9000},    {DType::kBf16, 4},    {DType::kBf16, 9000},
    {DType::kFp16, 4},    {DType::kFp16, 9000},    {DType::kFp8E5M2, 4}, {DType::kFp8E5M2, 9000},
    {DType::kFp8E4M3, 4}, {DType::kFp8E4M3, 9000},
};

std::vector<size_t> lengths(DType t) {
  return {0, 1, 7, 15, 16, 17, 33, 70, 1024 / vocab::wire_bytes(t)};
}

std::string what(DType t, uint32_t R, size_t n, size_t offset) {
  return std::string(vocab::to_string(t)) + " R " + std::to_string(R) + " n " + std::to_string(n) +
         " offset " + std::to_string(offset);
}

// A type's bit fields.
struct Bits {
  uint32_t width, mbits, ebits, top;
  bool has_inf;
  explicit Bits(DType t) {
    const auto f = *vocab::float_format(t);
    width = static_cast<uint32_t>(vocab::wire_bytes(t));
    mbits = static_cast<uint32_t>(f.precision - 1);
    ebits = static_cast<uint32_t>(f.exponent_bits);
    top = (1u << ebits) - 1;
    has_inf = t != DType::kFp8E4M3;
  }
  uint32_t make(uint32_t sign, uint32_t field, uint32_t mant) const {
    return sign << (ebits + mbits) | field << mbits | (mant & ((1u << mbits) - 1));
  }
  uint32_t sign_bit() const { return 1u << (ebits + mbits); }
  uint32_t max_field() const { return has_inf ? top - 1 : top; }
  bool is_special(uint32_t x) const {
    const uint32_t field = (x >> mbits) & top, mant = x & ((1u << mbits) - 1);
    return field == top && (has_inf || mant == (1u << mbits) - 1);
  }
  uint32_t finite(std::mt19937_64& rng, uint32_t lo, uint32_t hi) const {
    for (;;) {
      const uint32_t x =
          make(static_cast<uint32_t>(rng() & 1), lo + static_cast<uint32_t>(rng() % (hi - lo + 1)),
               static_cast<uint32_t>(rng()));
      if (!is_special(x)) return x;
    }
  }
  // One element of the "mixed" kind: specials, zeros, subnormals, extremes, anything.
  uint32_t mixed(std::mt19937_64& rng) const {
    const auto sign = static_cast<uint32_t>(rng() & 1);
    switch (rng() % 8) {
      case 0:  // NaN, any payload (E4M3: its only NaN)
        return has_inf ? make(sign, top, static_cast<uint32_t>(rng()) | 1) : make(sign, top, ~0u);
      case 1:  // +-inf (E4M3: the largest finite)
        return has_inf ? make(sign, top, 0) : make(sign, top, (1u << mbits) - 2);
      case 2:
        return make(sign, 0, 0);
      case 3:  // subnormal
        return make(sign, 0, static_cast<uint32_t>(rng()) | 1);
      case 4:  // the largest finite magnitude
        return has_inf ? make(sign, top - 1, ~0u) : make(sign, top, (1u << mbits) - 2);
      case 5:  // the smallest normals
        return make(sign, 1, static_cast<uint32_t>(rng() % 3));
      default:
        return static_cast<uint32_t>(rng()) & ((width == 4 ? 0 : (1u << (8 * width))) - 1);
    }
  }
};

void put(const Bits& b, uint8_t* p, size_t i, uint32_t x) {
  std::memcpy(p + i * b.width, &x, b.width);
}
uint32_t get(const Bits& b, const uint8_t* p, size_t i) {
  uint32_t x = 0;
  std::memcpy(&x, p + i * b.width, b.width);
  return x;
}

// A sequence of contributions of n elements of one kind: random bytes, mixed patterns, one
// binade per contribution (every lane in one 32-bit digit), widely spread exponents, or
// cancellation (each contribution the previous one negated, tiny values in between).
std::vector<Bytes> contributions(DType t, size_t n, int kind, int count, std::mt19937_64& rng) {
  const Bits b(t);
  std::vector<Bytes> out;
  Bytes prev(n * b.width);
  for (int k = 0; k < count; ++k) {
    Bytes in(n * b.width + 1, kGuard);
    const auto field = static_cast<uint32_t>(1 + rng() % b.max_field());
    for (size_t i = 0; i < n; ++i) {
      uint32_t x = 0;
      switch (kind) {
        case 0:
          for (uint32_t j = 0; j < b.width; ++j) x |= static_cast<uint32_t>(rng() & 0xFF) << 8 * j;
          break;
        case 1:
          x = b.mixed(rng);
          break;
        case 2:
          x = b.finite(rng, field, field);
          break;
        case 3:
          x = b.finite(rng, 0, b.max_field());
          break;
        default:  // k odd: -(contribution k-1); k even: huge or tiny values
          if (k % 2 == 1) {
            x = get(b, prev.data(), i) ^ b.sign_bit();
          } else {
            x = rng() % 2 ? b.finite(rng, b.max_field() - 2, b.max_field())
                          : b.make(static_cast<uint32_t>(rng() & 1), 0, 1 + rng() % 4);
          }
          break;
      }
      put(b, in.data(), i, x);
    }
    if (n != 0) std::memcpy(prev.data(), in.data(), n * b.width);  // no null pointers at n 0
    out.push_back(std::move(in));
  }
  return out;
}

// Buffers of `bytes` at `offset` from a 64-byte boundary, guard bytes after.
struct Buffer {
  std::vector<uint8_t> storage;
  size_t offset, bytes;
  Buffer(size_t bytes_, size_t offset_, uint8_t fill)
      : storage(bytes_ + offset_ + kGuardBytes + 64, kGuard), offset(offset_), bytes(bytes_) {
    std::memset(data(), fill, bytes);
  }
  uint8_t* data() {
    const auto a = reinterpret_cast<uintptr_t>(storage.data());
    return storage.data() + (64 - a % 64) % 64 + offset;
  }
  Bytes contents() { return {data(), data() + bytes}; }
  // The first guard byte that changed, or -1.
  long changed_guard() {
    for (size_t g = 0; g < kGuardBytes; ++g)
      if (data()[bytes + g] != kGuard) return static_cast<long>(g);
    return -1;
  }
};

// Element i's limbs and flags, for failure messages.
std::string limbs_of(DType t, uint32_t R, const uint8_t* acc, size_t n, size_t i) {
  const vocab::KulischLayout l = vocab::kulisch_layout(t, R);
  std::string s = "limbs";
  for (size_t j = 0; j < l.limbs; ++j) {
    int64_t v = 0;
    if (l.limb_bytes == 4) {
      int32_t x;
      std::memcpy(&x, acc + (j * n + i) * 4, 4);
      v = x;
    } else {
      std::memcpy(&v, acc + (j * n + i) * 8, 8);
    }
    s += ' ';
    s += std::to_string(v);
  }
  return s + " flags " + std::to_string(acc[size_t{l.limbs} * n * l.limb_bytes + i]);
}

// Stores of the same accumulator through both paths give the same bytes and touch no guard.
void expect_same_store(DType t, uint32_t R, size_t n, Buffer& acc, size_t offset) {
  const size_t w = vocab::wire_bytes(t);
  Buffer vec(n * w, offset, 0x5A), port(n * w, offset, 0x5A);
  const Bytes before = acc.contents();
  ASSERT_TRUE(detail::store_avx512(t, vocab::kulisch_layout(t, R), vec.data(), acc.data(), n));
  detail::store_portable(t, R, port.data(), acc.data(), n);
  ASSERT_EQ(acc.contents(), before) << "store modified the accumulator";
  for (size_t i = 0; i < n; ++i) {
    uint32_t v = 0, p = 0;
    std::memcpy(&v, vec.data() + i * w, w);
    std::memcpy(&p, port.data() + i * w, w);
    ASSERT_EQ(v, p) << "stored bits of element " << i << ": " << limbs_of(t, R, acc.data(), n, i);
  }
  ASSERT_EQ(vec.contents(), port.contents()) << "stored bits";
  ASSERT_EQ(vec.changed_guard(), -1) << "store wrote past n elements";
}

class KulischVector : public ::testing::Test {
 protected:
  // The kernels are called directly, so they are compared whatever EPIC_ARITH_ISA says; an
  // empty call reports whether the CPU has the extensions.
  void SetUp() override {
    if (!detail::load_avx512(DType::kFp16, vocab::kulisch_layout(DType::kFp16, 2), nullptr, nullptr,
                             0))
      GTEST_SKIP() << "no AVX-512 F/BW/VL/DQ/CD on this CPU";
  }
};

// Load, deposits and a store after every step: the same accumulator and wire bytes from both
// paths for every kind of input.
TEST_F(KulischVector, LoadDepositAndStoreWriteThePortableBytes) {
  std::mt19937_64 rng(11);
  for (const LayoutCase& c : kLayouts) {
    const vocab::KulischLayout l = vocab::kulisch_layout(c.t, c.R);
    for (size_t n : lengths(c.t)) {
      for (size_t offset : {size_t{0}, size_t{3}}) {
        for (int kind = 0; kind < 5; ++kind) {
          SCOPED_TRACE(what(c.t, c.R, n, offset) + " kind " + std::to_string(kind));
          const size_t bytes = accum_bytes(c.t, c.R, n);
          // Garbage first: load must write every byte of the accumulator.
          Buffer vec(bytes, offset, 0xA5), port(bytes, offset, 0x3C);
          const std::vector<Bytes> in = contributions(c.t, n, kind, 6, rng);
          for (size_t k = 0; k < in.size(); ++k) {
            SCOPED_TRACE("contribution " + std::to_string(k));
            if (k == 0) {
              ASSERT_TRUE(detail::load_avx512(c.t, l, vec.data(), in[k].data(), n));
              detail::load_portable(c.t, c.R, port.data(), in[k].data(), n);
            } else {
              ASSERT_TRUE(detail::deposit_avx512(c.t, l, vec.data(), in[k].data(), n));
              detail::deposit_portable(c.t, c.R, port.data(), in[k].data(), n);
            }
            ASSERT_EQ(vec.contents(), port.contents()) << "accumulator bytes";
            ASSERT_EQ(vec.changed_guard(), -1) << "wrote past the accumulator";
            expect_same_store(c.t, c.R, n, vec, offset);
          }
        }
      }
    }
  }
}

// A random signed value of about `bits` bits.
int64_t random_limb(std::mt19937_64& rng, int bits) {
  const auto mag = static_cast<int64_t>(rng() >> (64 - bits));
  return rng() % 2 ? -mag : mag;
}

// Accumulator states no run of deposits reaches quickly: limbs of random size and sign (the
// carry-save limbs far from normalised, the top limb up to 2^62 so values overflow), sparse
// planes, random flag bytes. Stores agree.
TEST_F(KulischVector, StoresOfRandomAccumulatorStatesAgree) {
  std::mt19937_64 rng(23);
  for (const LayoutCase& c : kLayouts) {
    const vocab::KulischLayout l = vocab::kulisch_layout(c.t, c.R);
    for (size_t n : lengths(c.t)) {
      for (int trial = 0; trial < 24; ++trial) {
        SCOPED_TRACE(what(c.t, c.R, n, trial % 2) + " trial " + std::to_string(trial));
        Buffer acc(accum_bytes(c.t, c.R, n), trial % 2, 0);
        // Which planes carry anything in this state (sparse: the vector store skips the rest).
        const auto planes = static_cast<uint32_t>(trial < 4 ? (1u << trial) : rng());
        const int bits = 1 + static_cast<int>(rng() % (l.limb_bytes == 4 ? 31 : 62));
        for (size_t j = 0; j < l.limbs; ++j) {
          if (l.limbs > 1 && !((planes >> j) & 1)) continue;
          for (size_t i = 0; i < n; ++i) {
            if (rng() % 4 == 0) continue;  // exact zeros too
            const int64_t v = random_limb(rng, l.limbs > 1 && j < 8 ? 1 + bits % 40 : bits);
            std::memcpy(acc.data() + (j * n + i) * l.limb_bytes, &v, l.limb_bytes);
          }
        }
        uint8_t* flags = acc.data() + size_t{l.limbs} * n * l.limb_bytes;
        for (size_t i = 0; i < n; ++i)
          flags[i] =
              static_cast<uint8_t>(rng() % 3 ? uint64_t{vocab::kFlagNotNegZero} : rng() % 16);
        expect_same_store(c.t, c.R, n, acc, trial % 2);
      }
    }
  }
}

// The public calls (the vector kernels unless EPIC_ARITH_ISA caps them): a slot's lifetime
// through load / deposit / store gives the portable bytes.
TEST(KulischDispatch, SlotLifetimeGivesThePortableBits) {
  std::mt19937_64 rng(5);
  for (const LayoutCase& c : kLayouts) {
    const size_t n = 1024 / vocab::wire_bytes(c.t);
    SCOPED_TRACE(what(c.t, c.R, n, 0));
    const std::vector<Bytes> in = contributions(c.t, n, 1, 8, rng);
    Bytes a(accum_bytes(c.t, c.R, n)), b(a.size());
    Bytes out_a(n * vocab::wire_bytes(c.t)), out_b(out_a.size());
    load(c.t, c.R, a.data(), in[0].data(), n);
    detail::load_portable(c.t, c.R, b.data(), in[0].data(), n);
    for (size_t k = 1; k < in.size(); ++k) {
      deposit(c.t, c.R, a.data(), in[k].data(), n);
      detail::deposit_portable(c.t, c.R, b.data(), in[k].data(), n);
    }
    store(c.t, c.R, out_a.data(), a.data(), n);
    detail::store_portable(c.t, c.R, out_b.data(), b.data(), n);
    EXPECT_EQ(a, b);
    EXPECT_EQ(out_a, out_b);
  }
}

// The exact value of element i of an accumulator (signed 32-bit digits normalised into an
// Exact), independent of the store kernels.
detail::Exact exact_of(const vocab::KulischLayout& l, const uint8_t* acc, size_t n, size_t i) {
  detail::Exact e;
  e.flags = acc[size_t{l.limbs} * n * l.limb_bytes + i];
  uint32_t digits[detail::kDigits];
  detail::Int128 carry = 0;
  for (size_t j = 0; j < detail::kDigits; ++j) {
    int64_t limb = 0;
    if (j < l.limbs) {
      if (l.limb_bytes == 4) {
        int32_t v;
        std::memcpy(&v, acc + (j * n + i) * 4, 4);
        limb = v;
      } else {
        std::memcpy(&limb, acc + (j * n + i) * 8, 8);
      }
    }
    const detail::Int128 t = carry + limb;
    digits[j] = static_cast<uint32_t>(static_cast<detail::Uint128>(t));
    carry = (t - static_cast<detail::Int128>(digits[j])) >> 32;
  }
  detail::set_twos_complement(e, digits, detail::kDigits);
  return e;
}

// The portable store is round_once of the exact value (kulisch_format.h): on deposits of every
// kind and on random nine-limb states, including tops beyond every type's range.
TEST(KulischStore, PortableStoreIsTheExactValueRoundedOnce) {
  std::mt19937_64 rng(31);
  for (const LayoutCase& c : kLayouts) {
    detail::Format f;
    ASSERT_TRUE(detail::format_of(c.t, f));
    const vocab::KulischLayout l = vocab::kulisch_layout(c.t, c.R);
    const size_t n = 70;
    for (int trial = 0; trial < 40; ++trial) {
      SCOPED_TRACE(what(c.t, c.R, n, 0) + " trial " + std::to_string(trial));
      Bytes acc(accum_bytes(c.t, c.R, n));
      if (trial < 30) {
        const std::vector<Bytes> in = contributions(c.t, n, trial % 5, 6, rng);
        detail::load_portable(c.t, c.R, acc.data(), in[0].data(), n);
        for (size_t k = 1; k < in.size(); ++k)
          detail::deposit_portable(c.t, c.R, acc.data(), in[k].data(), n);
      } else {
        for (size_t j = 0; j < l.limbs; ++j) {
          for (size_t i = 0; i < n; ++i) {
            const int64_t v = random_limb(rng, l.limbs == 1 ? (l.limb_bytes == 4 ? 31 : 62)
                                               : j < 8      ? 40
                                                            : 1 + static_cast<int>(rng() % 62));
            std::memcpy(acc.data() + (j * n + i) * l.limb_bytes, &v, l.limb_bytes);
          }
        }
      }
      Bytes out(n * f.width);
      detail::store_portable(c.t, c.R, out.data(), acc.data(), n);
      for (size_t i = 0; i < n; ++i) {
        uint32_t got = 0;
        std::memcpy(&got, out.data() + i * f.width, f.width);
        ASSERT_EQ(got, detail::round_once(f, exact_of(l, acc.data(), n, i), nullptr))
            << "element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace epic::arith::kulisch
