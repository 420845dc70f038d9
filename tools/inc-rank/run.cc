#include "tools/inc-rank/run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "host/collective/adversarial.h"
#include "host/collective/collective_runner.h"
#include "host/collective/expected.h"
#include "host/collective/inputs.h"
#include "host/collective/layout.h"
#include "host/collective/piece_size.h"
#include "host/collective/plan.h"
#include "host/collective/split_call.h"
#include "host/transport/soft/io/mono_clock.h"
#include "host/transport/soft/io/soft_nic.h"
#include "host/transport/soft/io/soft_transport.h"
#include "proto/vocab/addr.h"
#include "tools/inc-rank/report.h"

#ifdef EPIC_HAVE_VERBS
#include "host/transport/verbs/verbs_transport.h"
#endif

namespace epic::tools::rank {

namespace {

namespace io = epic::soft::io;
using std::chrono::milliseconds;

struct Stop {
  int code = kExitPass;
  std::string error;
};

soft::QpConfig qp_config(const Options& o) {
  soft::QpConfig c;
  c.qpn = o.qpn;
  c.remote_qpn = o.switch_qpn;
  c.sq_psn = c.rq_psn = o.initial_psn;  // every rank and the switch start at the group's PSN
  c.pmtu = o.pmtu;
  c.max_outstanding = o.window;
  c.retransmit_timeout_ns = uint64_t{o.retransmit_timeout_us} * 1000;
  c.retry_count = o.retry_count;
  c.rnr_retry = 7;            // infinite: the switch answers RNR NAK while other ranks are slow
  c.probe_on_timeout = true;  // the switch holds our uploads while others are slow
  // AllGather posts a receive per other rank, ReduceScatter a send per rank, and a rank may
  // start the next collective before its uploads are acknowledged.
  c.max_recv_wr = std::max<uint32_t>(1024, 2 * (uint32_t{o.ranks} + 1));
  c.max_send_wr = std::max<uint32_t>(1024, 4 * (uint32_t{o.ranks} + 1));
  c.path.local_mac = o.mac;
  c.path.local_ipv4 = o.ip;
  c.path.remote_ipv4 = o.switch_ip;
  c.path.udp_src_port = o.udp_sport;
  c.path.tos = static_cast<uint8_t>(o.traffic_class);
  return c;
}

#ifdef EPIC_HAVE_VERBS
verbs::VerbsConfig verbs_config(const Options& o) {
  verbs::VerbsConfig c;
  c.device = o.device;
  c.port = o.ib_port;
  c.gid_index = o.gid_index;
  c.local_ipv4 = o.ip;
  c.remote_ipv4 = o.switch_ip;
  c.sq_psn = c.rq_psn = o.initial_psn;  // every rank and the switch start at the group's PSN
  c.pmtu = o.pmtu;
  c.max_outstanding = o.window;
  c.timeout_code = o.qp_timeout;
  c.retry_count = o.retry_count;
  c.rnr_retry = 7;  // infinite: the switch answers RNR NAK while other ranks are slow
  c.min_rnr_timer = o.min_rnr_timer;
  c.traffic_class = static_cast<uint8_t>(o.traffic_class);
  c.max_recv_wr = std::max<uint32_t>(1024, 2 * (uint32_t{o.ranks} + 1));
  c.max_send_wr = std::max<uint32_t>(1024, 4 * (uint32_t{o.ranks} + 1));
  return c;
}
#endif

// Writes "<qpn>\n" to `path` through a temporary file and rename(), so that a
// reader never sees a partial number. "" or why it failed.
std::string write_qpn_file(const std::string& path, uint32_t qpn) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return "--qpn-file: cannot create " + tmp + ": " + std::strerror(errno);
  const bool wrote = std::fprintf(f, "%u\n", qpn) > 0;
  const bool flushed = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !wrote || !flushed) {
    std::remove(tmp.c_str());
    return "--qpn-file: cannot write " + tmp + ": " + std::strerror(err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return "--qpn-file: cannot rename " + tmp + " to " + path + ": " + std::strerror(e);
  }
  return "";
}

// Waits until `path` exists, driving the transport meanwhile (the soft one
// answers ARP). "" or why it failed.
std::string wait_for_file(host::Transport& t, const std::string& path, uint32_t timeout_ms) {
  auto exists = [&] {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  };
  const auto deadline = io::MonoClock::now() + milliseconds(timeout_ms);
  while (!exists()) {
    if (!t.failure().empty()) return t.failure() + " while waiting for --wait-file " + path;
    if (io::MonoClock::now() >= deadline) {
      return "--wait-file " + path + " did not appear within " + std::to_string(timeout_ms) +
             " ms (--wait-timeout-ms): the switch was not configured with this rank's QPN";
    }
    t.run_until(exists, milliseconds(20));
  }
  return "";
}

// Every rank's inputs to collective k (each rank generates any rank's).
std::vector<std::vector<uint8_t>> rank_inputs(const Options& o,
                                              const vocab::CollectiveDescriptor& d, uint64_t k) {
  return o.adversarial ? host::adversarial_inputs(d, o.ranks, o.seed, k)
                       : host::exact_inputs(d, o.ranks, o.seed, k);
}

std::string hex(const std::vector<uint8_t>& b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * b.size());
  for (uint8_t x : b) {
    s += digits[x >> 4];
    s += digits[x & 15];
  }
  return s;
}

// --dump: this rank's input and result of collective k, for a checker outside EPIC.
void dump(std::FILE* f, uint64_t k, const vocab::CollectiveDescriptor& d,
          const std::vector<uint8_t>& input, const std::vector<uint8_t>& result) {
  std::fprintf(f,
               "{\"k\":%llu,\"type\":\"%s\",\"dtype\":\"%s\",\"op\":\"%s\",\"root\":%u,"
               "\"input\":\"%s\",\"result\":\"%s\"}\n",
               static_cast<unsigned long long>(k), std::string(vocab::to_string(d.type)).c_str(),
               std::string(vocab::to_string(d.dtype)).c_str(),
               std::string(vocab::to_string(d.op)).c_str(), unsigned{d.root}, hex(input).c_str(),
               hex(result).c_str());
}

// Checks rank o.rank's result of collective k against what every rank's inputs give.
CollectiveOutcome check(const Options& o, uint64_t k, const vocab::CollectiveDescriptor& d,
                        const std::vector<uint8_t>& result, double latency_us) {
  CollectiveOutcome c;
  c.k = k;
  c.desc = d;
  c.bytes = std::max(host::send_bytes(d, o.ranks), host::recv_bytes(d, o.rank, o.ranks));
  c.latency_us = latency_us;
  const std::vector<uint8_t> want = host::expected_result(d, o.rank, rank_inputs(o, d, k), o.arith);
  c.first_difference = host::first_difference(result, want);
  if (c.first_difference) {
    const size_t at = *c.first_difference;
    std::fprintf(stderr,
                 "inc-rank: rank %u: collective %llu (%s): the result differs from the expected "
                 "at byte offset %zu of %zu (got 0x%02x, want 0x%02x)\n",
                 o.rank, static_cast<unsigned long long>(k), host::format_collective(d).c_str(), at,
                 want.size(), at < result.size() ? result[at] : 0, at < want.size() ? want[at] : 0);
  }
  return c;
}

// Elements per collective of plan item `d` (host/collective/piece_size.h): for verbs, every RC
// message within MW x path MTU, as libinc splits a call; unbounded for the soft transport (it
// paces packets itself) and with --no-split.
size_t piece_of(const Options& o, const vocab::CollectiveDescriptor& d) {
  const size_t max_message =
      o.transport == "verbs" && o.split ? size_t{o.window} * o.pmtu : SIZE_MAX;
  return host::piece_elements(d.type, vocab::wire_bytes(d.dtype), o.ranks,
                              vocab::kMaxCollectiveBytes, max_message);
}

Stop run_plan(host::Transport& qp, const Options& o, Summary& sum) {
  host::CollectiveRunner runner(qp, o.rank, o.ranks);
  // A plan item's input (and its split's staging) stays alive until the QP no longer reads it:
  // after the uploads of its last collective are acknowledged, which can be after its results
  // are in.
  struct Input {
    uint64_t last = 0;  // runner index of its last collective
    std::vector<uint8_t> data;
    host::SplitCall split;
  };
  std::deque<Input> inputs;
  std::vector<uint8_t> result;
  // Destroyed before `inputs` and `result`: a run that stops early withdraws the work
  // requests still pointing into them (Endpoint::flush) before they are freed.
  struct FlushUnlessFinished {
    host::Transport& qp;
    bool finished = false;
    ~FlushUnlessFinished() {
      if (!finished) qp.flush();
    }
  } guard{qp};
  const milliseconds timeout(o.timeout_ms);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> dump_file(nullptr, std::fclose);
  if (!o.dump_path.empty()) {
    dump_file.reset(std::fopen(o.dump_path.c_str(), "w"));
    if (!dump_file) return {kExitSetup, "--dump " + o.dump_path + ": " + std::strerror(errno)};
  }
  // Completions may post deferred data; the transport transmits it right away.
  auto advance = [&] { runner.poll(); };
  const uint64_t total = uint64_t{o.reps} * o.plan.size();
  for (uint64_t k = 0; k < total; ++k) {
    const vocab::CollectiveDescriptor& d = o.plan[k % o.plan.size()];
    while (!inputs.empty() && inputs.front().last < runner.sends_busy_from()) inputs.pop_front();
    Input& in = inputs.emplace_back();
    in.data = o.adversarial ? host::adversarial_input(d, o.ranks, o.seed, k, o.rank)
                            : host::exact_input(d, o.ranks, o.seed, k, o.rank);
    result.assign(host::recv_bytes(d, o.rank, o.ranks), 0xEE);
    in.split = host::split_call(d, o.rank, o.ranks, in.data.data(), result.data(), piece_of(o, d));
    const auto t0 = io::MonoClock::now();
    bool finished = true;
    for (const host::CollectivePiece& p : in.split.pieces) {
      if (!runner.start(p.desc, {p.send, p.send_len}, {p.recv, p.recv_len}))
        return {kExitSetup, runner.error()};
      in.last = runner.started() - 1;
      finished = qp.run_until(
          [&] {
            advance();
            return runner.done() || !runner.error().empty();
          },
          timeout);
      if (!finished || !runner.error().empty()) break;
    }
    in.split.finish();
    const double us = std::chrono::duration<double, std::micro>(io::MonoClock::now() - t0).count();
    if (!runner.error().empty()) return {kExitSetup, runner.error()};
    if (!finished) {
      const std::string what =
          "collective " + std::to_string(k) + " (" + host::format_collective(d) + ")";
      if (!qp.failure().empty()) return {kExitSetup, qp.failure() + " during " + what};
      return {kExitSetup, what + " timed out after " + std::to_string(o.timeout_ms) +
                              " ms (the first one also waits for every rank to start)\n  " +
                              runner.dump()};
    }
    const CollectiveOutcome c = check(o, k, d, result, us);
    if (dump_file) dump(dump_file.get(), k, d, in.data, result);
    ++sum.collectives;
    if (c.first_difference) ++sum.failed;
    std::printf("%s\n", collective_line(o.rank, c, o.json).c_str());
  }
  // Our last uploads are acknowledged once their receivers acknowledged them; then linger so
  // that our own last ACKs can be repeated if the switch re-sends a result.
  const bool acked = qp.run_until(
      [&] {
        advance();
        return runner.sends_complete() || !runner.error().empty();
      },
      timeout);
  if (!runner.error().empty()) return {kExitSetup, runner.error()};
  if (!acked) {
    return {kExitSetup, "the uploads of the last collectives were not acknowledged within " +
                            std::to_string(o.timeout_ms) + " ms\n  " + runner.dump()};
  }
  qp.run_until([] { return false; }, milliseconds(o.linger_ms));
  guard.finished = true;
  return {sum.failed > 0 ? kExitWrongResult : kExitPass, ""};
}

}  // namespace

int run_rank(const Options& o) {
  Summary sum;
  auto finish = [&](const Stop& stop) {
    sum.exit_code = stop.code;
    sum.error = stop.error;
    if (!stop.error.empty())
      std::fprintf(stderr, "inc-rank: rank %u: %s\n", o.rank, stop.error.c_str());
    std::printf("%s\n", summary_line(o.rank, sum, o.json).c_str());
    std::fflush(stdout);
    return stop.code;
  };
  std::unique_ptr<host::Transport> transport;
  io::SoftTransport* soft = nullptr;
#ifdef EPIC_HAVE_VERBS
  verbs::VerbsTransport* vt = nullptr;
#endif
  if (o.transport == "verbs") {
#ifdef EPIC_HAVE_VERBS
    auto t = verbs::VerbsTransport::create(verbs_config(o));
    if (!t.ok()) return finish({kExitSetup, t.error});
    vt = t.value.get();
    transport = std::move(t.value);
#else
    return finish({kExitSetup,
                   "--transport verbs: this inc-rank was built without libibverbs "
                   "(apt-get install libibverbs-dev, then rebuild)"});
#endif
  } else {
    io::SoftTransportConfig tc;
    tc.nic.ifname = o.iface;
    tc.nic.mac = o.mac;
    tc.nic.ipv4 = o.ip;
    tc.nic.loss = o.loss;
    tc.qp = qp_config(o);
    tc.arp_timeout = milliseconds(o.arp_timeout_ms);
    auto t = io::SoftTransport::open(tc);
    if (!t.ok()) return finish({kExitSetup, t.error});
    soft = t.value.get();
    transport = std::move(t.value);
  }
  if (!o.qpn_file.empty()) {
    if (std::string why = write_qpn_file(o.qpn_file, transport->qpn()); !why.empty()) {
      return finish({kExitSetup, why});
    }
  }
  if (!o.wait_file.empty()) {
    if (std::string why = wait_for_file(*transport, o.wait_file, o.wait_timeout_ms); !why.empty()) {
      return finish({kExitSetup, why});
    }
  }
#ifdef EPIC_HAVE_VERBS
  if (vt != nullptr) {
    if (auto st = vt->connect(o.switch_ip, o.switch_qpn); !st.ok()) {
      return finish({kExitSetup, st.error});
    }
    std::fprintf(stderr, "inc-rank: rank %u: %s\n", o.rank, vt->describe().c_str());
  }
#endif
  const Stop stop = run_plan(*transport, o, sum);
  if (soft != nullptr) {
    sum.qp = soft->qp().counters();
    sum.kernel_rx_drops = soft->nic().kernel_rx_drops();
  }
  return finish(stop);
}

}  // namespace epic::tools::rank
