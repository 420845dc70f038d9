// incd_loop_bench: packets/s through incd's whole DPDK loop —
// rx_burst -> SwitchPipeline -> Mode2Engine -> tx_burst, datapath/dpdk/Datapath
// with --workers W worker lcores (default 1) — on in-memory ports ("ring:"
// devices, one RX/TX ring pair per worker), comparing in the same run,
// interleaved, on the same number of frames of the same sizes:
//   forward_only:      RoCEv2 frames between two hosts (not to the INC address):
//                      ICRC-checked transit, learned unicast L2 forward port 0 -> 1;
//   mode2_aggregation: a Mode-II AllReduce at fan-in 8 (8 ranks behind port 0,
//                      control messages then PSN-major data, 512 PSNs x 8 ranks;
//                      fp32 and int32), a fresh group (new group id, so fresh slots)
//                      installed through Datapath::set_groups per lap.
// Each variant runs at every --payload (path MTU: 1024 and 4096 by default).
// With W workers a lap is W such streams at once, stream w on RX queue w of the
// port (what RSS or a flow table gives a NIC): forward stream w is learned on
// worker w (each has its own L2 table), aggregation stream w is group w, which
// the Datapath places on worker w (groups go round robin by configuration
// order); the run checks that no frame was handed off between workers. The
// main lcore (EAL lcore 0) is the traffic generator: a lap's mbufs are built
// before timing, all enqueued at once (the RX rings hold 16384), and the
// generator then only watches the TX rings' fill level (sleeping between looks,
// so that it leaves the CPUs to the workers) until every expected output frame
// is there; a lap is that time. Output counts are exact: forward-only emits one
// frame per input, an AllReduce at one switch results_replicated = R*N frames
// (counters.h). A rep runs --laps laps of each variant, interleaved (reversed
// on odd reps); its figures are input frames / its best lap time (the lap least
// disturbed by other processes on a shared machine) and / its median lap time.
// The counters of all workers are checked after the warm-up and at the end:
// nothing dropped, flooded or handed off, every frame accounted for.
// tests/bench/incd_scaling.py runs it at 1, 2, 4 ... workers and reports the
// scaling ratio. JSON lines (tests/bench/README.md).
#include <pthread.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
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
constexpr uint32_t kIncIp = 0x0AC80001;  // 10.200.0.1
constexpr unsigned kMaxWorkers = 64;
const vocab::MacAddr kSwitchMac{2, 0xEE, 0, 0, 0, 1};
const vocab::MacAddr kHostA{2, 0xAB, 0, 0, 0, 0xA}, kHostB{2, 0xAB, 0, 0, 0, 0xB};
constexpr uint32_t kHostAIp = 0x0A010001, kHostBIp = 0x0A010002;

using Frames = std::vector<std::vector<uint8_t>>;

// Group of stream s (one per worker): its own switch QPNs and ranks, so that the
// Datapath's lookup sends each stream's frames to the worker that owns its group.
e::GroupConfig make_group(uint32_t id, uint16_t pmtu, unsigned stream) {
  e::GroupConfig g;
  g.group_id = id;
  g.window = kWindow;
  g.pmtu = pmtu;
  g.initial_psn = 0;
  g.num_ranks = kFanIn;
  for (int c = 0; c < kFanIn; ++c) {
    const uint32_t k = 16 * stream + static_cast<uint32_t>(c);
    e::ChildLink l;
    l.local = {kSwitchMac, kIncIp, 0x1000u + k};
    l.remote = {{2, 0xAA, 0, 0, static_cast<uint8_t>(stream), static_cast<uint8_t>(c)},
                0x0A640000u + (stream << 8) + static_cast<uint32_t>(c),
                0x100u + k};
    l.port = 0;  // every rank behind port 0
    l.is_rank = true;
    l.first_rank = static_cast<uint16_t>(c);
    g.children.push_back(l);
  }
  return g;
}

// A Mode-II AllReduce as in engine_bench: 8 control messages, then PSN-major data.
Frames make_aggregation(vocab::DType t, uint16_t pmtu, unsigned stream) {
  const e::GroupConfig g = make_group(0, pmtu, stream);
  const uint32_t per_packet = pmtu / static_cast<uint32_t>(vocab::wire_bytes(t));
  const vocab::CollectiveDescriptor d{vocab::CollectiveType::kAllReduce, t, vocab::ReduceOp::kSum,
                                      0, per_packet * kPsns};
  uint8_t ctrl[vocab::kControlPayloadBytes];
  vocab::encode_control(d, ctrl);
  auto base = [&](int c) {
    const e::ChildLink& l = g.children[static_cast<size_t>(c)];
    return w::PacketBuilder().eth(kSwitchMac, l.remote.mac).ipv4(l.remote.ipv4, kIncIp);
  };
  auto qpn = [&](int c) { return g.children[static_cast<size_t>(c)].local.qpn; };
  Frames f;
  for (int c = 0; c < kFanIn; ++c) {
    auto b = base(c).bth(w::op::kSendOnlyImm, qpn(c), 0).immdt(vocab::kControlImm);
    b.payload({ctrl, sizeof ctrl});
    f.push_back(b.build());
  }
  for (uint32_t p = 0; p < kPsns; ++p) {
    const uint8_t opcode = p == 0           ? w::op::kSendFirst
                           : p + 1 == kPsns ? w::op::kSendLast
                                            : w::op::kSendMiddle;
    for (int c = 0; c < kFanIn; ++c) {
      auto b = base(c).bth(opcode, qpn(c), 1 + p).ack_req(opcode == w::op::kSendLast);
      b.payload_pattern(pmtu, static_cast<uint8_t>(p + static_cast<uint32_t>(c)));
      for (auto& x : b.packet().payload) x &= 0x3F;  // finite floats
      f.push_back(b.build());
    }
  }
  return f;
}

// The same number and sizes of frames, host A -> host B (transit RoCEv2, switched).
Frames make_forward(uint16_t pmtu) {
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
      b.payload_pattern(pmtu, static_cast<uint8_t>(p + static_cast<uint32_t>(c)));
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

// SCHED_FIFO for the calling thread while in scope (only while a lap is timed: elsewhere the
// generator busy-waits, e.g. in set_groups for the workers' RCU quiescence, and at a real-time
// priority it would starve the worker it waits for on a shared CPU).
struct RealTime {
  bool on = false;
  explicit RealTime(bool want) {
    if (!want) return;
    sched_param sp{};
    sp.sched_priority = 1;
    on = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
  }
  ~RealTime() {
    if (!on) return;
    sched_param sp{};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
  }
  RealTime(const RealTime&) = delete;
  RealTime& operator=(const RealTime&) = delete;
};

struct Rig {
  dpdk::Datapath dp;
  unsigned workers = 1;
  rte_mempool* pool = nullptr;              // the generator's input mbufs
  std::vector<rte_ring*> rx[2], tx[2];      // what ports 0/1 receive / send, per worker queue
  std::vector<std::vector<rte_mbuf*>> lap;  // pre-built input of one lap, per queue
  std::vector<rte_mbuf*> drain;
  bool verbose = false;     // per-lap times on stderr
  bool shared_cpu = false;  // the generator shares a CPU with a worker (see run_lap)

  // Stream q's frames, built into mbufs for queue q.
  void build(unsigned q, const Frames& frames) {
    if (lap.size() < workers) lap.resize(workers);
    std::vector<rte_mbuf*>& l = lap[q];
    l.resize(frames.size());
    if (rte_pktmbuf_alloc_bulk(pool, l.data(), static_cast<unsigned>(l.size())) != 0)
      die("input mbuf pool exhausted");
    for (size_t i = 0; i < frames.size(); ++i) {
      char* p = rte_pktmbuf_append(l[i], static_cast<uint16_t>(frames[i].size()));
      if (p == nullptr) die("frame larger than an mbuf");
      std::memcpy(p, frames[i].data(), frames[i].size());
    }
  }

  size_t tx_level() const {
    size_t n = 0;
    for (const auto& port : tx)
      for (rte_ring* r : port) n += rte_ring_count(r);
    return n;
  }

  // Dequeues and frees whatever the ports sent; returns how many frames.
  size_t drain_tx() {
    size_t n = 0;
    for (const auto& port : tx) {
      for (rte_ring* r : port) {
        for (;;) {
          const unsigned k = rte_ring_dequeue_burst(r, reinterpret_cast<void**>(drain.data()),
                                                    static_cast<unsigned>(drain.size()), nullptr);
          if (k == 0) break;
          rte_pktmbuf_free_bulk(drain.data(), k);
          n += k;
        }
      }
    }
    return n;
  }

  // Enqueues the pre-built lap (queue q's mbufs on RX queue q of `port`) and returns the time
  // until `expected` frames were in the TX rings. With a CPU of its own (`shared_cpu` false)
  // the generator watches the TX rings without pause. Sharing a CPU with a busy-polling worker
  // it must wake seldom (on this kind of VM each wake-up costs the worker ~25 us, and sleeps of
  // 5 us at a real-time priority starved it entirely) yet on time: it sleeps half of `hint_s`
  // (the variant's best lap so far), then an eighth of the time elapsed (at least 50 us)
  // between looks, at SCHED_FIFO so that the worker it shares the CPU with cannot delay it;
  // such a lap may be timed up to 1/8 late.
  double run_lap(const char* what, int port, size_t expected, double hint_s = 0) {
    RealTime rt(shared_cpu);
    const auto t0 = Clock::now();
    for (unsigned q = 0; q < lap.size(); ++q) {
      const unsigned n = static_cast<unsigned>(lap[q].size());
      if (n != 0 && rte_ring_enqueue_bulk(rx[port][q], reinterpret_cast<void**>(lap[q].data()), n,
                                          nullptr) != n)
        die("RX ring full (is a previous lap still in it?)");
    }
    const auto deadline = t0 + std::chrono::seconds(30);  // a hang, not a slow lap
    if (shared_cpu && hint_s > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(hint_s * 0.5));
    size_t got = 0;
    for (unsigned spins = 0;; ++spins) {
      got = tx_level();
      if (got >= expected) break;
      if ((spins & 255) == 0 && Clock::now() > deadline)
        die(std::string("lap ") + what + " timed out: " + std::to_string(got) + " of " +
            std::to_string(expected) + " output frames (frames dropped? see telemetry)");
      if (shared_cpu) {
        const auto elapsed = Clock::now() - t0;
        std::this_thread::sleep_for(
            std::max<Clock::duration>(std::chrono::microseconds(50), elapsed / 8));
      } else {
        rte_pause();
      }
    }
    const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const size_t out = drain_tx();
    if (out != expected)
      die(std::string("lap ") + what + ": " + std::to_string(out) + " output frames, expected " +
          std::to_string(expected));
    if (verbose)
      std::fprintf(stderr, "lap %s: port %d, %u queue(s), %zu out, %.1f us\n", what, port,
                   static_cast<unsigned>(lap.size()), expected, wall_s * 1e6);
    for (auto& l : lap) l.clear();
    return wall_s;
  }
};

// Every worker's counters, summed (each publishes every 50 ms: wait for fresh copies).
struct Totals {
  uint64_t drops = 0, forwarded = 0, flooded = 0, transit_bad = 0, to_engine = 0;
  uint64_t aggregations = 0, replicated = 0, engine_out = 0, handoff_in = 0;
  uint64_t engine_unaccounted = 0, lost = 0;  // engine rx not accounted; mbuf/TX drops
};

Totals totals(const dpdk::Datapath& dp) {
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  Totals s;
  auto t = std::make_unique<dpdk::WorkerTelemetry>();
  for (unsigned k = 0; k < dp.workers(); ++k) {
    if (!dp.telemetry(k, *t)) die("no telemetry from worker " + std::to_string(k));
    const auto& p = t->pipeline;
    const auto& en = t->engine;
    for (uint64_t d : p.drops) s.drops += d;
    s.forwarded += p.forwarded;
    s.flooded += p.flooded;
    s.transit_bad += p.transit_bad_icrc + p.transit_malformed;
    s.to_engine += p.to_engine;
    s.aggregations += en.aggregations_completed;
    s.replicated += en.results_replicated;
    s.engine_out += t->engine_frames_out;
    s.handoff_in += t->handoff_in + t->handoff_dropped;
    s.engine_unaccounted += en.rx_frames - en.rx_accounted();
    s.lost += t->mbuf_alloc_failed + t->multi_segment_dropped;
    for (const auto& port : t->ports) s.lost += port.tx_dropped;
  }
  return s;
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

// Default lcores: the generator and one lcore per worker, each on a CPU of its own when
// there are enough; otherwise the workers go round robin over the CPUs and the generator
// (which sleeps while a lap runs) may run on any of them.
std::string default_lcores(unsigned workers) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  char b[32];
  if (workers + 1 <= cpus) {
    std::snprintf(b, sizeof b, "0-%u", workers);
    return b;
  }
  std::snprintf(b, sizeof b, "0@(0-%u)", cpus - 1);
  std::string s = b;
  for (unsigned k = 1; k <= workers; ++k) {
    std::snprintf(b, sizeof b, ",%u@%u", k, (k - 1) % cpus);
    s += b;
  }
  return s;
}

std::vector<uint16_t> parse_payloads(const std::string& list) {
  std::vector<uint16_t> v;
  std::stringstream ss(list);
  for (std::string x; std::getline(ss, x, ',');) {
    const int n = std::atoi(x.c_str());
    if (n != 256 && n != 512 && n != 1024 && n != 2048 && n != 4096)
      die("--payload " + x + ": expected a RoCE path MTU (256, 512, 1024, 2048, 4096)");
    v.push_back(static_cast<uint16_t>(n));
  }
  if (v.empty()) die("--payload: empty list");
  return v;
}

// One timed variant: a payload and forward-only (dtype index -1) or an aggregation.
struct Variant {
  uint16_t payload;
  int dtype;  // -1: forward_only; else index into dtypes
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 7, laps = 15;
  unsigned workers = 1;
  bool verbose = false;
  std::string lcores, payload_list = "1024,4096";
  auto usage = [](FILE* to) {
    std::fprintf(to,
                 "usage: incd_loop_bench [--json] [--quick] [--reps N] [--laps N] [--workers W]\n"
                 "                       [--payload 1024,4096] [--lcores LIST] [--verbose]\n"
                 "  --workers W   worker lcores, one stream (RX queue, group) each (default 1)\n"
                 "  --payload L   path MTUs to run, comma-separated (default 1024,4096)\n"
                 "  --lcores L    EAL lcores (default: 0-W when the machine has W+1 CPUs,\n"
                 "                else the workers round robin over the CPUs)\n"
                 "  --quick       3 reps of 3 laps (the ctest smoke run)\n");
  };
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
    } else if (a == "--workers" && i + 1 < argc) {
      const int n = std::atoi(argv[++i]);
      if (n < 1 || n > static_cast<int>(kMaxWorkers))
        die("--workers " + std::string(argv[i]) + ": expected 1.." + std::to_string(kMaxWorkers));
      workers = static_cast<unsigned>(n);
    } else if (a == "--payload" && i + 1 < argc) {
      payload_list = argv[++i];
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a == "--lcores" && i + 1 < argc) {
      lcores = argv[++i];
    } else {
      usage(a == "--help" || a == "-h" ? stdout : stderr);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (lcores.empty()) lcores = default_lcores(workers);
  const std::vector<uint16_t> payloads = parse_payloads(payload_list);
  uint16_t max_payload = 0;
  for (uint16_t p : payloads) max_payload = std::max(max_payload, p);

  const std::vector<vocab::DType> dtypes{vocab::DType::kFp32, vocab::DType::kInt32};
  // Frames per payload: forward (the same for every stream) and [dtype][stream] aggregations.
  std::vector<Frames> fwd_frames;
  std::vector<std::vector<std::vector<Frames>>> agg_frames;
  for (uint16_t p : payloads) {
    fwd_frames.push_back(make_forward(p));
    agg_frames.emplace_back();
    for (vocab::DType t : dtypes) {
      agg_frames.back().emplace_back();
      for (unsigned s = 0; s < workers; ++s)
        agg_frames.back().back().push_back(make_aggregation(t, p, s));
    }
  }
  const size_t n_in = fwd_frames[0].size();  // 8 + 512*8 = 4104 per stream, for every variant
  const size_t agg_out = size_t{kFanIn} * (kPsns + 1);  // results_replicated = R*N per stream

  auto rig = std::make_unique<Rig>();
  rig->workers = workers;
  dpdk::DatapathConfig cfg;
  cfg.eal.lcores = lcores;
  cfg.eal.hugepages = false;
  cfg.eal.memory_mb = 512 + 96 * workers * (max_payload > 1024 ? 3 : 1);
  cfg.eal.file_prefix = "incd-loop-bench-" + std::to_string(::getpid());
  cfg.workers = workers;
  cfg.l2_aging_ns = 3600'000'000'000ULL;
  const uint16_t mtu = static_cast<uint16_t>(std::max(1500, max_payload + 128));
  const std::string pa = "ilb" + std::to_string(::getpid() % 100000) + "a";
  const std::string pb = "ilb" + std::to_string(::getpid() % 100000) + "b";
  cfg.ports.push_back({"p0", "ring:" + pa, mtu, 1024, 1024});
  cfg.ports.push_back({"p1", "ring:" + pb, mtu, 1024, 1024});
  cfg.inc_addresses.push_back({kIncIp, kSwitchMac});
  if (std::string err = rig->dp.start(cfg); !err.empty()) die("datapath: " + err);
  const unsigned pool_n = static_cast<unsigned>(workers * (n_in + 64) + 1023);
  rig->pool = rte_pktmbuf_pool_create("bench_in", pool_n, 256, 0,
                                      static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + mtu + 64),
                                      static_cast<int>(rte_socket_id()));
  if (rig->pool == nullptr) die("cannot create the generator's mbuf pool");
  int i = 0;
  for (const std::string& base : {pa, pb}) {
    for (unsigned q = 0; q < workers; ++q) {
      rte_ring* rx = rte_ring_lookup((base + "_rx" + std::to_string(q)).c_str());
      rte_ring* tx = rte_ring_lookup((base + "_tx" + std::to_string(q)).c_str());
      if (rx == nullptr || tx == nullptr) die("ring lookup for " + base);
      rig->rx[i].push_back(rx);
      rig->tx[i].push_back(tx);
    }
    ++i;
  }
  rig->drain.resize(512);
  rig->verbose = verbose;
  // Where the generator shares a CPU with a worker it times laps at a real-time priority
  // (run_lap; root or CAP_SYS_NICE: without it the run says so and laps may be timed late).
  rig->shared_cpu = workers + 1 > std::thread::hardware_concurrency();
  bool generator_rt = false;
  if (rig->shared_cpu) {
    generator_rt = RealTime(true).on;
    if (!generator_rt)
      std::fprintf(stderr,
                   "incd_loop_bench: the generator shares a CPU with a worker and could not get "
                   "SCHED_FIFO (not root?): lap times may be late\n");
  }

  // Prime every worker's L2 table: host B behind port 1 (flooded once to port 0, since A is
  // unknown yet).
  for (unsigned q = 0; q < workers; ++q) rig->build(q, {make_prime()});
  rig->run_lap("prime", 1, workers);
  uint32_t group_id = 1;
  auto install = [&](uint16_t pmtu) {
    std::vector<e::GroupConfig> groups;
    for (unsigned s = 0; s < workers; ++s) groups.push_back(make_group(++group_id, pmtu, s));
    if (std::string err = rig->dp.set_groups(groups); !err.empty()) die("set_groups: " + err);
  };
  install(payloads[0]);

  std::vector<Variant> variants;
  for (size_t p = 0; p < payloads.size(); ++p) {
    variants.push_back({payloads[p], -1});
    for (size_t k = 0; k < dtypes.size(); ++k)
      variants.push_back({payloads[p], static_cast<int>(k)});
  }
  std::vector<double> best(variants.size(), 0.0);  // each variant's best lap: the sleep hint
  auto run_variant = [&](size_t v) {
    const Variant& x = variants[v];
    const size_t p = v / (1 + dtypes.size());
    double t = 0;
    if (x.dtype < 0) {
      for (unsigned q = 0; q < workers; ++q) rig->build(q, fwd_frames[p]);
      t = rig->run_lap("forward_only", 0, n_in * workers, best[v]);
    } else {
      install(x.payload);
      for (unsigned q = 0; q < workers; ++q)
        rig->build(q, agg_frames[p][static_cast<size_t>(x.dtype)][q]);
      t = rig->run_lap(x.dtype == 0 ? "fp32" : "int32", 0, agg_out * workers, best[v]);
    }
    best[v] = best[v] == 0 ? t : std::min(best[v], t);
    return t;
  };

  // Warm-up (rep -1) and a check of the counters: every input frame accounted for, exact
  // outputs, nothing dropped or handed off; the same check once more after the timed reps.
  const Totals before = totals(rig->dp);
  uint64_t fwd_laps = 0, agg_laps = 0;  // laps of all streams
  auto counter_mismatch = [&] {
    const Totals t = totals(rig->dp);
    std::string bad;
    if (t.drops != before.drops) bad += " pipeline drops " + std::to_string(t.drops) + ";";
    if (t.forwarded - before.forwarded != fwd_laps * n_in)
      bad += " forwarded " + std::to_string(t.forwarded - before.forwarded) + ";";
    if (t.flooded != before.flooded) bad += " flooded (not a learned forward);";
    if (t.transit_bad != 0) bad += " transit ICRC/malformed;";
    if (t.to_engine - before.to_engine != agg_laps * n_in)
      bad += " to_engine " + std::to_string(t.to_engine - before.to_engine) + ";";
    if (t.aggregations - before.aggregations != agg_laps * (kPsns + 1))
      bad += " aggregations " + std::to_string(t.aggregations - before.aggregations) + ";";
    const uint64_t repl = t.replicated - before.replicated;
    const uint64_t etx = t.engine_out - before.engine_out;
    if (repl != agg_laps * agg_out || etx != repl)
      bad += " engine out " + std::to_string(etx) + " replicated " + std::to_string(repl) + ";";
    if (t.engine_unaccounted != 0) bad += " engine rx not accounted;";
    if (t.handoff_in != 0) bad += " frames handed off between workers (dispatch);";
    if (t.lost != 0) bad += " mbuf/tx drops;";
    return bad;
  };
  auto check = [&](const char* when) {
    // The workers publish their counters every 50 ms, and a loaded machine can delay that:
    // read until they add up, at most 25 times (about 3 s), and report the last reading.
    std::string bad;
    for (int tries = 0; tries < 25; ++tries) {
      bad = counter_mismatch();
      if (bad.empty()) break;
    }
    if (rig->drain_tx() != 0) bad += " unexpected extra output frames;";
    if (!bad.empty()) die(std::string("counter check ") + when + ":" + bad);
  };

  // Two figures per rep and variant, from its --laps laps: the best lap (the one least
  // disturbed by other processes on this shared machine: the datapath's own cost) and the
  // median lap (what a loaded machine gives). [stat][variant]; ratios against the forward
  // variant of the same payload.
  constexpr int kStats = 2;
  const char* const stat_name[kStats] = {"best_lap", "median_lap"};
  const size_t nvar = variants.size();
  std::vector<std::vector<double>> mpps[kStats], ratio[kStats];
  for (int c = 0; c < kStats; ++c) {
    mpps[c].resize(nvar);
    ratio[c].resize(nvar);
  }
  const double frames_per_lap = static_cast<double>(n_in * workers);
  for (int r = -1; r < reps; ++r) {
    // Interleaved: in variant order on even reps, reversed on odd reps.
    std::vector<std::vector<double>> t(nvar);
    const bool reverse = (r & 1) != 0;
    for (int lap = 0; lap < laps; ++lap) {
      for (size_t k = 0; k < nvar; ++k) {
        const size_t v = reverse ? nvar - 1 - k : k;
        t[v].push_back(run_variant(v));
        if (variants[v].dtype < 0)
          fwd_laps += workers;
        else
          agg_laps += workers;
      }
    }
    if (r < 0) {
      check("after warm-up");
      continue;
    }
    for (size_t v = 0; v < nvar; ++v) {
      const bench::Stats st = bench::summarize(t[v]);
      mpps[0][v].push_back(frames_per_lap / st.min / 1e6);
      mpps[1][v].push_back(frames_per_lap / st.median / 1e6);
    }
    for (int c = 0; c < kStats; ++c) {
      for (size_t v = 0; v < nvar; ++v) {
        if (variants[v].dtype < 0) continue;
        const size_t fwd = v - 1 - static_cast<size_t>(variants[v].dtype);
        ratio[c][v].push_back(mpps[c][v].back() / mpps[c][fwd].back());
      }
    }
  }
  check("after the timed reps");

  const std::string common =
      "\"frames_per_lap\":" + std::to_string(n_in * workers) + ",\"laps\":" + std::to_string(laps) +
      ",\"fan_in\":8,\"workers\":" + std::to_string(workers) +
      ",\"cpus\":" + std::to_string(std::thread::hardware_concurrency()) + ",\"lcores\":\"" +
      lcores + "\",\"generator_rt\":" + (generator_rt ? "true" : "false") + ",";
  for (size_t v = 0; v < nvar; ++v) {
    const Variant& x = variants[v];
    const std::string pl = common + "\"payload_bytes\":" + std::to_string(x.payload) + ",";
    for (int c = 0; c < kStats; ++c) {
      const std::string st = pl + "\"lap_stat\":\"" + stat_name[c] + "\",";
      if (x.dtype < 0) {
        bench::emit("incd_loop", "forward_only", st, bench::summarize(mpps[c][v]), "Mpps", reps);
        continue;
      }
      const std::string extra =
          st + "\"dtype\":\"" +
          std::string(vocab::to_string(dtypes[static_cast<size_t>(x.dtype)])) + "\",";
      bench::emit("incd_loop", "mode2_aggregation", extra, bench::summarize(mpps[c][v]), "Mpps",
                  reps);
      bench::emit("incd_loop", "aggregation_vs_forward", extra, bench::summarize(ratio[c][v]),
                  "ratio", reps);
    }
  }
  for (size_t v = 0; v < nvar; ++v) {
    const Variant& x = variants[v];
    if (x.dtype < 0) continue;
    const size_t fwd = v - 1 - static_cast<size_t>(x.dtype);
    std::string line = "{\"bench\":\"incd_loop\",\"metric\":\"incd_loop_summary\"," + common +
                       "\"payload_bytes\":" + std::to_string(x.payload) + ",\"dtype\":\"" +
                       std::string(vocab::to_string(dtypes[static_cast<size_t>(x.dtype)])) + "\"";
    for (int c = 0; c < kStats; ++c) {
      const auto f = bench::summarize(mpps[c][fwd]), a = bench::summarize(mpps[c][v]),
                 q = bench::summarize(ratio[c][v]);
      char b[512];
      std::snprintf(b, sizeof b,
                    ",\"%s\":{\"forward_only_mpps\":%.3f,\"aggregation_mpps\":%.3f,"
                    "\"aggregated_gbps\":%.2f,\"ratio_median\":%.3f,\"ratio_min\":%.3f,"
                    "\"ratio_max\":%.3f,\"ratio_per_rep\":%s}",
                    stat_name[c], f.median, a.median, a.median * 1e6 * x.payload * 8 / 1e9,
                    q.median, q.min, q.max, rep_list(ratio[c][v]).c_str());
      line += b;
    }
    std::printf("%s}\n", line.c_str());
  }
  std::fflush(stdout);
  rig->dp.stop();
  rte_mempool_free(rig->pool);  // the workers are stopped: nobody holds its mbufs
  return 0;
}
