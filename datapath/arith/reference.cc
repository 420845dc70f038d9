// reference::load/combine/store: one element at a time through element.h.
#include <cstring>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/element.h"
#include "datapath/arith/kernels.h"

namespace epic::arith {
namespace {

template <typename T>
T read(const uint8_t* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void write(uint8_t* p, size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// Per DType: the wire and accumulator element types and the conversions.
struct Int32 {
  using Wire = int32_t;
  using Acc = int32_t;
  static Acc widen(Wire w) { return w; }
  static Wire narrow(Acc a) { return a; }
};
struct Fp32 {
  using Wire = float;
  using Acc = float;
  static Acc widen(Wire w) { return reference::canonical(w); }
  static Wire narrow(Acc a) { return reference::canonical(a); }
};
struct Fp16 {
  using Wire = uint16_t;
  using Acc = float;
  static Acc widen(Wire w) { return reference::widen_fp16(w); }
  static Wire narrow(Acc a) { return reference::narrow_fp16(a); }
};
struct Bf16 {
  using Wire = uint16_t;
  using Acc = float;
  static Acc widen(Wire w) { return reference::widen_bf16(w); }
  static Wire narrow(Acc a) { return reference::narrow_bf16(a); }
};

struct Int8 {
  using Wire = int8_t;
  using Acc = int8_t;
  static Acc widen(Wire w) { return w; }
  static Wire narrow(Acc a) { return a; }
};
struct Fp8E4M3 {
  using Wire = uint8_t;
  using Acc = float;
  static Acc widen(Wire w) { return reference::widen_e4m3(w); }
  static Wire narrow(Acc a) { return reference::narrow_e4m3(a); }
};
struct Fp8E5M2 {
  using Wire = uint8_t;
  using Acc = float;
  static Acc widen(Wire w) { return reference::widen_e5m2(w); }
  static Wire narrow(Acc a) { return reference::narrow_e5m2(a); }
};

template <ReduceOp kOp, typename T>
T apply(T acc, T x) {
  if constexpr (kOp == ReduceOp::kSum) return reference::sum(acc, x);
  if constexpr (kOp == ReduceOp::kMin) return reference::min(acc, x);
  if constexpr (kOp == ReduceOp::kMax) return reference::max(acc, x);
}

template <typename C>
void load_t(uint8_t* acc, const uint8_t* wire, size_t n) {
  for (size_t i = 0; i < n; ++i)
    write<typename C::Acc>(acc, i, C::widen(read<typename C::Wire>(wire, i)));
}

template <typename C, ReduceOp kOp>
void combine_t(uint8_t* acc, const uint8_t* wire, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const auto a = read<typename C::Acc>(acc, i);
    const auto x = C::widen(read<typename C::Wire>(wire, i));
    write<typename C::Acc>(acc, i, apply<kOp>(a, x));
  }
}

template <typename C>
void store_t(uint8_t* wire, const uint8_t* acc, size_t n) {
  for (size_t i = 0; i < n; ++i)
    write<typename C::Wire>(wire, i, C::narrow(read<typename C::Acc>(acc, i)));
}

constexpr Kernels kReference = {
    .isa = Isa::kReference,
    .load = {load_t<Int32>, load_t<Fp32>, load_t<Fp16>, load_t<Bf16>, load_t<Int8>, load_t<Fp8E4M3>,
             load_t<Fp8E5M2>},
    .combine = {{combine_t<Int32, ReduceOp::kSum>, combine_t<Int32, ReduceOp::kMin>,
                 combine_t<Int32, ReduceOp::kMax>},
                {combine_t<Fp32, ReduceOp::kSum>, combine_t<Fp32, ReduceOp::kMin>,
                 combine_t<Fp32, ReduceOp::kMax>},
                {combine_t<Fp16, ReduceOp::kSum>, combine_t<Fp16, ReduceOp::kMin>,
                 combine_t<Fp16, ReduceOp::kMax>},
                {combine_t<Bf16, ReduceOp::kSum>, combine_t<Bf16, ReduceOp::kMin>,
                 combine_t<Bf16, ReduceOp::kMax>},
                {combine_t<Int8, ReduceOp::kSum>, combine_t<Int8, ReduceOp::kMin>,
                 combine_t<Int8, ReduceOp::kMax>},
                {combine_t<Fp8E4M3, ReduceOp::kSum>, combine_t<Fp8E4M3, ReduceOp::kMin>,
                 combine_t<Fp8E4M3, ReduceOp::kMax>},
                {combine_t<Fp8E5M2, ReduceOp::kSum>, combine_t<Fp8E5M2, ReduceOp::kMin>,
                 combine_t<Fp8E5M2, ReduceOp::kMax>}},
    .store = {store_t<Int32>, store_t<Fp32>, store_t<Fp16>, store_t<Bf16>, store_t<Int8>,
              store_t<Fp8E4M3>, store_t<Fp8E5M2>},
};

}  // namespace

const Kernels* detail::reference_kernels() { return &kReference; }

namespace reference {

void load(DType t, uint8_t* acc, const uint8_t* wire, size_t n) {
  arith::load(kReference, t, acc, wire, n);
}
void combine(DType t, ReduceOp op, uint8_t* acc, const uint8_t* wire, size_t n) {
  arith::combine(kReference, t, op, acc, wire, n);
}
void store(DType t, uint8_t* wire, const uint8_t* acc, size_t n) {
  arith::store(kReference, t, wire, acc, n);
}

}  // namespace reference
}  // namespace epic::arith
