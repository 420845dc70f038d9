#include "tools/inc-rank/run.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <utility>
#include <vector>

#include "datapath/wire/addr.h"
#include "host/collective/collective_runner.h"
#include "host/collective/expected.h"
#include "host/collective/inputs.h"
#include "host/collective/layout.h"
#include "host/collective/plan.h"
#include "host/transport/soft/io/mono_clock.h"
#include "host/transport/soft/io/soft_nic.h"
#include "tools/inc-rank/report.h"

namespace epic::tools::rank {

namespace {

namespace io = epic::soft::io;
using std::chrono::milliseconds;

struct Stop {
  int code = kExitPass;
  std::string error;
};

soft::QpConfig qp_config(const Options& o, const wire::MacAddr& switch_mac) {
  soft::QpConfig c;
  c.qpn = o.qpn;
  c.remote_qpn = o.switch_qpn;
  c.sq_psn = c.rq_psn = o.initial_psn;  // every rank and the switch start at the group's PSN
  c.pmtu = o.pmtu;
  c.max_outstanding = o.window;
  c.retransmit_timeout_ns = uint64_t{o.retransmit_timeout_us} * 1000;
  c.retry_count = o.retry_count;
  c.rnr_retry = 7;  // infinite: the switch answers RNR NAK while other ranks are slow
  // AllGather posts a receive per other rank, ReduceScatter a send per rank, and a rank may
  // start the next collective before its uploads are acknowledged.
  c.max_recv_wr = std::max<uint32_t>(1024, 2 * (uint32_t{o.ranks} + 1));
  c.max_send_wr = std::max<uint32_t>(1024, 4 * (uint32_t{o.ranks} + 1));
  c.path.local_mac = o.mac;
  c.path.remote_mac = switch_mac;
  c.path.local_ipv4 = o.ip;
  c.path.remote_ipv4 = o.switch_ip;
  c.path.udp_src_port = o.udp_sport;
  return c;
}

// Checks rank o.rank's result of collective k against what every rank's inputs give.
CollectiveOutcome check(const Options& o, uint64_t k, const engine::CollectiveDescriptor& d,
                        const std::vector<uint8_t>& result, double latency_us) {
  CollectiveOutcome c;
  c.k = k;
  c.desc = d;
  c.bytes = std::max(host::send_bytes(d, o.ranks), host::recv_bytes(d, o.rank, o.ranks));
  c.latency_us = latency_us;
  const std::vector<uint8_t> want =
      host::expected_result(d, o.rank, host::exact_inputs(d, o.ranks, o.seed, k));
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

Stop run_plan(io::SoftNic& nic, soft::RcQp& qp, const Options& o, Summary& sum) {
  host::CollectiveRunner runner(qp, o.rank, o.ranks);
  // Inputs stay alive until the QP no longer reads them (after the collective's uploads are
  // acknowledged, which can be after its results are in).
  std::deque<std::pair<uint64_t, std::vector<uint8_t>>> inputs;
  std::vector<uint8_t> result;
  const milliseconds timeout(o.timeout_ms);
  // Completions may post deferred data: transmit it now, not at the next event.
  auto advance = [&] {
    runner.poll();
    nic.kick();
  };
  const uint64_t total = uint64_t{o.reps} * o.plan.size();
  for (uint64_t k = 0; k < total; ++k) {
    const engine::CollectiveDescriptor& d = o.plan[k % o.plan.size()];
    while (!inputs.empty() && inputs.front().first < runner.sends_busy_from()) inputs.pop_front();
    inputs.emplace_back(k, host::exact_input(d, o.ranks, o.seed, k, o.rank));
    result.assign(host::recv_bytes(d, o.rank, o.ranks), 0xEE);
    const auto t0 = io::MonoClock::now();
    if (!runner.start(d, inputs.back().second, result)) return {kExitSetup, runner.error()};
    const bool finished = nic.run_until(
        [&] {
          advance();
          return runner.done() || !runner.error().empty();
        },
        timeout);
    const double us = std::chrono::duration<double, std::micro>(io::MonoClock::now() - t0).count();
    if (!runner.error().empty()) return {kExitSetup, runner.error()};
    if (!finished) {
      const std::string what =
          "collective " + std::to_string(k) + " (" + host::format_collective(d) + ")";
      if (!nic.failure().empty()) return {kExitSetup, nic.failure() + " during " + what};
      return {kExitSetup, what + " timed out after " + std::to_string(o.timeout_ms) +
                              " ms (the first one also waits for every rank to start)\n  " +
                              runner.dump()};
    }
    const CollectiveOutcome c = check(o, k, d, result, us);
    ++sum.collectives;
    if (c.first_difference) ++sum.failed;
    std::printf("%s\n", collective_line(o.rank, c, o.json).c_str());
  }
  // Our last uploads are acknowledged once their receivers acknowledged them; then linger so
  // that our own last ACKs can be repeated if the switch re-sends a result.
  const bool acked = nic.run_until(
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
  nic.run_for(milliseconds(o.linger_ms));
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
  io::SoftNicConfig nc;
  nc.ifname = o.iface;
  nc.mac = o.mac;
  nc.ipv4 = o.ip;
  nc.loss = o.loss;
  auto nic = io::SoftNic::open(nc);
  if (!nic.ok()) return finish({kExitSetup, nic.error});
  auto mac = nic.value->resolve(o.switch_ip, milliseconds(o.arp_timeout_ms));
  if (!mac.ok()) {
    return finish({kExitSetup, mac.error + " (is incd running, with " +
                                   wire::format_ipv4(o.switch_ip) + " among its inc_addresses?)"});
  }
  soft::RcQp qp(qp_config(o, mac.value));
  nic.value->attach(qp);
  const Stop stop = run_plan(*nic.value, qp, o, sum);
  sum.qp = qp.counters();
  nic.value->detach(qp.config().qpn);
  return finish(stop);
}

}  // namespace epic::tools::rank
