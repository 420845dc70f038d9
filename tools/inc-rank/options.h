// inc-rank's command line: the rank's endpoint, the switch endpoint it talks
// to, the group parameters every rank shares, the plan, bounds and output.
// parse_options() validates everything once (plan syntax and the plan against
// the group included); the rest of the tool reads plain values.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/transport/soft/io/loss_injector.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/collective.h"
#include "proto/vocab/limits.h"

namespace epic::tools::rank {

struct Options {
  bool help = false;

  // "soft": EPIC's user-space RC endpoint on an interface (AF_PACKET);
  // "verbs": an RC QP on an RDMA device (rdma-core), the QPN chosen by the device
  std::string transport = "soft";

  // this rank's endpoint, and the switch's virtual endpoint for it
  std::string iface;  // soft
  vocab::MacAddr mac{};
  uint32_t ip = 0;   // host order (verbs: optional, 0 = any; selects the GID)
  uint32_t qpn = 0;  // soft
  uint16_t udp_sport = 0xC000;
  uint32_t traffic_class = 0;  // IP TOS / GRH traffic class 0-255: DSCP << 2 | ECN (2 = ECT(0))
  uint32_t switch_ip = 0;
  uint32_t switch_qpn = 0;
  uint32_t arp_timeout_ms = 5000;

  // verbs
  std::string device;  // "" = the first usable one
  uint8_t ib_port = 1;
  int gid_index = -1;       // -1 = the RoCEv2 GID of --ip (or the first IPv4 one)
  uint8_t qp_timeout = 14;  // local ACK timeout code: 4.096 us * 2^code
  uint8_t min_rnr_timer = 12;

  // rendezvous: write our QPN, then wait for the switch to be configured
  std::string qpn_file;
  std::string wait_file;
  uint32_t wait_timeout_ms = 60000;

  // the group (the same on every rank and in the switch's configuration)
  uint16_t rank = 0;
  uint16_t ranks = 0;
  uint32_t initial_psn = 0;
  uint32_t window = 0;  // MW
  uint16_t pmtu = vocab::kDefaultPmtu;
  // The group's arithmetic (as in the switch's configuration): the accumulator profile and the
  // dtype its slots are sized for (docs/arithmetic.md). Results are checked against it.
  vocab::GroupArith arith{};

  // what to run
  std::string plan_text;
  std::vector<vocab::CollectiveDescriptor> plan;
  uint32_t reps = 1;
  uint64_t seed = 1;
  // Inputs: "exact" (host::exact_input, reducible in any order) or "adversarial"
  // (host::adversarial_input: float values whose sums only an exact profile gets right).
  bool adversarial = false;
  // verbs: a plan item whose RC message would pass MW x path MTU runs as several collectives,
  // as libinc splits a call (host/collective/piece_size.h, split_call.h); --no-split posts it
  // as one (a NIC sends a whole message whatever the window: docs/libinc.md).
  bool split = true;
  // When set: one JSON line per collective with this rank's input and result (hex), for a
  // checker outside EPIC (tests/integration/incd_exact.py).
  std::string dump_path;

  // RC and bounds
  uint32_t timeout_ms = 10000;  // each collective; the final acknowledgements
  uint32_t retransmit_timeout_us = 20000;
  uint8_t retry_count = 7;
  uint32_t linger_ms = 200;

  soft::io::LossConfig loss;  // injected on our side

  bool json = false;
};

struct ParsedOptions {
  Options options;
  std::string error;  // empty: options are valid (or help was asked for)
};

ParsedOptions parse_options(int argc, const char* const* argv);
extern const char* const kUsage;

}  // namespace epic::tools::rank
