// KULISCH_FIXED (kulisch.h): exact deposits (portable C++, specialised per type and layout),
// the one rounding, and the AUTO partial codec.
#include "datapath/arith/kulisch.h"

#include <cstring>
#include <type_traits>

#include "datapath/arith/kulisch_format.h"
#include "datapath/arith/kulisch_layout.h"

namespace epic::arith::kulisch {

namespace {

using detail::Deposit;
using detail::Exact;
using detail::Format;
using vocab::KulischLayout;
using vocab::PartialForm;

// A slot's accumulator: limb planes, then flags (kulisch.h).
struct Acc {
  uint8_t* base = nullptr;
  size_t n = 0;
  KulischLayout l;
  uint8_t* flags() const { return base + size_t{l.limbs} * n * l.limb_bytes; }
  int64_t limb(size_t j, size_t i) const {
    if (l.limb_bytes == 4) {
      int32_t v;
      std::memcpy(&v, base + (j * n + i) * 4, 4);
      return v;
    }
    int64_t v;
    std::memcpy(&v, base + (j * n + i) * 8, 8);
    return v;
  }
  void set_limb(size_t j, size_t i, int64_t v) const {
    if (l.limb_bytes == 4) {
      const auto w = static_cast<int32_t>(v);
      std::memcpy(base + (j * n + i) * 4, &w, 4);
    } else {
      std::memcpy(base + (j * n + i) * 8, &v, 8);
    }
  }
};

// Limb arithmetic wraps (unsigned), never undefined: values stay far inside the limbs.
int64_t add_wrap(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

void clear(const Acc& a) { std::memset(a.base, 0, accum_bytes_of(a.l, a.n)); }

// The packet path: deposit every element of `wire`, specialised per layout. A single limb adds
// ±M·2^shift; nine limbs add the low 32 bits of M·2^(shift mod 32) to limb shift/32 and the
// rest to the next (carry-save: no carry propagates here).
// A float type's fields as compile-time constants (the packet path's decode, unrolled by type).
template <uint32_t Width, uint32_t MBits, uint32_t EBits, bool HasInf>
struct Fields {
  static constexpr uint32_t kWidth = Width, kMBits = MBits, kEBits = EBits;
  static constexpr uint32_t kTop = (1u << EBits) - 1;
  static constexpr bool kHasInf = HasInf;
};
using Fp32Fields = Fields<4, 23, 8, true>;
using Bf16Fields = Fields<2, 7, 8, true>;
using Fp16Fields = Fields<2, 10, 5, true>;
using E5M2Fields = Fields<1, 2, 5, true>;
using E4M3Fields = Fields<1, 3, 4, false>;

// decode() with constants, branch-free: specials deposit nothing and only set flags.
template <typename F>
inline Deposit decode_fast(uint32_t x) {
  Deposit d;
  const uint32_t sign = (x >> (F::kEBits + F::kMBits)) & 1;
  const uint32_t field = (x >> F::kMBits) & F::kTop;
  const uint32_t mant = x & ((1u << F::kMBits) - 1);
  const bool special =
      F::kHasInf ? field == F::kTop : (field == F::kTop && mant == (1u << F::kMBits) - 1);
  const bool nan = special && (!F::kHasInf || mant != 0);
  const bool inf = special && !nan;
  const uint64_t m = field != 0 ? (mant | (1u << F::kMBits)) : mant;
  d.m = special ? 0 : m;
  d.shift = field != 0 ? field - 1 : 0;
  d.negative = sign != 0;
  const bool neg_zero = sign && field == 0 && mant == 0;
  d.flags =
      static_cast<uint8_t>((neg_zero ? 0 : vocab::kFlagNotNegZero) | (nan ? vocab::kFlagNan : 0) |
                           (inf ? (sign ? vocab::kFlagNegInf : vocab::kFlagPosInf) : 0));
  return d;
}

template <typename F>
inline uint32_t read_fast(const uint8_t* p) {
  uint32_t x = 0;
  std::memcpy(&x, p, F::kWidth);
  return x;
}

// The packet path: deposit every element of `wire`, specialised per type and layout. A single
// limb adds ±M·2^shift; nine limbs add the low 32 bits of M·2^(shift mod 32) to limb shift/32
// and the rest to the next (carry-save: no carry propagates here).
template <typename F, typename Limb>
void deposit_one_limb(uint8_t* acc, uint8_t* flags, const uint8_t* wire, size_t n) {
  using U = std::make_unsigned_t<Limb>;
  for (size_t i = 0; i < n; ++i) {
    const Deposit d = decode_fast<F>(read_fast<F>(wire + i * F::kWidth));
    const auto v = static_cast<U>(d.m << d.shift);
    U x;
    std::memcpy(&x, acc + i * sizeof(Limb), sizeof(Limb));
    x += d.negative ? static_cast<U>(0 - v) : v;
    std::memcpy(acc + i * sizeof(Limb), &x, sizeof(Limb));
    flags[i] |= d.flags;
  }
}

template <typename F>
void deposit_wide(uint8_t* acc, uint8_t* flags, const uint8_t* wire, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const Deposit d = decode_fast<F>(read_fast<F>(wire + i * F::kWidth));
    const uint64_t v = d.m << (d.shift % 32);
    const size_t k = d.shift / 32;
    const uint64_t lo = v & 0xFFFFFFFFu, hi = v >> 32;
    uint8_t* p0 = acc + (k * n + i) * 8;
    uint8_t* p1 = p0 + n * 8;
    uint64_t x0, x1;
    std::memcpy(&x0, p0, 8);
    std::memcpy(&x1, p1, 8);
    x0 += d.negative ? 0 - lo : lo;
    x1 += d.negative ? 0 - hi : hi;
    std::memcpy(p0, &x0, 8);
    std::memcpy(p1, &x1, 8);
    flags[i] |= d.flags;
  }
}

void deposit_portable_all(DType t, const Acc& a, const uint8_t* wire) {
  uint8_t* acc = a.base;
  uint8_t* flags = a.flags();
  const size_t n = a.n;
  switch (t) {
    case DType::kFp32:
      return deposit_wide<Fp32Fields>(acc, flags, wire, n);
    case DType::kBf16:
      return deposit_wide<Bf16Fields>(acc, flags, wire, n);
    case DType::kFp16:
      return deposit_one_limb<Fp16Fields, int64_t>(acc, flags, wire, n);
    case DType::kFp8E5M2:
      return deposit_one_limb<E5M2Fields, int64_t>(acc, flags, wire, n);
    case DType::kFp8E4M3:
      if (a.l.limb_bytes == 4) return deposit_one_limb<E4M3Fields, int32_t>(acc, flags, wire, n);
      return deposit_one_limb<E4M3Fields, int64_t>(acc, flags, wire, n);
    default:
      return;
  }
}

void deposit_all(DType t, const Acc& a, const uint8_t* wire) {
  if (detail::avx512_deposits() && detail::deposit_avx512(t, a.l, a.base, wire, a.n)) return;
  deposit_portable_all(t, a, wire);
}

// Element i of a nine-limb layout rounded once (kulisch.h), without building an Exact: the
// carry-save limbs are normalised into eight 32-bit digits and a signed top (value/q =
// sum_j d_j 2^(32 j) + top 2^256), negated when negative, and the 64-bit window under the
// leading digit is rounded with a sticky bit for the digits below it.
uint32_t store_wide_element(const Format& f, const Acc& a, size_t i) {
  uint64_t d[8];
  int64_t c = 0;
  for (size_t j = 0; j < 8; ++j) {
    const int64_t t = add_wrap(a.limb(j, i), c);
    d[j] = static_cast<uint32_t>(t);
    c = t >> 32;  // arithmetic (C++20)
  }
  int64_t top = add_wrap(a.limb(8, i), c);
  const bool negative = top < 0;
  if (negative) {  // two's complement negation over the digits and the top
    uint64_t carry = 1;
    for (uint64_t& x : d) {
      const uint64_t s = (~x & 0xFFFFFFFFu) + carry;
      x = s & 0xFFFFFFFFu;
      carry = s >> 32;
    }
    top = add_wrap(~top, static_cast<int64_t>(carry));
  }
  uint64_t window = d[0];
  uint32_t ex = 0;
  bool sticky = false;
  if (top != 0) {
    // At least 2^256 q: a top of 2^31 or more is beyond every nine-limb type's range whatever
    // the digits below, so it saturates there (the result overflows either way).
    const auto t = static_cast<uint64_t>(top) < (uint64_t{1} << 31) ? static_cast<uint64_t>(top)
                                                                    : uint64_t{1} << 31;
    window = t << 32 | d[7];
    ex = 224;
    for (size_t j = 0; j < 7; ++j) sticky = sticky || d[j] != 0;
  } else {
    for (size_t j = 8; j-- > 1;) {
      if (d[j] == 0) continue;
      window = d[j] << 32 | d[j - 1];
      ex = static_cast<uint32_t>(32 * (j - 1));
      for (size_t k = 0; k + 1 < j; ++k) sticky = sticky || d[k] != 0;
      break;
    }
  }
  uint32_t out;
  if (detail::special_result(f, a.flags()[i], window == 0, out)) return out;
  return detail::round_magnitude(f, negative, window, ex, sticky, nullptr);
}

// `f` by value: a reference could alias the wire bytes written, reloading it every element.
void store_portable_all(const Format f, const Acc& a, uint8_t* wire) {
  const size_t n = a.n;
  if (a.l.limbs != 1) {
    for (size_t i = 0; i < n; ++i)
      detail::write_bits(f, wire + i * f.width, store_wide_element(f, a, i));
    return;
  }
  // One limb: the value is an int64 (|v| < 2^63, W <= 64).
  const uint8_t* flags = a.flags();
  for (size_t i = 0; i < n; ++i) {
    const int64_t v = a.limb(0, i);
    uint32_t out;
    if (!detail::special_result(f, flags[i], v == 0, out)) {
      const uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      out = detail::round_magnitude(f, v < 0, mag, 0, false, nullptr);
    }
    detail::write_bits(f, wire + i * f.width, out);
  }
}

// Element i's exact value: normalise the limbs into two's complement digits.
Exact exact_of(const Acc& a, size_t i) {
  Exact e;
  e.flags = a.flags()[i];
  uint32_t digits[detail::kDigits];
  detail::Int128 carry = 0;
  for (size_t j = 0; j < detail::kDigits; ++j) {
    const detail::Int128 t = carry + (j < a.l.limbs ? a.limb(j, i) : 0);
    digits[j] = static_cast<uint32_t>(static_cast<detail::Uint128>(t));
    carry = (t - static_cast<detail::Int128>(digits[j])) >> 32;
  }
  detail::set_twos_complement(e, digits, detail::kDigits);
  return e;
}

// acc[i] += e (magnitude within the layout, checked by the caller).
void add_exact(const Acc& a, size_t i, const Exact& e) {
  if (a.l.limbs == 1) {
    const auto v = static_cast<int64_t>(e.bits_at(0, 63));
    a.set_limb(0, i, add_wrap(a.limb(0, i), e.negative ? -v : v));
  } else {
    for (size_t j = 0; j < detail::kDigits; ++j) {
      if (e.mag[j] == 0) continue;
      const size_t k = j < a.l.limbs ? j : a.l.limbs - 1u;
      const auto v = static_cast<int64_t>(uint64_t{e.mag[j]} << (32 * (j - k)));
      a.set_limb(k, i, add_wrap(a.limb(k, i), e.negative ? -v : v));
    }
  }
  a.flags()[i] |= e.flags;
}

// Whether x + y has at most width - 1 magnitude bits.
bool sum_fits(const Exact& x, const Exact& y, uint32_t width) {
  uint32_t d[detail::kDigits];
  detail::Int128 carry = 0;
  for (size_t j = 0; j < detail::kDigits; ++j) {
    const detail::Int128 t = carry + (x.negative ? -detail::Int128{x.mag[j]} : x.mag[j]) +
                             (y.negative ? -detail::Int128{y.mag[j]} : y.mag[j]);
    d[j] = static_cast<uint32_t>(static_cast<detail::Uint128>(t));
    carry = (t - static_cast<detail::Int128>(d[j])) >> 32;
  }
  if (carry != 0 && carry != -1) return false;
  Exact s;
  detail::set_twos_complement(s, d, detail::kDigits);
  return s.bits() < width;
}

// --- the partial (proto/vocab/partial.h) ---

struct Header {
  uint8_t magic, form, dtype, flags;
  uint16_t elements;
  int16_t scale;
};

Header read_header(const uint8_t* in) {
  Header h{};
  h.magic = in[0];
  h.form = in[1];
  h.dtype = in[2];
  h.flags = in[3];
  std::memcpy(&h.elements, in + 4, 2);
  std::memcpy(&h.scale, in + 6, 2);
  return h;
}

void write_header(uint8_t* out, PartialForm form, DType t, bool with_flags, size_t n,
                  int16_t scale) {
  out[0] = vocab::kPartialMagic;
  out[1] = static_cast<uint8_t>(form);
  out[2] = static_cast<uint8_t>(t);
  out[3] = with_flags ? 1 : 0;
  const auto elements = static_cast<uint16_t>(n);
  std::memcpy(out + 4, &elements, 2);
  std::memcpy(out + 6, &scale, 2);
}

// Element i of a kFixed64 or kWide body as an Exact (flags from the flags section, or the
// default "not all -0"); false when it does not fit the width W (at most W - 1 magnitude bits).
bool element_of(const uint8_t* body, PartialForm form, uint32_t digits, int16_t scale, size_t i,
                const uint8_t* flags, uint32_t width, Exact& e) {
  e = Exact{};
  if (form == PartialForm::kFixed64) {
    int64_t v;
    std::memcpy(&v, body + i * 8, 8);
    if (v == INT64_MIN) return false;
    const auto mag = static_cast<uint64_t>(v < 0 ? -v : v);
    e.negative = v < 0;
    for (uint32_t b = 0; b < 64; ++b) {
      if ((mag >> b) & 1) {
        const uint32_t at = b + static_cast<uint32_t>(scale);
        if (at / 32 >= detail::kDigits) return false;
        e.mag[at / 32] |= 1u << (at % 32);
      }
    }
  } else {
    uint32_t d[detail::kDigits] = {};
    if (digits > detail::kDigits) return false;
    std::memcpy(d, body + i * 4 * size_t{digits}, 4 * size_t{digits});
    detail::set_twos_complement(e, d, digits);
  }
  e.flags = flags ? flags[i] : static_cast<uint8_t>(vocab::kFlagNotNegZero);
  if (flags && (flags[i] & ~0x0Fu)) return false;
  return e.bits() < width;
}

}  // namespace

size_t accum_bytes(DType t, uint32_t contributors, size_t n) {
  if (!vocab::float_format(t)) return 0;
  return accum_bytes_of(vocab::kulisch_layout(t, contributors), n);
}

void load(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire, size_t n) {
  Format f;
  if (n == 0 || !detail::format_of(t, f)) return;
  const Acc a{acc, n, vocab::kulisch_layout(t, contributors)};
  if (detail::avx512_deposits() && detail::load_avx512(t, a.l, acc, wire, n)) return;
  clear(a);
  deposit_portable_all(t, a, wire);
}

void deposit(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire, size_t n) {
  Format f;
  if (n == 0 || !detail::format_of(t, f)) return;
  deposit_all(t, Acc{acc, n, vocab::kulisch_layout(t, contributors)}, wire);
}

void store(DType t, uint32_t contributors, uint8_t* wire, const uint8_t* acc, size_t n) {
  Format f;
  if (n == 0 || !detail::format_of(t, f)) return;
  const Acc a{const_cast<uint8_t*>(acc), n, vocab::kulisch_layout(t, contributors)};
  if (detail::avx512_deposits() && detail::store_avx512(t, a.l, wire, acc, n)) return;
  store_portable_all(f, a, wire);
}

void detail::load_portable(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire,
                           size_t n) {
  Format f;
  if (n == 0 || !detail::format_of(t, f)) return;
  const Acc a{acc, n, vocab::kulisch_layout(t, contributors)};
  clear(a);
  deposit_portable_all(t, a, wire);
}

void detail::deposit_portable(DType t, uint32_t contributors, uint8_t* acc, const uint8_t* wire,
                              size_t n) {
  Format f;
  if (n == 0 || !detail::format_of(t, f)) return;
  deposit_portable_all(t, Acc{acc, n, vocab::kulisch_layout(t, contributors)}, wire);
}

void detail::store_portable(DType t, uint32_t contributors, uint8_t* wire, const uint8_t* acc,
                            size_t n) {
  Format f;
  if (n == 0 || !detail::format_of(t, f)) return;
  store_portable_all(f, Acc{const_cast<uint8_t*>(acc), n, vocab::kulisch_layout(t, contributors)},
                     wire);
}

int partial_elements(DType t, const uint8_t* in, size_t len) {
  if (!vocab::float_format(t) || in == nullptr || len < vocab::kPartialHeaderBytes) return -1;
  const Header h = read_header(in);
  if (h.magic != vocab::kPartialMagic || h.dtype != static_cast<uint8_t>(t) || h.form < 1 ||
      h.form > 3) {
    return -1;
  }
  return h.elements;
}

size_t encode_partial(DType t, uint32_t contributors, const uint8_t* acc, size_t n, uint8_t* out,
                      size_t cap) {
  Format f;
  if (!detail::format_of(t, f) || n > UINT16_MAX) return 0;
  const Acc a{const_cast<uint8_t*>(acc), n, vocab::kulisch_layout(t, contributors)};
  const uint32_t digits = vocab::kulisch_wide_digits(t, contributors);
  const uint32_t width = vocab::exact_width_bits(t, contributors);
  // Pass 1: the narrowest form every element fits.
  bool plain = true, with_flags = false;
  uint32_t low = UINT32_MAX, high = 0;  // lowest set bit, bit length over nonzero elements
  for (size_t i = 0; i < n; ++i) {
    const Exact e = exact_of(a, i);
    bool lossless = false;
    detail::round_once(f, e, &lossless);
    const bool special = e.flags & (vocab::kFlagNan | vocab::kFlagPosInf | vocab::kFlagNegInf);
    if (!special && !lossless) plain = false;
    if (e.flags != vocab::kFlagNotNegZero) with_flags = true;
    if (!e.zero()) {
      const uint32_t b = e.lowest_bit();
      low = b < low ? b : low;
      high = e.bits() > high ? e.bits() : high;
      // Beyond the width W: no honest subtree sums that (a child sent a dishonest partial).
      if (e.bits() >= width) return 0;
    }
  }
  PartialForm form = PartialForm::kWide;
  int16_t scale = 0;
  const auto n32 = static_cast<uint32_t>(n);
  if (plain) {
    form = PartialForm::kPlain;
    with_flags = false;
  } else if ((high == 0 || high - low <= 63) &&
             vocab::partial_bytes(PartialForm::kFixed64, t, n32, contributors, with_flags) <
                 vocab::partial_bytes(PartialForm::kWide, t, n32, contributors, with_flags)) {
    form = PartialForm::kFixed64;
    scale = static_cast<int16_t>(high == 0 ? 0 : low);
  }
  const uint32_t need = vocab::partial_bytes(form, t, n32, contributors, with_flags);
  if (need > cap) return 0;
  // Pass 2: write it.
  write_header(out, form, t, with_flags, n, scale);
  uint8_t* body = out + vocab::kPartialHeaderBytes;
  for (size_t i = 0; i < n; ++i) {
    const Exact e = exact_of(a, i);
    switch (form) {
      case PartialForm::kPlain:
        detail::write_bits(f, body + i * f.width, detail::round_once(f, e, nullptr));
        break;
      case PartialForm::kFixed64: {
        const auto mag = static_cast<int64_t>(e.bits_at(static_cast<uint32_t>(scale), 63));
        const int64_t v = e.negative ? -mag : mag;
        std::memcpy(body + i * 8, &v, 8);
        break;
      }
      case PartialForm::kWide: {
        // Two's complement of the magnitude, `digits` digits.
        uint64_t carry = 1;
        for (uint32_t j = 0; j < digits; ++j) {
          uint32_t d = e.mag[j];
          if (e.negative) {
            const uint64_t s = uint64_t{static_cast<uint32_t>(~d)} + carry;
            d = static_cast<uint32_t>(s);
            carry = s >> 32;
          }
          std::memcpy(body + (size_t{i} * digits + j) * 4, &d, 4);
        }
        break;
      }
    }
  }
  if (with_flags) {
    const size_t body_bytes = form == PartialForm::kFixed64 ? n * 8 : size_t{n} * 4 * digits;
    uint8_t* flags = body + body_bytes;
    for (size_t i = 0; i < n; ++i) flags[i] = a.flags()[i];
  }
  return need;
}

bool merge_partial(DType t, uint32_t contributors, uint8_t* acc, size_t n, const uint8_t* in,
                   size_t len, bool first) {
  Format f;
  if (!detail::format_of(t, f) || partial_elements(t, in, len) != static_cast<int>(n)) return false;
  const Header h = read_header(in);
  const auto form = static_cast<PartialForm>(h.form);
  const bool with_flags = h.flags == 1;
  if (h.flags > 1 || (form == PartialForm::kPlain && (with_flags || h.scale != 0)) ||
      (form == PartialForm::kWide && h.scale != 0) || h.scale < 0) {
    return false;
  }
  if (len != vocab::partial_bytes(form, t, static_cast<uint32_t>(n), contributors, with_flags)) {
    return false;
  }
  const Acc a{acc, n, vocab::kulisch_layout(t, contributors)};
  const uint8_t* body = in + vocab::kPartialHeaderBytes;
  const uint32_t digits = vocab::kulisch_wide_digits(t, contributors);
  const uint32_t width = vocab::exact_width_bits(t, contributors);
  if (form == PartialForm::kPlain) {
    if (first) clear(a);
    deposit_all(t, a, body);
    return true;
  }
  const uint8_t* flags =
      with_flags ? body + (form == PartialForm::kFixed64 ? n * 8 : size_t{n} * 4 * digits)
                 : nullptr;
  // Pass 1: every element, and the sum it makes with the accumulator, fits the width W (so the
  // state stays one that encode_partial writes and that no limb can overflow).
  for (size_t i = 0; i < n; ++i) {
    Exact e;
    if (!element_of(body, form, digits, h.scale, i, flags, width, e)) return false;
    if (!first && !sum_fits(exact_of(a, i), e, width)) return false;
  }
  if (first) clear(a);
  for (size_t i = 0; i < n; ++i) {
    Exact e;
    element_of(body, form, digits, h.scale, i, flags, width, e);
    add_exact(a, i, e);
  }
  return true;
}

}  // namespace epic::arith::kulisch
