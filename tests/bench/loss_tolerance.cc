// loss_tolerance: goodput of an AllReduce against the packet loss rate, Mode-II against
// Mode-III, on one switch (fan-in 2, 4, 8) and on a leaf/spine tree — a packet-level
// simulation: the deterministic harness (tests/harness) runs the real engine and unmodified
// soft RC ranks on links with a line rate and a propagation delay, in virtual time, with
// seeded random loss on every link in both directions (ACKs included). Goodput is the
// AllReduce's bytes per rank over its virtual completion time. Every result is checked bit for
// bit (a wrong or missing result aborts the benchmark). The baselines are in the same run: the
// same mode loss-free, and the other mode at the same loss. EPIC's formulas (DESIGN.md §2:
// Mode-III ≈ B·r^(2(H−1)), Mode-II ≈ B·r^(2(H−1)(D−1)), r = 1 − loss, H the tree's levels
// counting the ranks, D the largest fan-in) are printed next to each point;
// tests/bench/plot_loss_tolerance.py draws them.
//   loss_tolerance [--quick] [--seeds N] [--mib M] [--gbps G] [--hop-timeout-us T]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "host/collective/inputs.h"
#include "tests/bench/bench_util.h"
#include "tests/harness/mode2_harness.h"

namespace {

using epic::harness::HarnessConfig;
using epic::vocab::CollectiveDescriptor;
using epic::vocab::CollectiveType;
using epic::vocab::GroupMode;

struct Options {
  int seeds = 5;
  double mib = 4;
  double gbps = 100;
  uint32_t hop_timeout_us = 100;
  uint32_t window = 64;
  uint32_t rank_window = 0;
  uint64_t rank_timeout_us = 2000;
  std::string only_tree;  // "": every tree
  double only_loss = -1;  // < 0: every loss rate
  bool quick = false;
};

struct Tree {
  std::string name;
  std::vector<int> shape;
};

int levels(const Tree& t) { return static_cast<int>(t.shape.size()) + 1; }
int max_fan_in(const Tree& t) {
  int d = 0;
  for (int f : t.shape) d = std::max(d, f);
  return d;
}

// Goodput (Gb/s) of each seed; exits on any failure.
std::vector<double> measure(const Options& o, const Tree& tree, GroupMode mode, double loss) {
  const int R = epic::harness::rank_count(tree.shape);
  HarnessConfig cfg;
  cfg.shape = tree.shape;
  cfg.mode = mode;
  cfg.window = o.window;
  if (mode == GroupMode::kMode3) cfg.rank_window = o.rank_window;
  cfg.pmtu = 4096;
  cfg.link_gbps = o.gbps;
  cfg.link_delay_ns = 1000;
  cfg.hop_timeout_us = o.hop_timeout_us;
  cfg.rank_timeout_ns = o.rank_timeout_us * 1000;
  cfg.faults.loss = loss;
  cfg.time_limit_ns = 60'000'000'000;
  const auto count = static_cast<uint32_t>(o.mib * 1024 * 1024 / 4);
  const CollectiveDescriptor d{CollectiveType::kAllReduce, epic::vocab::DType::kFp32,
                               epic::vocab::ReduceOp::kSum, 0, count};
  std::vector<double> out;
  for (int s = 1; s <= o.seeds; ++s) {
    cfg.seed = static_cast<uint64_t>(s);
    const std::vector<std::vector<std::vector<uint8_t>>> inputs = {
        epic::host::exact_inputs(d, static_cast<uint16_t>(R), cfg.seed, 0)};
    const epic::harness::RunResult r = epic::harness::run(cfg, {d}, inputs);
    if (!r.ok) {
      std::fprintf(stderr, "loss_tolerance: %s mode %d loss %g seed %d failed: %s\n",
                   tree.name.c_str(), static_cast<int>(mode), loss, s, r.failure.c_str());
      std::exit(1);
    }
    // goodput to the last result (a Mode-III run then drains: the ACKs and nudges still due)
    out.push_back(static_cast<double>(count) * 4 * 8 / static_cast<double>(r.done_ns));
  }
  return out;
}

const char* mode_name(GroupMode m) { return m == GroupMode::kMode3 ? "III" : "II"; }

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--json") {
      // JSON lines are the only output (tests/bench/run.sh passes --json to every benchmark).
    } else if (a == "--quick") {
      o.quick = true;
      o.seeds = 1;
      o.mib = 0.25;
    } else if (a == "--seeds" && has) {
      o.seeds = std::atoi(argv[++i]);
    } else if (a == "--mib" && has) {
      o.mib = std::atof(argv[++i]);
    } else if (a == "--gbps" && has) {
      o.gbps = std::atof(argv[++i]);
    } else if (a == "--rank-timeout-us" && has) {
      o.rank_timeout_us = static_cast<uint64_t>(std::atoll(argv[++i]));
    } else if (a == "--tree" && has) {
      o.only_tree = argv[++i];
    } else if (a == "--loss" && has) {
      o.only_loss = std::atof(argv[++i]);
    } else if (a == "--rank-window" && has) {
      o.rank_window = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (a == "--window" && has) {
      o.window = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (a == "--hop-timeout-us" && has) {
      o.hop_timeout_us = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (a == "-h" || a == "--help") {
      std::puts(
          "loss_tolerance [--quick] [--seeds N] [--mib M] [--gbps G] [--hop-timeout-us T]\n"
          "               [--rank-timeout-us T] [--tree NAME] [--loss FRACTION]\n"
          "               [--window MW] [--rank-window W]\n"
          "  AllReduce goodput vs loss rate, Mode-II vs Mode-III, packet-level simulation of\n"
          "  the real engine (tests/harness); JSON lines on stdout. Defaults: 5 seeds, 4 MiB\n"
          "  fp32 per rank, 100 Gb/s links with 1 us delay, window 64, path MTU 4096,\n"
          "  Mode-III hop timeout 100 us, the ranks' RC timeout 2 ms. --tree (one_switch_2,\n"
          "  one_switch_4, one_switch_8, leaf_spine_2x4) and --loss (with 0 for the\n"
          "  baseline) run one point. --window: MW (a power of two, both modes' switch\n"
          "  memory); --rank-window: Mode-III ranks' outstanding packets (default MW; a\n"
          "  hop needs only its own bandwidth-delay product, and a smaller window means\n"
          "  less to go back over after a loss).");
      return 0;
    } else {
      std::fprintf(stderr, "loss_tolerance: unknown or incomplete option %s (see --help)\n",
                   a.c_str());
      return 2;
    }
  }
  if (o.seeds < 1 || o.mib <= 0 || o.gbps <= 0 || o.hop_timeout_us < 10 || o.rank_timeout_us < 1) {
    std::fprintf(stderr, "loss_tolerance: seeds >= 1, mib > 0, gbps > 0, hop timeout >= 10 us\n");
    return 2;
  }
  if (o.window < 1 || o.window > 4096 || (o.window & (o.window - 1)) != 0 ||
      o.rank_window > o.window) {
    std::fprintf(stderr,
                 "loss_tolerance: --window must be a power of two in 1..4096 and --rank-window "
                 "at most the window\n");
    return 2;
  }
  const std::vector<Tree> trees = o.quick ? std::vector<Tree>{{"one_switch_4", {4}}}
                                          : std::vector<Tree>{{"one_switch_2", {2}},
                                                              {"one_switch_4", {4}},
                                                              {"one_switch_8", {8}},
                                                              {"leaf_spine_2x4", {2, 4}}};
  const std::vector<double> losses =
      o.quick ? std::vector<double>{0, 0.01} : std::vector<double>{0, 0.001, 0.01, 0.05};
  for (const Tree& t : trees) {
    if (!o.only_tree.empty() && t.name != o.only_tree) continue;
    double lossless[2] = {0, 0};
    double at_loss[2] = {0, 0};
    for (double loss : losses) {
      if (o.only_loss >= 0 && loss != 0 && loss != o.only_loss) continue;
      for (GroupMode mode : {GroupMode::kMode2, GroupMode::kMode3}) {
        const int m = mode == GroupMode::kMode3 ? 1 : 0;
        const epic::bench::Stats s = epic::bench::summarize(measure(o, t, mode, loss));
        if (loss == 0) lossless[m] = s.median;
        at_loss[m] = s.median;
        const double r = 1 - loss;
        const int H = levels(t), D = max_fan_in(t);
        const double formula = mode == GroupMode::kMode3 ? std::pow(r, 2 * (H - 1))
                                                         : std::pow(r, 2 * (H - 1) * (D - 1));
        char extra[512];
        std::snprintf(extra, sizeof extra,
                      "\"mode\":\"%s\",\"tree\":\"%s\",\"levels\":%d,\"max_fan_in\":%d,"
                      "\"loss\":%g,\"vs_lossless\":%.4f,\"epic_formula\":%.4f,\"mib\":%g,"
                      "\"link_gbps\":%g,\"window\":%u,\"rank_window\":%u,\"hop_timeout_us\":%u,",
                      mode_name(mode), t.name.c_str(), H, D, loss,
                      lossless[m] > 0 ? s.median / lossless[m] : 0, formula, o.mib, o.gbps,
                      o.window,
                      mode == GroupMode::kMode3 && o.rank_window != 0 ? o.rank_window : o.window,
                      o.hop_timeout_us);
        epic::bench::emit("loss_tolerance", "goodput", extra, s, "Gb/s", o.seeds);
      }
      std::printf(
          "{\"bench\":\"loss_tolerance\",\"metric\":\"mode3_vs_mode2\",\"tree\":\"%s\","
          "\"loss\":%g,\"ratio\":%.4f,\"of\":\"median goodput\"}\n",
          t.name.c_str(), loss, at_loss[1] / at_loss[0]);
    }
  }
  std::printf("{\"bench\":\"loss_tolerance\",\"metric\":\"loss_tolerance_summary\",\"seeds\":%d}\n",
              o.seeds);
  return 0;
}
