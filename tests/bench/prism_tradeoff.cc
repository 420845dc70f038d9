// prism_tradeoff: PRISM's reproducibility <-> state <-> throughput trade-off, measured. Per
// float dtype and accumulator profile, one core aggregates full 1024-byte payloads slot by slot
// as a switch does — fan-in 8: one load, seven combines (FP32_ARRIVAL, datapath/arith
// accumulate.h) or deposits (KULISCH_FIXED, kulisch.h), one store — over a pool of slots that
// lives in L2, the two profiles interleaved in every repetition. Reported per dtype and profile:
// elements aggregated per second per core (each contribution's elements count), the ratio
// KULISCH/ARRIVAL (median of the per-repetition ratios), accumulator bytes per element and per
// group (vocab::group_memory_bytes at window 64, pmtu 1024, R ranks), and the cores needed for
// 100 Gbit/s of rank payload into the switch. JSON lines (tests/bench/README.md).
//
//   prism_tradeoff [--reps N] [--ranks R] [--quick]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kulisch.h"
#include "proto/vocab/memory.h"
#include "tests/bench/bench_util.h"

namespace {

using epic::vocab::AccumProfile;
using epic::vocab::DType;
namespace arith = epic::arith;
namespace bench = epic::bench;

constexpr size_t kPayload = 1024;
constexpr int kFanIn = 8;
constexpr size_t kSlots = 32;  // accumulators and payloads of a few L2-resident slots

struct Aligned {
  std::vector<uint8_t> storage;
  uint8_t* p;
  explicit Aligned(size_t n) : storage(n + 64) {
    const auto a = reinterpret_cast<uintptr_t>(storage.data());
    p = storage.data() + (64 - a % 64) % 64;
  }
};

// Realistic gradients: values of mixed sign spanning a few binades.
std::vector<uint8_t> payloads(DType t, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t w = epic::vocab::wire_bytes(t);
  std::vector<uint8_t> out(count * kPayload);
  const auto f = epic::vocab::float_format(t);
  const uint32_t mbits = static_cast<uint32_t>(f->precision - 1);
  const uint32_t bias = static_cast<uint32_t>(f->bias);
  for (size_t i = 0; i < out.size() / w; ++i) {
    const uint32_t field = bias - 4 + static_cast<uint32_t>(rng() % 6);
    const uint32_t x = static_cast<uint32_t>(rng() & 1) << (f->exponent_bits + mbits) |
                       field << mbits | static_cast<uint32_t>(rng() & ((1u << mbits) - 1));
    std::memcpy(out.data() + i * w, &x, w);
  }
  return out;
}

// Seconds to aggregate every slot of the pool once (kFanIn contributions each) under `p`.
double aggregate(AccumProfile p, DType t, uint32_t ranks, Aligned& acc, size_t acc_stride,
                 const std::vector<uint8_t>& in, Aligned& out, int rounds) {
  const size_t n = kPayload / epic::vocab::wire_bytes(t);
  return bench::time_s([&] {
    for (int r = 0; r < rounds; ++r) {
      for (size_t s = 0; s < kSlots; ++s) {
        uint8_t* a = acc.p + s * acc_stride;
        const uint8_t* c = in.data() + s * kFanIn * kPayload;
        if (p == AccumProfile::kKulischFixed) {
          arith::kulisch::load(t, ranks, a, c, n);
          for (int k = 1; k < kFanIn; ++k)
            arith::kulisch::deposit(t, ranks, a, c + k * kPayload, n);
          arith::kulisch::store(t, ranks, out.p + s * kPayload, a, n);
        } else {
          arith::load(t, a, c, n);
          for (int k = 1; k < kFanIn; ++k) {
            arith::combine(t, epic::vocab::ReduceOp::kSum, a, c + k * kPayload, n);
          }
          arith::store(t, out.p + s * kPayload, a, n);
        }
      }
      bench::keep(out.p[0]);
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  uint32_t ranks = 8;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--ranks" && i + 1 < argc) {
      ranks = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (a == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: prism_tradeoff [--reps N] [--ranks R] [--quick]\n");
      return 2;
    }
  }
  if (quick) reps = 3;
  if (reps < 1 || ranks < 2 || ranks > 65535) {
    std::fprintf(stderr, "prism_tradeoff: --reps >= 1, --ranks 2..65535\n");
    return 2;
  }
  const int rounds = quick ? 4 : 64;
  const DType types[] = {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E4M3,
                         DType::kFp8E5M2};
  for (DType t : types) {
    const std::string name(epic::vocab::to_string(t));
    const size_t n = kPayload / epic::vocab::wire_bytes(t);
    const std::vector<uint8_t> in = payloads(t, kSlots * kFanIn, 42);
    const epic::vocab::GroupArith arrival{AccumProfile::kFp32Arrival, t};
    const epic::vocab::GroupArith exact{AccumProfile::kKulischFixed, t};
    const size_t stride_a = epic::vocab::slot_accum_bytes(kPayload, arrival, ranks);
    const size_t stride_k = epic::vocab::slot_accum_bytes(kPayload, exact, ranks);
    Aligned acc_a(kSlots * stride_a), acc_k(kSlots * stride_k), out(kSlots * kPayload);
    // Warm-up, then interleaved repetitions.
    aggregate(AccumProfile::kFp32Arrival, t, ranks, acc_a, stride_a, in, out, 2);
    aggregate(AccumProfile::kKulischFixed, t, ranks, acc_k, stride_k, in, out, 2);
    std::vector<double> rate_a, rate_k, ratio;
    const double elements = double(rounds) * kSlots * kFanIn * double(n);
    for (int r = 0; r < reps; ++r) {
      const double sa =
          aggregate(AccumProfile::kFp32Arrival, t, ranks, acc_a, stride_a, in, out, rounds);
      const double sk =
          aggregate(AccumProfile::kKulischFixed, t, ranks, acc_k, stride_k, in, out, rounds);
      rate_a.push_back(elements / sa);
      rate_k.push_back(elements / sk);
      ratio.push_back(sa / sk);
    }
    const double wire_bits = 8.0 * double(epic::vocab::wire_bytes(t));
    struct Row {
      const char* profile;
      const std::vector<double>* rates;
      epic::vocab::GroupArith arith_of;
    };
    for (const Row& row :
         {Row{"fp32_arrival", &rate_a, arrival}, Row{"kulisch_fixed", &rate_k, exact}}) {
      const char* profile = row.profile;
      const std::vector<double>* rates = row.rates;
      const epic::vocab::GroupArith& arith_of = row.arith_of;
      const bench::Stats s = bench::summarize(*rates);
      const double bytes_per_element =
          double(epic::vocab::slot_accum_bytes(kPayload, arith_of, ranks)) / double(n);
      const uint64_t group = epic::vocab::group_memory_bytes(64, kPayload, arith_of, ranks);
      char extra[320];
      std::snprintf(extra, sizeof extra,
                    "\"dtype\":\"%s\",\"profile\":\"%s\",\"ranks\":%u,\"fan_in\":%d,"
                    "\"accum_bytes_per_element\":%.2f,\"group_bytes_w64_pmtu1024\":%llu,"
                    "\"cores_for_100gbit\":%.2f,",
                    name.c_str(), profile, ranks, kFanIn, bytes_per_element,
                    static_cast<unsigned long long>(group), 100e9 / (s.median * wire_bits));
      bench::emit("prism_tradeoff", "elements_per_s_per_core", extra, s, "elements/s", reps);
    }
    char extra[96];
    std::snprintf(extra, sizeof extra, "\"dtype\":\"%s\",", name.c_str());
    bench::emit("prism_tradeoff", "kulisch_vs_arrival", extra, bench::summarize(ratio), "ratio",
                reps);
  }
  std::printf(
      "{\"bench\":\"prism_tradeoff\",\"metric\":\"prism_tradeoff_summary\",\"done\":true}\n");
  return 0;
}
