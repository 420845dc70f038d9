// arith_bench: slot accumulation throughput on one core, next to memcpy of the
// same payload bytes measured in the same run (interleaved, median of N
// repetitions after a warm-up):
//   - combine() GB/s of wire payload for int32/fp32/fp16/bf16/int8/fp8 E4M3/
//     fp8 E5M2 sum (--all-ops:
//     also min and max) at 1 KB and 4 KB payloads, through the public API
//     (dispatched), each kernel table the CPU runs (avx512, avx2, portable)
//     and the scalar reference;
//   - load() and store() through the public API;
//   - fp32 sum over subnormal operands (hardware assists would show here).
// Payloads cycle through a pool of slots (--pool, default 64: accumulators and
// payloads stay in L2, as a group's slot memory would). GB/s counts wire bytes: an fp16/bf16
// combine also reads and writes 4-byte accumulators, twice the wire bytes (fp8: four times;
// int8 accumulates in one byte).
// Output: JSON lines (tests/bench/README.md). --quick for a CI smoke run.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kernels.h"
#include "tests/bench/bench_util.h"

namespace {

using namespace epic;
using arith::DType;
using arith::ReduceOp;
using bench::emit;
using bench::keep;
using bench::summarize;
using bench::time_s;

// Slots cycled through (--pool); 64 keeps accumulators and payloads in L2, as
// a group's slot memory would be; 8 fits 1 KB payloads in L1.
size_t kPool = 64;

// Offsets from a 64-byte boundary (--acc-offset, --wire-offset): an mbuf's
// payload sits 54-58 bytes into a cache line behind its RoCEv2 headers.
size_t kAccOffset = 0;
size_t kWireOffset = 0;

// `size` bytes starting `offset` bytes past a 64-byte boundary.
class Buffer {
 public:
  Buffer(size_t size, size_t offset) : storage_(size + 128) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    start_ = static_cast<size_t>((64 - base % 64) % 64) + offset % 64;
  }
  uint8_t* data() { return storage_.data() + start_; }
  uint8_t& operator[](size_t i) { return data()[i]; }

 private:
  std::vector<uint8_t> storage_;
  size_t start_ = 0;
};

struct Impl {
  std::string name;
  const arith::Kernels* kernels;  // nullptr: the public API (dispatched)
};

// Random payloads of ordinary magnitudes (no NaN, inf or subnormals unless asked).
Buffer make_payloads(DType t, size_t n, std::mt19937& rng, bool subnormal) {
  Buffer out(kPool * n * arith::wire_bytes(t), kWireOffset);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> f(n);
  for (size_t s = 0; s < kPool; ++s) {
    uint8_t* p = out.data() + s * n * arith::wire_bytes(t);
    if (t == DType::kInt32) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t v = rng();
        std::memcpy(p + 4 * i, &v, 4);
      }
      continue;
    }
    if (t == DType::kInt8) {
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng());
      continue;
    }
    for (auto& x : f) {
      x = value(rng);
      if (subnormal) {  // +-(1..15) * 2^-149
        const uint32_t b = (rng() % 15 + 1) | (rng() % 2 ? 0x80000000u : 0);
        std::memcpy(&x, &b, 4);
      }
    }
    // Wire encoding through the reference store (exact for fp32).
    arith::reference::store(t, p, reinterpret_cast<const uint8_t*>(f.data()), n);
  }
  return out;
}

struct Options {
  bool quick = false;
  bool all_ops = false;
  int reps = 7;
};

// One (dtype, op, payload size) row: every implementation and memcpy, interleaved.
void run_combine(const Options& o, DType t, ReduceOp op, size_t payload, bool subnormal,
                 const std::vector<Impl>& impls) {
  const size_t n = payload / arith::wire_bytes(t);
  std::mt19937 rng(static_cast<unsigned>(payload) * 31 + static_cast<unsigned>(t));
  auto wire = make_payloads(t, n, rng, subnormal);
  const size_t ab = arith::accum_bytes(t);  // accumulator bytes per element
  Buffer acc(kPool * n * ab, kAccOffset), dst(kPool * payload, kAccOffset);
  for (size_t s = 0; s < kPool; ++s)
    arith::reference::load(t, acc.data() + s * n * ab, wire.data() + s * payload, n);
  const double target = o.quick ? 2e6 : 128e6;  // wire bytes per repetition and implementation
  const int iters = static_cast<int>(target / static_cast<double>(payload * kPool)) + 1;
  auto gbps = [&](double s) { return static_cast<double>(payload) * kPool * iters / s / 1e9; };

  std::vector<std::vector<double>> v(impls.size());
  std::vector<double> copy_v;
  for (int r = -1; r < o.reps; ++r) {  // r == -1 is the warm-up
    for (size_t k = 0; k < impls.size(); ++k) {
      const auto* kt = impls[k].kernels;
      const double s = time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (size_t sl = 0; sl < kPool; ++sl) {
            uint8_t* a = acc.data() + sl * n * ab;
            const uint8_t* w = wire.data() + sl * payload;
            if (kt == nullptr)
              arith::combine(t, op, a, w, n);
            else
              arith::combine(*kt, t, op, a, w, n);
          }
        keep(acc[0]);
      });
      if (r >= 0) v[k].push_back(gbps(s));
    }
    const double s = time_s([&] {
      for (int it = 0; it < iters; ++it)
        for (size_t sl = 0; sl < kPool; ++sl) {
          std::memcpy(dst.data() + sl * payload, wire.data() + sl * payload, payload);
          keep(dst[sl * payload]);
        }
    });
    if (r >= 0) copy_v.push_back(gbps(s));
  }
  const std::string row =
      "\"dtype\":\"" + std::string(arith::to_string(t)) + "\",\"op\":\"" +
      std::string(arith::to_string(op)) + "\",\"payload_bytes\":" + std::to_string(payload) +
      ",\"elements\":" + std::to_string(n) + (subnormal ? ",\"operands\":\"subnormal\"," : ",");
  const auto copy = summarize(copy_v);
  const auto ref = summarize(v.back());  // the reference is always last
  emit("arith", "memcpy", row, copy, "GB/s", o.reps);
  for (size_t k = 0; k < impls.size(); ++k) {
    const auto st = summarize(v[k]);
    emit("arith", "combine", row + "\"impl\":\"" + impls[k].name + "\",", st, "GB/s", o.reps);
    std::printf(
        "{\"bench\":\"arith\",\"metric\":\"combine_vs_memcpy\",%s\"impl\":\"%s\","
        "\"ratio\":%.3f,\"speedup_vs_reference\":%.2f,\"note\":\"combine GB/s / memcpy GB/s "
        "of the same payload bytes (medians)\"}\n",
        row.c_str(), impls[k].name.c_str(), st.median / copy.median, st.median / ref.median);
  }
}

// load() and store() through the public API and the reference.
void run_load_store(const Options& o, DType t, size_t payload) {
  const size_t n = payload / arith::wire_bytes(t);
  std::mt19937 rng(static_cast<unsigned>(payload) + 7);
  auto wire = make_payloads(t, n, rng, false);
  const size_t ab = arith::accum_bytes(t);  // accumulator bytes per element
  Buffer acc(kPool * n * ab, kAccOffset), out(kPool * payload, kAccOffset);
  for (size_t s = 0; s < kPool; ++s)
    arith::reference::load(t, acc.data() + s * n * ab, wire.data() + s * payload, n);
  const double target = o.quick ? 2e6 : 128e6;
  const int iters = static_cast<int>(target / static_cast<double>(payload * kPool)) + 1;
  auto gbps = [&](double s) { return static_cast<double>(payload) * kPool * iters / s / 1e9; };
  std::vector<double> load_api, load_ref, store_api, store_ref;
  for (int r = -1; r < o.reps; ++r) {
    auto time_loads = [&](bool ref) {
      return time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (size_t sl = 0; sl < kPool; ++sl) {
            uint8_t* a = acc.data() + sl * n * ab;
            const uint8_t* w = wire.data() + sl * payload;
            ref ? arith::reference::load(t, a, w, n) : arith::load(t, a, w, n);
          }
        keep(acc[0]);
      });
    };
    auto time_stores = [&](bool ref) {
      return time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (size_t sl = 0; sl < kPool; ++sl) {
            uint8_t* w = out.data() + sl * payload;
            const uint8_t* a = acc.data() + sl * n * ab;
            ref ? arith::reference::store(t, w, a, n) : arith::store(t, w, a, n);
          }
        keep(out[0]);
      });
    };
    const double la = time_loads(false), lr = time_loads(true);
    const double sa = time_stores(false), sr = time_stores(true);
    if (r < 0) continue;
    load_api.push_back(gbps(la));
    load_ref.push_back(gbps(lr));
    store_api.push_back(gbps(sa));
    store_ref.push_back(gbps(sr));
  }
  const std::string row = "\"dtype\":\"" + std::string(arith::to_string(t)) +
                          "\",\"payload_bytes\":" + std::to_string(payload) + ",";
  emit("arith", "load", row + "\"impl\":\"api\",", summarize(load_api), "GB/s", o.reps);
  emit("arith", "load", row + "\"impl\":\"reference\",", summarize(load_ref), "GB/s", o.reps);
  emit("arith", "store", row + "\"impl\":\"api\",", summarize(store_api), "GB/s", o.reps);
  emit("arith", "store", row + "\"impl\":\"reference\",", summarize(store_ref), "GB/s", o.reps);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
      o.reps = 3;
    } else if (a == "--json") {
      // JSON lines are the only output format.
    } else if (a == "--pool" && i + 1 < argc) {
      kPool = static_cast<size_t>(std::max(1, std::atoi(argv[++i])));
    } else if (a == "--acc-offset" && i + 1 < argc) {
      kAccOffset = static_cast<size_t>(std::max(0, std::atoi(argv[++i])));
    } else if (a == "--wire-offset" && i + 1 < argc) {
      kWireOffset = static_cast<size_t>(std::max(0, std::atoi(argv[++i])));
    } else if (a == "--all-ops") {
      o.all_ops = true;
    } else if (a == "--reps" && i + 1 < argc) {
      o.reps = std::max(3, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: arith_bench [--json] [--quick] [--reps N] [--pool SLOTS] [--all-ops]\n"
                   "                   [--acc-offset B] [--wire-offset B]\n"
                   "combine/load/store GB/s on one core next to memcpy; JSON lines.\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }

  const arith::Isa active = arith::active_kernels().isa;
  std::vector<Impl> impls = {{"api(" + std::string(arith::to_string(active)) + ")", nullptr}};
  for (arith::Isa isa : {arith::Isa::kAvx512, arith::Isa::kAvx2, arith::Isa::kPortable})
    if (const auto* k = arith::kernels_for(isa)) impls.push_back({std::string(to_string(isa)), k});
  impls.push_back({"reference", arith::kernels_for(arith::Isa::kReference)});

  std::printf(
      "{\"bench\":\"arith\",\"metric\":\"config\",\"active_isa\":\"%s\",\"pool_slots\":%zu,"
      "\"acc_offset\":%zu,\"wire_offset\":%zu}\n",
      std::string(arith::to_string(active)).c_str(), kPool, kAccOffset % 64, kWireOffset % 64);
  const DType kTypes[] = {DType::kFp32, DType::kBf16,    DType::kFp16,   DType::kInt32,
                          DType::kInt8, DType::kFp8E4M3, DType::kFp8E5M2};
  const std::vector<ReduceOp> ops =
      o.all_ops ? std::vector<ReduceOp>{ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}
                : std::vector<ReduceOp>{ReduceOp::kSum};
  for (size_t payload : {1024, 4096})
    for (DType t : kTypes)
      for (ReduceOp op : ops) run_combine(o, t, op, payload, false, impls);
  for (size_t payload : {1024, 4096})
    run_combine(o, DType::kFp32, ReduceOp::kSum, payload, true, impls);
  for (size_t payload : {1024, 4096})
    for (DType t : kTypes) run_load_store(o, t, payload);
  return 0;
}
