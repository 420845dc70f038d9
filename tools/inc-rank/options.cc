#include "tools/inc-rank/options.h"

#include <CLI/CLI.hpp>
#include <bit>
#include <string_view>

#include "host/collective/plan.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/collective_map.h"
#include "proto/vocab/limits.h"

namespace epic::tools::rank {

const char* const kUsage =
    R"(usage: inc-rank --iface IF --ip A.B.C.D --qpn N --switch-ip A.B.C.D --switch-qpn N
                --rank R --ranks N --initial-psn P --window MW --plan PLAN [options]
       inc-rank --transport verbs [--device DEV] [--ip A.B.C.D] --switch-ip A.B.C.D
                --switch-qpn N --rank R --ranks N --initial-psn P --window MW --plan PLAN
                [options]

One rank of an EPIC Mode-II group: an RC queue pair connected to the switch's
virtual endpoint for this rank, running PLAN through the switch (incd) as a rank
library does (host/collective CollectiveRunner). The queue pair is EPIC's soft
RcQp on an AF_PACKET socket, with its own MAC and IPv4 address on IF (--transport
soft, the default), or a real RDMA device's through libibverbs (--transport
verbs: ConnectX, Soft-RoCE rdma_rxe, any RoCEv2 NIC). Every rank
generates every rank's inputs from (--seed, collective index, rank), so each one
checks its own results bit for bit, with no coordinator. Start one inc-rank per
rank, with the same group, plan and seed options; they need not start together:
the switch aggregates each collective's control message, so no rank's data runs
ahead of the others.

  --transport soft|verbs      the queue pair (default soft)

endpoint, soft (as the switch's group configuration names this rank):
  --iface IF                  Linux interface towards the switch (required)
  --ip A.B.C.D                this rank's own IPv4 address (required; not an address
                              the kernel owns on IF)
  --mac MAC                   this rank's own MAC (default 02:00:A:B:C:D)
  --qpn N                     this rank's QP number (required)
  --udp-sport N               UDP source port of our frames (default 0xc000)
  --switch-ip A.B.C.D         the switch's virtual endpoint for this rank (required;
                              its MAC is resolved by ARP)
  --switch-qpn N              that endpoint's QP number (required)
  --arp-timeout-ms N          ARP resolution of the switch endpoint (default 5000)

endpoint, verbs (the device chooses the QP number: see --qpn-file):
  --device NAME               RDMA device (default: the first with an ACTIVE port and
                              a RoCEv2 IPv4 GID)
  --ib-port N                 its port (default 1)
  --gid-index N               RoCEv2 GID index (default -1: the GID of --ip, or the
                              first IPv4-mapped RoCEv2 GID without --ip)
  --ip A.B.C.D                optional: this rank's address, selects the GID
  --switch-ip A.B.C.D         the switch's virtual endpoint for this rank (required;
                              the kernel resolves its MAC by ARP when connecting)
  --switch-qpn N              that endpoint's QP number (required)
  --qp-timeout CODE           local ACK timeout 4.096 us * 2^CODE, 0-31 (default 14,
                              67 ms; use 18 or more under emulation)
  --min-rnr-timer CODE        RNR NAK timer this QP advertises, 0-31 (default 12)

rendezvous (either transport):
  --qpn-file PATH             once the QP exists, write its QP number (decimal and a
                              newline) to PATH, atomically (rename)
  --wait-file PATH            then wait until PATH exists before connecting (verbs)
                              and starting the first collective: the switch is
                              configured with our QPN
  --wait-timeout-ms N         bound on that wait (default 60000)

either transport:
  --traffic-class N           IP TOS (soft) or GRH traffic class (verbs) of our packets:
                              DSCP << 2 | ECN, 0-255 (default 0; 2 = ECT(0): ECN-capable,
                              so a congested hop marks CE and the receiver sends CNPs)

group (the same on every rank, as in the switch's configuration):
  --rank R                    this rank's index, 0 .. ranks-1 (required)
  --ranks N                   ranks in the group (required)
  --initial-psn P             the group's initial PSN, 0 .. 0xffffff (required)
  --window MW                 the group's window MW, a power of two up to 4096 (required);
                              verbs: a plan item larger than MW packets per message
                              runs as several collectives, as libinc splits a call
  --pmtu N                    path MTU: 256 512 1024 2048 4096 (default 1024)
  --accumulator NAME          the group's accumulator profile: fp32_arrival (default) or
                              kulisch_fixed (exact float sums, rounded once)
  --group-dtype DTYPE         the element type the group's slots are sized for
                              (required with kulisch_fixed; a collective whose
                              accumulator does not fit is refused, docs/arithmetic.md)

plan:
  --plan PLAN                 the collectives to run, in order, comma-separated:
                                allreduce:DTYPE:OP:COUNT    reduce:DTYPE:OP:root=R:COUNT
                                broadcast:DTYPE:root=R:COUNT
                                reduce_scatter:DTYPE:OP:COUNT
                                allgather:DTYPE:COUNT       barrier
                              DTYPE int32 fp32 fp16 bf16 int8 fp8_e4m3 fp8_e5m2,
                              OP sum min max; COUNT is
                              elements per rank (reduce_scatter, allgather: of each
                              rank's chunk). Example:
                              allreduce:int32:sum:1048576,barrier,broadcast:fp32:root=2:4096
  --reps K                    run the plan K times (default 1)
  --no-split                  verbs: post every plan item as one collective, even where its
                              RC message passes MW x path MTU (the NIC then sends it whole,
                              beyond the window: docs/libinc.md "Messages and the window")
  --seed S                    seed of every rank's inputs (default 1)
  --inputs exact|adversarial  exact (default): values every profile reduces exactly;
                              adversarial: float values whose sums only kulisch_fixed
                              gets right (cancellation, tiny terms, overflow, NaN/inf/-0)

RC and bounds:
  --timeout-ms T              each collective, and the final acknowledgements of our
                              uploads (default 10000)
  --retransmit-timeout-us N   soft: local ACK timeout (default 20000)
  --retry-count N             retransmissions before the QP fails, 0-7 (default 7);
                              the RNR retry count is 7 (infinite), as the switch needs
  --linger-ms N               keep acknowledging after the last collective (default 200)

loss injection (soft, our side, seeded, off by default):
  --tx-loss R                 drop this fraction of our outgoing RoCE frames
  --ack-loss R                drop this fraction of incoming ACK/NAK frames
  --rx-loss R                 drop this fraction of incoming result packets
  --loss-seed N               seed of the loss (default 1)

output:
  --json                      one JSON line per collective, then a summary line:
                              {"rank":R,"k":i,"primitive":..,"dtype":..,"op":..,
                              "root":..,"count":N,"bytes":B,"ok":true,"latency_us":X}
                              {"rank":R,"summary":true,"collectives":..,"failed":..,
                              "retransmits":..,"timeouts":..,...}
                              (verbs: the NIC keeps its own retransmission counters;
                              the summary's are 0)
  --dump PATH                 also write one JSON line per collective to PATH:
                              {"k":i,"type":..,"dtype":..,"op":..,"root":..,
                              "input":HEX,"result":HEX}
  -h, --help                  this text

Numbers are decimal or 0x-prefixed hexadecimal. bytes is the larger of a rank's
input and result buffers; latency_us runs from posting the collective to its
last result. Without --json, one line per collective and a final "INC_RANK
PASS|FAIL ..." line. With verbs, a line on stderr describes the connected QP.
exit status: 0 every result matched, 1 a result differed (the collective and
the first differing byte offset are printed), 2 usage error, 3 setup failure
(interface, ARP, RDMA device, the wait file), a collective or the final
acknowledgements timed out (with a dump of the stuck state), or the QP failed.
)";

namespace {

std::string check_rate(const char* name, double v) {
  if (v >= 0.0 && v <= 1.0) return "";
  return std::string(name) + " is a fraction in [0, 1], got " + std::to_string(v);
}

}  // namespace

ParsedOptions parse_options(int argc, const char* const* argv) {
  ParsedOptions r;
  Options& o = r.options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      o.help = true;
      return r;
    }
  }
  CLI::App app("inc-rank", "inc-rank");
  app.set_help_flag();
  // A later occurrence overrides an earlier one (scripts append to a common command line).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string ip, mac, switch_ip;
  unsigned retry = o.retry_count;
  unsigned ib_port = o.ib_port, qp_timeout = o.qp_timeout, min_rnr = o.min_rnr_timer;
  // Required options are checked after parsing (which ones depends on --transport), in this
  // order, with CLI11's message.
  app.add_option("--transport", o.transport)->check(CLI::IsMember({"soft", "verbs"}));
  app.add_option("--iface", o.iface);
  app.add_option("--ip", ip);
  app.add_option("--mac", mac);
  app.add_option("--qpn", o.qpn)->check(CLI::Range(1u, 0xFFFFFFu));
  app.add_option("--udp-sport", o.udp_sport)->check(CLI::Range(1, 65535));
  app.add_option("--traffic-class", o.traffic_class)->check(CLI::Range(0, 255));
  app.add_option("--switch-ip", switch_ip);
  app.add_option("--switch-qpn", o.switch_qpn)->check(CLI::Range(1u, 0xFFFFFFu));
  app.add_option("--arp-timeout-ms", o.arp_timeout_ms)->check(CLI::Range(1u, 600000u));
  app.add_option("--device", o.device);
  app.add_option("--ib-port", ib_port)->check(CLI::Range(1u, 255u));
  app.add_option("--gid-index", o.gid_index)->check(CLI::Range(-1, 65535));
  app.add_option("--qp-timeout", qp_timeout)->check(CLI::Range(0u, 31u));
  app.add_option("--min-rnr-timer", min_rnr)->check(CLI::Range(0u, 31u));
  app.add_option("--qpn-file", o.qpn_file);
  app.add_option("--wait-file", o.wait_file);
  app.add_option("--wait-timeout-ms", o.wait_timeout_ms)->check(CLI::Range(1u, 3600000u));
  app.add_option("--rank", o.rank);
  app.add_option("--ranks", o.ranks)->check(CLI::Range(1, 65535));
  app.add_option("--initial-psn", o.initial_psn)->check(CLI::Range(0u, 0xFFFFFFu));
  app.add_option("--window", o.window)->check(CLI::Range(1u, 4096u));
  app.add_option("--pmtu", o.pmtu)
      ->check(CLI::Validator(
          [](std::string& s) {
            const auto v = std::strtoul(s.c_str(), nullptr, 10);
            return vocab::valid_pmtu(static_cast<uint32_t>(v))
                       ? std::string()
                       : "path MTU " + s + " is not one of " + std::string(vocab::kPmtuChoices);
          },
          "PMTU"));
  std::string accumulator, group_dtype, inputs = "exact";
  app.add_option("--accumulator", accumulator);
  app.add_option("--group-dtype", group_dtype);
  bool no_split = false;
  app.add_flag("--no-split", no_split);
  app.add_option("--inputs", inputs)->check(CLI::IsMember({"exact", "adversarial"}));
  app.add_option("--dump", o.dump_path);
  app.add_option("--plan", o.plan_text);
  app.add_option("--reps", o.reps)->check(CLI::Range(1u, 100000000u));
  app.add_option("--seed", o.seed);
  app.add_option("--timeout-ms", o.timeout_ms)->check(CLI::Range(1u, 3600000u));
  app.add_option("--retransmit-timeout-us", o.retransmit_timeout_us)
      ->check(CLI::Range(1u, 60000000u));
  app.add_option("--retry-count", retry)->check(CLI::Range(0u, 7u));
  app.add_option("--linger-ms", o.linger_ms)->check(CLI::Range(0u, 600000u));
  app.add_option("--tx-loss", o.loss.tx_rate);
  app.add_option("--ack-loss", o.loss.rx_ack_rate);
  app.add_option("--rx-loss", o.loss.rx_request_rate);
  app.add_option("--loss-seed", o.loss.seed);
  app.add_flag("--json", o.json);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    r.error = e.what();
    return r;
  }
  auto fail = [&](std::string msg) {
    r.error = std::move(msg);
    return r;
  };
  const bool verbs = o.transport == "verbs";
  struct Required {
    const char* name;
    bool soft_only;
  };
  for (const Required& q : {Required{"--iface", true},
                            {"--ip", true},
                            {"--qpn", true},
                            {"--switch-ip", false},
                            {"--switch-qpn", false},
                            {"--rank", false},
                            {"--ranks", false},
                            {"--initial-psn", false},
                            {"--window", false},
                            {"--plan", false}}) {
    if ((!verbs || !q.soft_only) && app.count(q.name) == 0) {
      return fail(std::string(q.name) + " is required");
    }
  }
  for (const char* name :
       {"--iface", "--mac", "--qpn", "--udp-sport", "--arp-timeout-ms", "--retransmit-timeout-us",
        "--tx-loss", "--ack-loss", "--rx-loss", "--loss-seed"}) {
    if (verbs && app.count(name) > 0) {
      return fail(std::string(name) + " applies to --transport soft only");
    }
  }
  for (const char* name :
       {"--device", "--ib-port", "--gid-index", "--qp-timeout", "--min-rnr-timer"}) {
    if (!verbs && app.count(name) > 0) {
      return fail(std::string(name) + " applies to --transport verbs only");
    }
  }
  if (!o.wait_file.empty() && o.wait_file == o.qpn_file) {
    return fail("--wait-file and --qpn-file must differ");
  }
  o.retry_count = static_cast<uint8_t>(retry);
  o.ib_port = static_cast<uint8_t>(ib_port);
  o.qp_timeout = static_cast<uint8_t>(qp_timeout);
  o.min_rnr_timer = static_cast<uint8_t>(min_rnr);
  if (!ip.empty() || !verbs) {
    const auto own_ip = vocab::parse_ipv4(ip);
    if (!own_ip || *own_ip == 0) return fail("--ip: '" + ip + "' is not an IPv4 address");
    o.ip = *own_ip;
  }
  const auto sw_ip = vocab::parse_ipv4(switch_ip);
  if (!sw_ip || *sw_ip == 0) return fail("--switch-ip: '" + switch_ip + "' is not an IPv4 address");
  o.switch_ip = *sw_ip;
  if (o.ip == o.switch_ip) return fail("--ip and --switch-ip must differ");
  if (!verbs && mac.empty()) {
    o.mac = {0x02, 0x00};  // then the four bytes of --ip: 02:00:A:B:C:D
    for (int i = 0; i < 4; ++i) o.mac[2 + i] = static_cast<uint8_t>(o.ip >> (24 - 8 * i));
  } else if (!verbs) {
    const auto m = vocab::parse_mac(mac);
    if (!m || ((*m)[0] & 1) != 0) return fail("--mac: '" + mac + "' is not a unicast MAC address");
    o.mac = *m;
  }
  if (o.rank >= o.ranks) {
    return fail("--rank " + std::to_string(o.rank) + " is not a rank of a group of " +
                std::to_string(o.ranks) + " (0 .. " + std::to_string(o.ranks - 1) + ")");
  }
  if (!std::has_single_bit(o.window)) {
    return fail("--window must be a power of two (the group's MW), got " +
                std::to_string(o.window));
  }
  for (const auto& [name, v] : {std::pair{"--tx-loss", o.loss.tx_rate},
                                {"--ack-loss", o.loss.rx_ack_rate},
                                {"--rx-loss", o.loss.rx_request_rate}}) {
    if (std::string why = check_rate(name, v); !why.empty()) return fail(why);
  }
  o.adversarial = inputs == "adversarial";
  o.split = !no_split;
  if (!accumulator.empty()) {
    const auto p = vocab::parse_profile(accumulator);
    if (!p)
      return fail("--accumulator: '" + accumulator + "' is not fp32_arrival or kulisch_fixed");
    o.arith.profile = *p;
  }
  if (!group_dtype.empty()) {
    const auto t = vocab::parse_dtype(group_dtype);
    if (!t) {
      return fail("--group-dtype: '" + group_dtype +
                  "' is not one of int32 fp32 fp16 bf16 int8 fp8_e4m3 fp8_e5m2");
    }
    o.arith.dtype = *t;
  }
  if (o.arith.profile == vocab::AccumProfile::kKulischFixed && !o.arith.dtype) {
    return fail("--accumulator kulisch_fixed needs --group-dtype (what the slots are sized for)");
  }
  host::ParsedPlan plan = host::parse_plan(o.plan_text);
  if (!plan.error.empty()) return fail("--plan: " + plan.error);
  if (std::string why = host::check_plan(plan.plan, o.ranks); !why.empty()) {
    return fail("--plan: " + why);
  }
  for (const vocab::CollectiveDescriptor& d : plan.plan) {
    if (vocab::check_collective(d, o.ranks, o.pmtu, o.arith) ==
        vocab::CollectiveFault::kArithmetic) {
      return fail("--plan: " + host::format_collective(d) + ": " +
                  std::string(vocab::to_string(vocab::CollectiveFault::kArithmetic)) + " (" +
                  std::string(vocab::to_string(o.arith.profile)) + ", group dtype " +
                  (o.arith.dtype ? std::string(vocab::to_string(*o.arith.dtype)) : "unset") + ")");
    }
    if (o.adversarial && !vocab::is_float(d.dtype) && d.type != vocab::CollectiveType::kBarrier) {
      return fail("--inputs adversarial: " + host::format_collective(d) + " is not a float type");
    }
  }
  o.plan = std::move(plan.plan);
  return r;
}

}  // namespace epic::tools::rank
