// incd_loop_bench: packets/s per core through incd's whole DPDK loop —
// rx_burst -> SwitchPipeline -> Mode2Engine -> tx_burst, datapath/dpdk/Datapath
// with one worker lcore — on in-memory ports ("ring:" devices), comparing in
// the same run, interleaved, on the same number of frames of the same sizes:
//   forward_only:      RoCEv2 frames between two hosts (not to the INC address):
//                      ICRC-checked transit, learned unicast L2 forward port 0 -> 1;
//   mode2_aggregation: a Mode-II AllReduce at fan-in 8 (8 ranks behind port 0,
//                      control messages then PSN-major data, 512 PSNs x 8 ranks,
//                      pmtu 1024; fp32 and int32), a fresh group (new group id,
//                      so fresh slots) installed through Datapath::set_groups per lap.
// The main lcore (EAL lcore 0) is the traffic generator: each lap's mbufs are
// built before timing; a lap is timed from the first enqueue on the RX ring
// until the last expected output frame was dequeued from the TX rings (exact:
// forward-only emits one frame per input; an AllReduce at one switch emits
// results_replicated = R*N frames, counters.h). A rep runs --laps laps of each
// variant, interleaved (forward, fp32, int32; reversed on odd reps); its figures
// are input frames / its best lap time (the lap least disturbed by other
// processes on this shared 2-CPU machine, where the generator, the worker and
// anyone else's job compete for the CPUs) and / its median lap time. The
// counters are checked after the warm-up and at the end: nothing dropped or
// flooded, every frame accounted for, exact output counts.
// JSON lines (tests/bench/README.md).
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "datapath/dpdk/datapath.h"
#include "datapath/engine/group.h"
#include "datapath/wire/builder.h"
#include "proto/vocab/collective.h"
#include "tests/bench/bench_util.h"

namespace {

using namespace epic;
namespace e = epic::engine;
namespace w = epic::wire;
using Clock = std::chrono::steady_clock;

constexpr int kFanIn = 8;
constexpr uint32_t kPsns = 512;
constexpr uint32_t kWindow = 64;
constexpr uint16_t kPmtu = 1024;
constexpr uint32_t kIncIp = 0x0AC80001;  // 10.200.0.1
const vocab::MacAddr kSwitchMac{2, 0xEE, 0, 0, 0, 1};
const vocab::MacAddr kHostA{2, 0xAB, 0, 0, 0, 0xA}, kHostB{2, 0xAB, 0, 0, 0, 0xB};
constexpr uint32_t kHostAIp = 0x0A010001, kHostBIp = 0x0A010002;

using Frames = std::vector<std::vector<uint8_t>>;

e::GroupConfig make_group(uint32_t id) {
  e::GroupConfig g;
  g.group_id = id;
  g.window = kWindow;
  g.pmtu = kPmtu;
  g.initial_psn = 0;
  g.num_ranks = kFanIn;
  for (int c = 0; c < kFanIn; ++c) {
    e::ChildLink l;
    l.local = {kSwitchMac, kIncIp, 0x1000u + static_cast<uint32_t>(c)};
    l.remote = {{2, 0xAA, 0, 0, 0, static_cast<uint8_t>(c)},
                0x0A640000u + static_cast<uint32_t>(c),
                0x100u + static_cast<uint32_t>(c)};
    l.port = 0;  // every rank behind port 0
    l.is_rank = true;
    l.first_rank = static_cast<uint16_t>(c);
    g.children.push_back(l);
  }
  return g;
}

// A Mode-II AllReduce as in engine_bench: 8 control messages, then PSN-major data.
Frames make_aggregation(vocab::DType t) {
  const e::GroupConfig g = make_group(0);
  const uint32_t per_packet = kPmtu / static_cast<uint32_t>(vocab::wire_bytes(t));
  const vocab::CollectiveDescriptor d{vocab::CollectiveType::kAllReduce, t, vocab::ReduceOp::kSum,
                                      0, per_packet * kPsns};
  uint8_t ctrl[vocab::kControlPayloadBytes];
  vocab::encode_control(d, ctrl);
  auto base = [&](int c) {
    return w::PacketBuilder()
        .eth(kSwitchMac, g.children[static_cast<size_t>(c)].remote.mac)
        .ipv4(g.children[static_cast<size_t>(c)].remote.ipv4, kIncIp);
  };
  Frames f;
  for (int c = 0; c < kFanIn; ++c) {
    auto b = base(c)
                 .bth(w::op::kSendOnlyImm, 0x1000u + static_cast<uint32_t>(c), 0)
                 .immdt(vocab::kControlImm);
    b.payload({ctrl, sizeof ctrl});
    f.push_back(b.build());
  }
  for (uint32_t p = 0; p < kPsns; ++p) {
    const uint8_t opcode = p == 0           ? w::op::kSendFirst
                           : p + 1 == kPsns ? w::op::kSendLast
                                            : w::op::kSendMiddle;
    for (int c = 0; c < kFanIn; ++c) {
      auto b = base(c)
                   .bth(opcode, 0x1000u + static_cast<uint32_t>(c), 1 + p)
                   .ack_req(opcode == w::op::kSendLast);
      b.payload_pattern(kPmtu, static_cast<uint8_t>(p + static_cast<uint32_t>(c)));
      for (auto& x : b.packet().payload) x &= 0x3F;  // finite floats
      f.push_back(b.build());
    }
  }
  return f;
}

// The same number and sizes of frames, host A -> host B (transit RoCEv2, switched).
Frames make_forward() {
  auto base = [] { return w::PacketBuilder().eth(kHostB, kHostA).ipv4(kHostAIp, kHostBIp); };
  Frames f;
  uint8_t ctrl[vocab::kControlPayloadBytes] = {};
  for (int c = 0; c < kFanIn; ++c) {
    auto b = base().bth(w::op::kSendOnlyImm, 0x2000u + static_cast<uint32_t>(c), 0).immdt(1);
    b.payload({ctrl, sizeof ctrl});
    f.push_back(b.build());
  }
  for (uint32_t p = 0; p < kPsns; ++p) {
    const uint8_t opcode = p == 0           ? w::op::kSendFirst
                           : p + 1 == kPsns ? w::op::kSendLast
                                            : w::op::kSendMiddle;
    for (int c = 0; c < kFanIn; ++c) {
      auto b = base().bth(opcode, 0x2000u + static_cast<uint32_t>(c), 1 + p);
      b.payload_pattern(kPmtu, static_cast<uint8_t>(p + static_cast<uint32_t>(c)));
      f.push_back(b.build());
    }
  }
  return f;
}

// One frame from host B arriving on port 1, so that B is a learned unicast destination.
std::vector<uint8_t> make_prime() {
  auto b = w::PacketBuilder()
               .eth(kHostA, kHostB)
               .ipv4(kHostBIp, kHostAIp)
               .bth(w::op::kSendOnly, 0x3000, 0);
  b.payload_pattern(64, 1);
  return b.build();
}

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "incd_loop_bench: %s\n", why.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

struct Rig {
  dpdk::Datapath dp;
  rte_mempool* pool = nullptr;  // the generator's input mbufs
  rte_ring* rx[2] = {};         // what ports 0/1 receive
  rte_ring* tx[2] = {};         // what ports 0/1 send
  std::vector<rte_mbuf*> lap;   // pre-built input of one lap
  std::vector<rte_mbuf*> drain;
  bool verbose = false;  // per-lap times on stderr

  void build(const Frames& frames) {
    lap.resize(frames.size());
    if (rte_pktmbuf_alloc_bulk(pool, lap.data(), static_cast<unsigned>(lap.size())) != 0)
      die("input mbuf pool exhausted");
    for (size_t i = 0; i < frames.size(); ++i) {
      char* p = rte_pktmbuf_append(lap[i], static_cast<uint16_t>(frames[i].size()));
      if (p == nullptr) die("frame larger than an mbuf");
      std::memcpy(p, frames[i].data(), frames[i].size());
    }
  }

  // Dequeues and frees whatever the ports sent; returns how many frames.
  size_t poll() {
    size_t n = 0;
    for (int p = 0; p < 2; ++p) {
      const unsigned k = rte_ring_dequeue_burst(tx[p], reinterpret_cast<void**>(drain.data()),
                                                static_cast<unsigned>(drain.size()), nullptr);
      if (k > 0) rte_pktmbuf_free_bulk(drain.data(), k);
      n += k;
    }
    return n;
  }

  // Sends the pre-built lap into port `port`; returns the time until `expected` frames came out.
  double run_lap(const char* what, int port, size_t expected) {
    size_t sent = 0, got = 0;
    const auto t0 = Clock::now();
    while (sent < lap.size()) {
      sent += rte_ring_enqueue_burst(rx[port], reinterpret_cast<void**>(lap.data() + sent),
                                     static_cast<unsigned>(lap.size() - sent), nullptr);
      got += poll();
    }
    const auto deadline = t0 + std::chrono::seconds(30);  // a hang, not a slow lap
    Clock::time_point first_out = got > 0 ? Clock::now() : Clock::time_point{};
    for (unsigned spins = 0; got < expected; ++spins) {
      got += poll();
      if (verbose && got > 0 && first_out == Clock::time_point{}) first_out = Clock::now();
      if ((spins & 1023) == 0 && Clock::now() > deadline) {
        die("lap timed out: " + std::to_string(got) + " of " + std::to_string(expected) +
            " output frames (frames dropped? see telemetry)");
      }
    }
    const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (got != expected)
      die(std::string("lap ") + what + ": " + std::to_string(got) + " output frames, expected " +
          std::to_string(expected));
    if (verbose)
      std::fprintf(stderr,
                   "lap %s: port %d, %zu in, %zu out, %.1f us (first output after %.1f us)\n", what,
                   port, lap.size(), expected, wall_s * 1e6,
                   std::chrono::duration<double>(first_out - t0).count() * 1e6);
    lap.clear();
    return wall_s;
  }
};

std::unique_ptr<dpdk::WorkerTelemetry> telemetry(const dpdk::Datapath& dp) {
  // Published every 50 ms: wait for a fresh copy.
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  auto t = std::make_unique<dpdk::WorkerTelemetry>();
  if (!dp.telemetry(0, *t)) die("no telemetry from worker 0");
  return t;
}

std::string rep_list(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "%s%.4f", i ? "," : "", v[i]);
    s += b;
  }
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7, laps = 15;
  bool verbose = false;
  std::string lcores = "0-1";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      reps = 3;
      laps = 3;
    } else if (a == "--json") {
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(3, std::atoi(argv[++i]));
    } else if (a == "--laps" && i + 1 < argc) {
      laps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a == "--lcores" && i + 1 < argc) {
      lcores = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: incd_loop_bench [--json] [--quick] [--reps N] [--laps N] "
                   "[--lcores 0-1] [--verbose]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }

  const std::vector<vocab::DType> dtypes{vocab::DType::kFp32, vocab::DType::kInt32};
  std::vector<Frames> agg_frames;
  for (vocab::DType t : dtypes) agg_frames.push_back(make_aggregation(t));
  const Frames fwd_frames = make_forward();
  const size_t n_in = fwd_frames.size();  // 8 + 512*8 = 4104, the same for every variant
  const size_t agg_out = size_t{kFanIn} * (kPsns + 1);  // results_replicated = R*N

  auto rig = std::make_unique<Rig>();
  dpdk::DatapathConfig cfg;
  cfg.eal.lcores = lcores;
  cfg.eal.hugepages = false;
  cfg.eal.memory_mb = 512;
  cfg.eal.file_prefix = "incd-loop-bench-" + std::to_string(::getpid());
  cfg.workers = 1;
  cfg.l2_aging_ns = 3600'000'000'000ULL;
  const std::string pa = "ilb" + std::to_string(::getpid() % 100000) + "a";
  const std::string pb = "ilb" + std::to_string(::getpid() % 100000) + "b";
  cfg.ports.push_back({"p0", "ring:" + pa, 1500, 1024, 1024});
  cfg.ports.push_back({"p1", "ring:" + pb, 1500, 1024, 1024});
  cfg.inc_addresses.push_back({kIncIp, kSwitchMac});
  if (std::string err = rig->dp.start(cfg); !err.empty()) die("datapath: " + err);
  rig->pool = rte_pktmbuf_pool_create("bench_in", 16383, 256, 0, RTE_PKTMBUF_HEADROOM + 2048,
                                      static_cast<int>(rte_socket_id()));
  if (rig->pool == nullptr) die("cannot create the generator's mbuf pool");
  int i = 0;
  for (const std::string& base : {pa, pb}) {
    rig->rx[i] = rte_ring_lookup((base + "_rx0").c_str());
    rig->tx[i] = rte_ring_lookup((base + "_tx0").c_str());
    if (rig->rx[i] == nullptr || rig->tx[i] == nullptr) die("ring lookup for " + base);
    ++i;
  }
  rig->drain.resize(512);
  rig->verbose = verbose;

  // Prime the L2 table: host B behind port 1 (flooded once to port 0, since A is unknown yet).
  rig->build({make_prime()});
  rig->run_lap("prime", 1, 1);
  uint32_t group_id = 1;
  if (std::string err = rig->dp.set_groups({make_group(group_id)}); !err.empty())
    die("set_groups: " + err);

  auto forward_lap = [&] {
    rig->build(fwd_frames);
    return rig->run_lap("forward_only", 0, n_in);
  };
  auto aggregation_lap = [&](size_t k) {
    if (std::string err = rig->dp.set_groups({make_group(++group_id)}); !err.empty())
      die("set_groups: " + err);
    rig->build(agg_frames[k]);
    return rig->run_lap(k == 0 ? "fp32" : "int32", 0, agg_out);
  };

  // Warm-up (rep -1) and a check of the counters: every input frame accounted for, exact
  // outputs, nothing dropped; the same check once more after the timed reps.
  const auto before = telemetry(rig->dp);
  uint64_t fwd_laps = 0, agg_laps = 0;
  auto counter_mismatch = [&](const dpdk::WorkerTelemetry& t0) {
    const auto t = telemetry(rig->dp);
    const auto& p = t->pipeline;
    const auto& en = t->engine;
    std::string bad;
    uint64_t drops = 0;
    for (uint64_t d : p.drops) drops += d;
    const uint64_t fwd = p.forwarded - t0.pipeline.forwarded;
    const uint64_t to_engine = p.to_engine - t0.pipeline.to_engine;
    const uint64_t aggs = en.aggregations_completed - t0.engine.aggregations_completed;
    const uint64_t repl = en.results_replicated - t0.engine.results_replicated;
    const uint64_t etx = t->engine_frames_out - t0.engine_frames_out;
    if (drops != 0) bad += " pipeline drops " + std::to_string(drops) + ";";
    if (fwd != fwd_laps * n_in) bad += " forwarded " + std::to_string(fwd) + ";";
    if (p.flooded != t0.pipeline.flooded) bad += " flooded (not a learned forward);";
    if (p.transit_bad_icrc + p.transit_malformed != 0) bad += " transit ICRC/malformed;";
    if (to_engine != agg_laps * n_in) bad += " to_engine " + std::to_string(to_engine) + ";";
    if (aggs != agg_laps * (kPsns + 1)) bad += " aggregations " + std::to_string(aggs) + ";";
    if (repl != agg_laps * agg_out || etx != repl)
      bad += " engine out " + std::to_string(etx) + " replicated " + std::to_string(repl) + ";";
    if (en.rx_frames != en.rx_accounted()) bad += " engine rx not accounted;";
    if (t->mbuf_alloc_failed + t->multi_segment_dropped + t->ports[0].tx_dropped +
            t->ports[1].tx_dropped !=
        0)
      bad += " mbuf/tx drops;";
    return bad;
  };
  auto check = [&](const dpdk::WorkerTelemetry& t0, const char* when) {
    // The worker publishes its counters every 50 ms, and a loaded machine can delay that: read
    // until they add up, at most 25 times (about 3 s), and report the last reading.
    std::string bad;
    for (int tries = 0; tries < 25; ++tries) {
      bad = counter_mismatch(t0);
      if (bad.empty()) break;
    }
    if (rig->poll() != 0) bad += " unexpected extra output frames;";
    if (!bad.empty()) die(std::string("counter check ") + when + ":" + bad);
  };

  // Two figures per rep and variant, from its --laps laps: the best lap (the one least
  // disturbed by other processes on this shared machine: the datapath's own cost) and the
  // median lap (what a loaded machine gives). [stat][variant]: 0 = forward_only, 1.. = dtypes.
  constexpr int kStats = 2;
  const char* const stat_name[kStats] = {"best_lap", "median_lap"};
  const size_t nvar = 1 + dtypes.size();
  std::vector<std::vector<double>> mpps[kStats], ratio[kStats];
  for (int c = 0; c < kStats; ++c) {
    mpps[c].resize(nvar);
    ratio[c].resize(nvar);
  }
  for (int r = -1; r < reps; ++r) {
    // Interleaved: forward, fp32, int32 on even reps; the reverse order on odd reps.
    std::vector<std::vector<double>> t(nvar);
    const bool reverse = (r & 1) != 0;
    for (int lap = 0; lap < laps; ++lap) {
      if (!reverse) t[0].push_back(forward_lap());
      for (size_t k = 0; k < dtypes.size(); ++k) {
        const size_t kk = reverse ? dtypes.size() - 1 - k : k;
        t[1 + kk].push_back(aggregation_lap(kk));
      }
      if (reverse) t[0].push_back(forward_lap());
      ++fwd_laps;
      agg_laps += dtypes.size();
    }
    if (r < 0) {
      check(*before, "after warm-up");
      continue;
    }
    for (size_t v = 0; v < nvar; ++v) {
      const bench::Stats st = bench::summarize(t[v]);
      mpps[0][v].push_back(static_cast<double>(n_in) / st.min / 1e6);
      mpps[1][v].push_back(static_cast<double>(n_in) / st.median / 1e6);
    }
    for (int c = 0; c < kStats; ++c) {
      for (size_t v = 1; v < nvar; ++v)
        ratio[c][v].push_back(mpps[c][v].back() / mpps[c][0].back());
    }
  }
  check(*before, "after the timed reps");

  const std::string common = "\"frames_per_lap\":" + std::to_string(n_in) +
                             ",\"laps\":" + std::to_string(laps) +
                             ",\"payload_bytes\":1024,\"fan_in\":8,\"worker_lcores\":1,";
  for (int c = 0; c < kStats; ++c) {
    const std::string st = std::string("\"lap_stat\":\"") + stat_name[c] + "\",";
    bench::emit("incd_loop", "forward_only", common + st, bench::summarize(mpps[c][0]), "Mpps",
                reps);
    for (size_t k = 0; k < dtypes.size(); ++k) {
      const std::string extra =
          common + st + "\"dtype\":\"" + std::string(vocab::to_string(dtypes[k])) + "\",";
      bench::emit("incd_loop", "mode2_aggregation", extra, bench::summarize(mpps[c][1 + k]), "Mpps",
                  reps);
      bench::emit("incd_loop", "aggregation_vs_forward", extra, bench::summarize(ratio[c][1 + k]),
                  "ratio", reps);
    }
  }
  for (size_t k = 0; k < dtypes.size(); ++k) {
    std::string line = "{\"bench\":\"incd_loop\",\"metric\":\"incd_loop_summary\"," + common +
                       "\"dtype\":\"" + std::string(vocab::to_string(dtypes[k])) + "\"";
    for (int c = 0; c < kStats; ++c) {
      const auto f = bench::summarize(mpps[c][0]), a = bench::summarize(mpps[c][1 + k]),
                 q = bench::summarize(ratio[c][1 + k]);
      char b[512];
      std::snprintf(b, sizeof b,
                    ",\"%s\":{\"forward_only_mpps\":%.3f,\"aggregation_mpps\":%.3f,"
                    "\"aggregated_gbps\":%.2f,\"ratio_median\":%.3f,\"ratio_min\":%.3f,"
                    "\"ratio_max\":%.3f,\"ratio_per_rep\":%s}",
                    stat_name[c], f.median, a.median, a.median * 1e6 * kPmtu * 8 / 1e9, q.median,
                    q.min, q.max, rep_list(ratio[c][1 + k]).c_str());
      line += b;
    }
    std::printf("%s}\n", line.c_str());
  }
  std::fflush(stdout);
  rig->dp.stop();
  rte_mempool_free(rig->pool);  // the workers are stopped: nobody holds its mbufs
  return 0;
}
