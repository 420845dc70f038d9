// inc-bench: libinc's collectives through EPIC, swept over sizes, verified,
// timed. One process per rank; every rank runs the same command (its rank and
// peer parameters from INC_* variables or --config). Rank 0 prints the table
// (or JSON lines with --json); every rank checks every result bit for bit.
//
//   INC_RANK=0 INC_RANKS=4 ... inc-bench --primitives allreduce,barrier --sizes 4K,4M
//
// Exit status: 0 all results correct, 1 a wrong result, 2 bad usage or
// configuration, 3 a collective failed (transport, timeout: the message says
// which rank waits for what).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "host/collective/layout.h"
#include "host/inc/comm_config.h"
#include "host/inc/communicator.h"
#include "tools/inc-bench/sweep.h"

namespace {

namespace b = epic::tools::bench;
namespace vocab = epic::vocab;
using epic::vocab::DType;

constexpr int kExitWrong = 1;
constexpr int kExitUsage = 2;
constexpr int kExitFailed = 3;

// "4K" -> 4096, "4M", "1G", "512": bytes.
bool parse_size(const std::string& s, size_t& out) {
  if (s.empty()) return false;
  size_t mult = 1;
  std::string num = s;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'K' || last == 'M' || last == 'G') {
    mult = last == 'K' ? 1024 : last == 'M' ? 1024 * 1024 : size_t{1} << 30;
    num.pop_back();
  }
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoull(num) * mult;
  return true;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t c = s.find(',', a);
    out.push_back(s.substr(a, c == std::string::npos ? std::string::npos : c - a));
    if (c == std::string::npos) break;
    a = c + 1;
  }
  return out;
}

std::string human_bytes(size_t b) {
  if (b >= (size_t{1} << 20) && b % (size_t{1} << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "inc-bench: EPIC collectives through the switch, a size sweep per primitive; every result "
      "verified bit for bit, latency percentiles and algorithm bandwidth (bytes of one rank's "
      "buffer / latency).\nPeer parameters: INC_* environment variables or --config FILE "
      "(docs/libinc.md), static or from inc-manager (INC_MANAGER, INC_GROUP, ...; with no INC "
      "memory the group may fall back to host collectives: the output's mode says \"host\"). "
      "Run the same command on every rank; rank 0 reports."};
  std::string config_path, primitives = "allreduce", dtypes = "fp32", op_name = "sum",
                           sizes = "4K,64K,1M,4M";
  uint32_t iters = 20, warmup = 3, root = 0;
  uint64_t seed = 1;
  bool json = false, no_verify = false, all_ranks = false;
  app.add_option("-c,--config", config_path, "KEY=VALUE file of INC_* peer parameters");
  app.add_option("-p,--primitives", primitives,
                 "comma list of allreduce, reduce, broadcast, barrier, reduce_scatter, allgather, "
                 "or all")
      ->capture_default_str();
  app.add_option("-d,--dtypes", dtypes,
                 "comma list of int32, fp32, fp16, bf16, int8, fp8_e4m3, fp8_e5m2")
      ->capture_default_str();
  std::string accumulator, group_dtype;
  app.add_option("--accumulator", accumulator,
                 "the group's accumulator profile, fp32_arrival or kulisch_fixed (overrides "
                 "INC_ACCUMULATOR; every rank and the switches must agree)");
  app.add_option("--group-dtype", group_dtype,
                 "the element type the group's switch memory is sized for (overrides INC_DTYPE)");
  app.add_option("--op", op_name, "sum, min or max")->capture_default_str();
  app.add_option("-s,--sizes", sizes,
                 "comma list of per-rank buffer sizes in bytes (suffix K, M, G); barrier ignores "
                 "them")
      ->capture_default_str();
  app.add_option("-n,--iters", iters, "timed calls per case")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("-w,--warmup", warmup, "untimed calls per case first")->capture_default_str();
  app.add_option("--root", root, "root of reduce and broadcast")->capture_default_str();
  app.add_option("--seed", seed, "input seed (every rank must use the same)")
      ->capture_default_str();
  app.add_flag("--json", json, "one JSON object per case instead of the table");
  app.add_flag("--no-verify", no_verify, "skip computing the expected results");
  app.add_flag("--all-ranks", all_ranks, "every rank prints its own lines (default: rank 0 only)");
  app.footer(
      "Exit status: 0 correct, 1 a wrong result, 2 usage/configuration, 3 a collective "
      "failed.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& err) {
    return app.exit(err) == 0 ? 0 : kExitUsage;
  }

  epic::inc::ConfigResult cfg =
      config_path.empty() ? epic::inc::config_from_env() : epic::inc::config_from_file(config_path);
  if (!cfg.ok()) {
    std::fprintf(stderr, "inc-bench: %s\n", cfg.error.c_str());
    return kExitUsage;
  }
  if (!accumulator.empty()) {
    const auto p = epic::vocab::parse_profile(accumulator);
    if (!p) {
      std::fprintf(stderr, "inc-bench: --accumulator %s: expected fp32_arrival or kulisch_fixed\n",
                   accumulator.c_str());
      return kExitUsage;
    }
    cfg.config.arith.profile = cfg.config.manager.arith.profile = *p;
  }
  if (!group_dtype.empty()) {
    const auto t = epic::vocab::parse_dtype(group_dtype);
    if (!t) {
      std::fprintf(stderr, "inc-bench: --group-dtype %s: not an element type\n",
                   group_dtype.c_str());
      return kExitUsage;
    }
    cfg.config.arith.dtype = cfg.config.manager.arith.dtype = *t;
  }
  if (cfg.config.arith.profile == epic::vocab::AccumProfile::kKulischFixed &&
      !cfg.config.arith.dtype) {
    std::fprintf(stderr, "inc-bench: --accumulator kulisch_fixed needs --group-dtype\n");
    return kExitUsage;
  }
  // Cases: validate everything before touching the network.
  std::vector<b::Case> cases;
  auto op = epic::vocab::parse_reduce_op(op_name);
  if (!op) {
    std::fprintf(stderr, "inc-bench: --op %s: expected sum, min or max\n", op_name.c_str());
    return kExitUsage;
  }
  if (primitives == "all")
    primitives = "allreduce,reduce,broadcast,barrier,reducescatter,allgather";
  std::vector<size_t> size_list;
  for (const std::string& s : split(sizes)) {
    size_t v = 0;
    if (!parse_size(s, v) || v == 0) {
      std::fprintf(stderr, "inc-bench: --sizes: '%s' is not a size like 4096, 4K or 4M\n",
                   s.c_str());
      return kExitUsage;
    }
    size_list.push_back(v);
  }
  for (const std::string& p : split(primitives)) {
    std::optional<vocab::CollectiveType> found;
    for (uint8_t code = 1; code <= 6; ++code) {
      const auto t = static_cast<vocab::CollectiveType>(code);
      std::string name(vocab::to_string(t));
      if (p == name || (name == "reduce_scatter" && p == "reducescatter")) found = t;
    }
    if (!found) {
      std::fprintf(stderr, "inc-bench: --primitives: unknown primitive '%s'\n", p.c_str());
      return kExitUsage;
    }
    const vocab::CollectiveType type = *found;
    if (type == vocab::CollectiveType::kBarrier) {
      cases.push_back({{type, DType::kInt32, epic::vocab::ReduceOp::kSum, 0, 0}, 0});
      continue;
    }
    for (const std::string& dn : split(dtypes)) {
      auto dt = epic::vocab::parse_dtype(dn);
      if (!dt) {
        std::fprintf(stderr, "inc-bench: --dtypes: unknown data type '%s'\n", dn.c_str());
        return kExitUsage;
      }
      const size_t esz = epic::vocab::wire_bytes(*dt);
      for (size_t bytes : size_list) {
        // bytes is one rank's buffer: its input, or for ReduceScatter its input of ranks chunks.
        size_t count = bytes / esz;
        if (type == vocab::CollectiveType::kReduceScatter) count /= cfg.config.ranks;
        if (count == 0 || count > UINT32_MAX) {
          std::fprintf(stderr, "inc-bench: size %zu gives %zu %s elements per collective\n", bytes,
                       count, dn.c_str());
          return kExitUsage;
        }
        const bool rooted =
            type == vocab::CollectiveType::kReduce || type == vocab::CollectiveType::kBroadcast;
        if (rooted && root >= cfg.config.ranks) {
          std::fprintf(stderr, "inc-bench: --root %u is not a rank of %u\n", root,
                       cfg.config.ranks);
          return kExitUsage;
        }
        // Fields a primitive does not use stay sum / root 0: every rank encodes the same control.
        const bool reduces =
            type != vocab::CollectiveType::kBroadcast && type != vocab::CollectiveType::kAllGather;
        cases.push_back({{type, *dt, reduces ? *op : epic::vocab::ReduceOp::kSum,
                          static_cast<uint16_t>(rooted ? root : 0), static_cast<uint32_t>(count)},
                         bytes});
      }
    }
  }

  auto created = epic::inc::Communicator::create(cfg.config);
  if (!created.ok()) {
    std::fprintf(stderr, "inc-bench: rank %u: %s\n", cfg.config.rank, created.error.c_str());
    return kExitFailed;
  }
  epic::inc::Communicator& comm = *created.value;
  const bool report = all_ranks || comm.rank() == 0;
  if (report && !json) {
    std::printf(
        "# inc-bench: %u ranks, mode %s, transport %s, %u timed + %u warm-up calls per case\n",
        comm.size(), std::string(comm.mode()).c_str(), std::string(comm.transport()).c_str(), iters,
        warmup);
    std::printf("%-14s %-5s %-4s %8s %10s %10s %10s %10s %10s %10s %s\n", "primitive", "dtype",
                "op", "bytes", "p50_us", "p90_us", "p99_us", "min_us", "max_us", "algbw_GB/s",
                "check");
  }
  b::SweepOptions so{iters, warmup, !no_verify, seed, cfg.config.arith};
  int exit_code = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const b::CaseResult r = b::run_case(comm, cases[i], i, so);
    const std::string prim(vocab::to_string(r.c.desc.type));
    if (!r.error.empty()) {
      std::fprintf(stderr, "inc-bench: rank %u: %s %s: %s\n", comm.rank(), prim.c_str(),
                   human_bytes(r.c.bytes).c_str(), r.error.c_str());
      return kExitFailed;
    }
    if (r.wrong > 0) {
      std::fprintf(stderr, "inc-bench: rank %u: %s %s %s: %u of %u results WRONG\n", comm.rank(),
                   prim.c_str(), std::string(epic::vocab::to_string(r.c.desc.dtype)).c_str(),
                   human_bytes(r.c.bytes).c_str(), r.wrong, warmup + iters);
      exit_code = kExitWrong;
    }
    const double p50 = b::percentile(r.latency_us, 50), p90 = b::percentile(r.latency_us, 90),
                 p99 = b::percentile(r.latency_us, 99), lo = b::percentile(r.latency_us, 0),
                 hi = b::percentile(r.latency_us, 100);
    const double algbw = p50 > 0 ? static_cast<double>(r.c.bytes) / (p50 * 1e3) : 0.0;  // GB/s
    const std::string check = !r.verified ? "unchecked" : r.wrong == 0 ? "ok" : "WRONG";
    if (!report) continue;
    if (json) {
      nlohmann::json j = {{"tool", "epic"},
                          {"mode", std::string(comm.mode())},  // "inc" | "host" (fallback)
                          {"transport", std::string(comm.transport())},
                          {"rank", comm.rank()},
                          {"ranks", comm.size()},
                          {"primitive", prim},
                          {"dtype", std::string(epic::vocab::to_string(r.c.desc.dtype))},
                          {"op", std::string(epic::vocab::to_string(r.c.desc.op))},
                          {"bytes", r.c.bytes},
                          {"iters", r.iters},
                          {"p50_us", p50},
                          {"p90_us", p90},
                          {"p99_us", p99},
                          {"min_us", lo},
                          {"max_us", hi},
                          {"algbw_gbps", algbw},
                          {"verified", r.verified && r.wrong == 0},
                          {"wrong", r.wrong}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      const bool barrier = r.c.desc.type == vocab::CollectiveType::kBarrier;
      std::printf("%-14s %-5s %-4s %8s %10.1f %10.1f %10.1f %10.1f %10.1f %10.3f %s\n",
                  prim.c_str(),
                  barrier ? "-" : std::string(epic::vocab::to_string(r.c.desc.dtype)).c_str(),
                  barrier ? "-" : std::string(epic::vocab::to_string(r.c.desc.op)).c_str(),
                  human_bytes(r.c.bytes).c_str(), p50, p90, p99, lo, hi, algbw, check.c_str());
    }
    std::fflush(stdout);
  }
  const epic::inc::Status closed = comm.close();
  if (!closed.ok()) {
    std::fprintf(stderr, "inc-bench: rank %u: close: %s\n", comm.rank(), closed.message.c_str());
    return exit_code == 0 ? kExitFailed : exit_code;
  }
  return exit_code;
}
