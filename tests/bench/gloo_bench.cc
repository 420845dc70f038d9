// gloo_bench: the host-based baseline of EPIC's collective benchmarks — one rank of a Gloo
// (Debian 12's libgloo-dev) group over Gloo's TCP transport, timing AllReduce (ring) or
// Barrier. tests/bench/inc_vs_gloo.py runs one per rank namespace, beside EPIC through incd.
//
//   gloo_bench --rank R --ranks N --iface IFACE_OR_IP --store DIR
//              --primitive allreduce|barrier [--dtype int32|fp32] [--bytes B]
//              [--iters N] [--warmup W] [--timeout-ms T] [--json]
//   gloo_bench --quick      2 ranks forked on 127.0.0.1, a few small AllReduces (ctest smoke)
//
// Rendezvous: gloo's FileStore in DIR, a directory every rank sees (network namespaces share
// the filesystem); DIR must exist and be fresh for each group (stale keys of an earlier group
// would be read as this one's). The TCP device binds to IFACE_OR_IP: an IPv4 address, or an
// interface name whose IPv4 address is used.
//
// AllReduce: sum over B bytes of int32 or fp32 per rank, in place, gloo::allreduce with the
// ring algorithm. Element i of rank r at iteration k is (7r + 3i) mod 61 + (k mod 5), a small
// integer, so the fp32 sum is exact; every rank checks every element of every iteration
// (outside the timed region) against the closed-form sum. Barrier: gloo::barrier (a
// dissemination barrier); nothing to check beyond its completion.
//
// Timing: steady_clock around each operation (only the gloo call), on every rank; rank 0's
// W warm-up iterations are dropped and its N timed ones summarised. After the last iteration
// the ranks AllReduce their error counts, so "verified" is true only if every rank saw every
// result right. Only rank 0 prints; with --json one line:
//   {"tool":"gloo","primitive":"allreduce","algorithm":"ring","dtype":"fp32","bytes":4096,
//    "ranks":4,"iters":20,"warmup":5,"p50_us":..,"p90_us":..,"min_us":..,"max_us":..,
//    "algbw_gbps":..,"verified":true}
// algbw_gbps = bytes * 8 / p50 (gigabits per second of one rank's buffer; 0 for a barrier).
//
// Exit status: 0 every result right, 1 a wrong result (on any rank), 2 usage error,
// 3 setup failure or timeout (rendezvous, connection, an operation: each bounded by
// --timeout-ms), with the reason on stderr.
#include <arpa/inet.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/transport/tcp/device.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kExitPass = 0, kExitWrong = 1, kExitUsage = 2, kExitSetup = 3;

struct Options {
  int rank = -1;
  int ranks = 0;
  std::string iface;
  std::string store;
  std::string primitive = "allreduce";
  std::string dtype = "fp32";
  uint64_t bytes = 4096;
  unsigned iters = 20;
  unsigned warmup = 5;
  unsigned timeout_ms = 30000;
  bool json = false;
  bool quick = false;
};

// FileStore whose one-argument wait() (the one connectFullMesh calls) is bounded by our
// timeout instead of the store's 30 s default.
class BoundedFileStore : public gloo::rendezvous::FileStore {
 public:
  BoundedFileStore(const std::string& path, std::chrono::milliseconds timeout)
      : FileStore(path), timeout_(timeout) {}
  using FileStore::wait;
  void wait(const std::vector<std::string>& keys) override { FileStore::wait(keys, timeout_); }

 private:
  std::chrono::milliseconds timeout_;
};

int input_value(int rank, uint64_t i, uint64_t k) {
  return static_cast<int>((7 * static_cast<uint64_t>(rank) + 3 * i) % 61 + k % 5);
}

// Sum over all ranks of input_value(r, i, 0): the result of iteration k is this + ranks*(k%5).
std::vector<int64_t> base_sums(int ranks, uint64_t count) {
  std::vector<int64_t> s(count, 0);
  for (int r = 0; r < ranks; ++r) {
    for (uint64_t i = 0; i < count; ++i) s[i] += input_value(r, i, 0);
  }
  return s;
}

template <typename T>
void add_into(void* c, const void* a, const void* b, size_t n) {
  T* out = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double tenth(double x) { return std::round(x * 10) / 10; }

struct Outcome {
  std::vector<double> latencies_us;  // timed iterations only
  uint64_t wrong = 0;                // this rank's wrong iterations
  uint64_t wrong_all = 0;            // every rank's, after the final exchange
};

template <typename T>
uint64_t run_allreduce(const std::shared_ptr<gloo::Context>& ctx, const Options& o,
                       std::vector<double>& lat) {
  const uint64_t count = o.bytes / sizeof(T);
  const std::vector<int64_t> base = base_sums(o.ranks, count);
  std::vector<T> buf(count);
  uint64_t wrong = 0;
  const uint64_t total = uint64_t{o.warmup} + o.iters;
  for (uint64_t k = 0; k < total; ++k) {
    for (uint64_t i = 0; i < count; ++i) buf[i] = static_cast<T>(input_value(o.rank, i, k));
    gloo::AllreduceOptions opts(ctx);
    opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    opts.setOutput(buf.data(), count);
    opts.setReduceFunction(&add_into<T>);
    opts.setTimeout(std::chrono::milliseconds(o.timeout_ms));
    const auto t0 = Clock::now();
    gloo::allreduce(opts);
    const auto t1 = Clock::now();
    if (k >= o.warmup) lat.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    const int64_t add = int64_t{o.ranks} * static_cast<int64_t>(k % 5);
    for (uint64_t i = 0; i < count; ++i) {
      if (buf[i] != static_cast<T>(base[i] + add)) {
        if (wrong == 0) {
          std::fprintf(
              stderr, "gloo_bench: rank %d: iteration %llu: element %llu is %.17g, want %lld\n",
              o.rank, static_cast<unsigned long long>(k), static_cast<unsigned long long>(i),
              static_cast<double>(buf[i]), static_cast<long long>(base[i] + add));
        }
        ++wrong;
        break;
      }
    }
  }
  return wrong;
}

void run_barrier(const std::shared_ptr<gloo::Context>& ctx, const Options& o,
                 std::vector<double>& lat) {
  const uint64_t total = uint64_t{o.warmup} + o.iters;
  for (uint64_t k = 0; k < total; ++k) {
    gloo::BarrierOptions opts(ctx);
    opts.setTimeout(std::chrono::milliseconds(o.timeout_ms));
    const auto t0 = Clock::now();
    gloo::barrier(opts);
    const auto t1 = Clock::now();
    if (k >= o.warmup) lat.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
}

std::shared_ptr<gloo::transport::Device> make_device(const std::string& iface_or_ip) {
  gloo::transport::tcp::attr attr;
  in_addr a{};
  if (inet_pton(AF_INET, iface_or_ip.c_str(), &a) == 1) {
    attr.hostname = iface_or_ip;
  } else {
    attr.iface = iface_or_ip;
  }
  attr.ai_family = AF_INET;
  return gloo::transport::tcp::CreateDevice(attr);
}

Outcome run_rank(const Options& o) {
  Outcome out;
  const std::chrono::milliseconds timeout(o.timeout_ms);
  auto dev = make_device(o.iface);
  BoundedFileStore store(o.store, timeout);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(o.rank, o.ranks);
  ctx->setTimeout(timeout);
  ctx->connectFullMesh(store, dev);
  if (o.primitive == "barrier") {
    run_barrier(ctx, o, out.latencies_us);
  } else if (o.dtype == "int32") {
    out.wrong = run_allreduce<int32_t>(ctx, o, out.latencies_us);
  } else {
    out.wrong = run_allreduce<float>(ctx, o, out.latencies_us);
  }
  // Every rank's error count, so that rank 0 reports the group's verdict.
  uint64_t wrong = out.wrong;
  gloo::AllreduceOptions opts(ctx);
  opts.setOutput(&wrong, 1);
  opts.setReduceFunction(&add_into<uint64_t>);
  opts.setTimeout(timeout);
  opts.setTag(1);
  gloo::allreduce(opts);
  out.wrong_all = wrong;
  return out;
}

std::string report(const Options& o, const Outcome& out) {
  const std::vector<double>& l = out.latencies_us;
  const double p50 = percentile(l, 0.5);
  const bool barrier = o.primitive == "barrier";
  const uint64_t bytes = barrier ? 0 : o.bytes;
  nlohmann::ordered_json j;
  j["tool"] = "gloo";
  j["primitive"] = o.primitive;
  j["algorithm"] = barrier ? "dissemination" : "ring";
  j["dtype"] = barrier ? "none" : o.dtype;
  j["bytes"] = bytes;
  j["ranks"] = o.ranks;
  j["iters"] = o.iters;
  j["warmup"] = o.warmup;
  j["p50_us"] = tenth(p50);
  j["p90_us"] = tenth(percentile(l, 0.9));
  j["min_us"] = tenth(l.empty() ? 0.0 : *std::min_element(l.begin(), l.end()));
  j["max_us"] = tenth(l.empty() ? 0.0 : *std::max_element(l.begin(), l.end()));
  j["algbw_gbps"] =
      p50 > 0 ? std::round(static_cast<double>(bytes) * 8 / (p50 * 1e3) * 1000) / 1000 : 0.0;
  j["verified"] = out.wrong_all == 0;
  if (!o.json) {
    char s[256];
    std::snprintf(s, sizeof s,
                  "GLOO_BENCH %s %s bytes=%llu ranks=%d iters=%u p50_us=%.1f p90_us=%.1f %s",
                  o.primitive.c_str(), barrier ? "-" : o.dtype.c_str(),
                  static_cast<unsigned long long>(bytes), o.ranks, o.iters, p50, percentile(l, 0.9),
                  out.wrong_all == 0 ? "verified" : "WRONG");
    return s;
  }
  return j.dump();
}

int run_and_report(const Options& o) {
  try {
    const Outcome out = run_rank(o);
    if (o.rank == 0) {
      std::printf("%s\n", report(o, out).c_str());
      std::fflush(stdout);
    }
    return out.wrong_all == 0 && out.wrong == 0 ? kExitPass : kExitWrong;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_bench: rank %d: %s\n", o.rank, e.what());
    return kExitSetup;
  }
}

// --quick: fork `ranks` processes on 127.0.0.1 with a fresh store; bounded by the timeout.
int run_quick(Options o) {
  char tmpl[] = "/tmp/gloo_bench.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("gloo_bench: mkdtemp");
    return kExitSetup;
  }
  o.store = tmpl;
  o.ranks = 2;
  o.iface = "127.0.0.1";
  o.bytes = 4096;
  o.iters = 5;
  o.warmup = 1;
  o.timeout_ms = 10000;
  std::vector<pid_t> pids;
  for (int r = 0; r < o.ranks; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("gloo_bench: fork");
      for (pid_t p : pids) kill(p, SIGKILL);
      break;
    }
    if (pid == 0) {
      Options mine = o;
      mine.rank = r;
      std::_Exit(run_and_report(mine));
    }
    pids.push_back(pid);
  }
  int rc = pids.size() == static_cast<size_t>(o.ranks) ? kExitPass : kExitSetup;
  const auto deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms + 5000);
  for (pid_t p : pids) {
    int status = 0;
    while (true) {
      const pid_t w = waitpid(p, &status, WNOHANG);
      if (w == p) break;
      if (w < 0 || Clock::now() >= deadline) {
        std::fprintf(stderr, "gloo_bench: --quick: rank process %d did not finish in time\n",
                     static_cast<int>(p));
        kill(p, SIGKILL);
        waitpid(p, &status, 0);
        status = kExitSetup << 8;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitSetup;
    if (code != kExitPass && rc == kExitPass) rc = code;
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app("gloo_bench: one rank of a Gloo AllReduce/Barrier benchmark (TCP transport)",
               "gloo_bench");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--rank", o.rank, "this rank, 0 .. ranks-1");
  app.add_option("--ranks", o.ranks, "ranks in the group")->check(CLI::Range(1, 65535));
  app.add_option("--iface", o.iface, "IPv4 address or interface to bind the TCP device to");
  app.add_option("--store", o.store, "FileStore directory shared by the ranks (fresh)");
  app.add_option("--primitive", o.primitive)->check(CLI::IsMember({"allreduce", "barrier"}));
  app.add_option("--dtype", o.dtype)->check(CLI::IsMember({"int32", "fp32"}));
  app.add_option("--bytes", o.bytes, "bytes per rank (AllReduce), a multiple of 4")
      ->check(CLI::Range(uint64_t{4}, uint64_t{1} << 30));
  app.add_option("--iters", o.iters, "timed iterations")->check(CLI::Range(1u, 10000000u));
  app.add_option("--warmup", o.warmup, "untimed iterations first")
      ->check(CLI::Range(0u, 10000000u));
  app.add_option("--timeout-ms", o.timeout_ms, "rendezvous, connection, each operation")
      ->check(CLI::Range(1u, 3600000u));
  app.add_flag("--json", o.json, "one JSON line on rank 0");
  app.add_flag("--quick", o.quick, "smoke: 2 ranks forked on 127.0.0.1");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitPass : kExitUsage;
  }
  if (o.quick) return run_quick(o);
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "gloo_bench: %s (--help for usage)\n", why.c_str());
    return kExitUsage;
  };
  if (o.ranks < 1) return usage("--ranks N is required");
  if (o.rank < 0 || o.rank >= o.ranks) {
    return usage("--rank must be 0 .. " + std::to_string(o.ranks - 1));
  }
  if (o.iface.empty()) return usage("--iface IFACE_OR_IP is required");
  if (o.store.empty()) return usage("--store DIR is required");
  struct stat st {};
  if (stat(o.store.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      access(o.store.c_str(), W_OK) != 0) {
    return usage("--store " + o.store + " is not a writable directory");
  }
  if (o.primitive == "allreduce" && o.bytes % 4 != 0) {
    return usage("--bytes must be a multiple of 4 (int32/fp32 elements), got " +
                 std::to_string(o.bytes));
  }
  return run_and_report(o);
}
