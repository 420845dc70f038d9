// inc-rank's command line: the rank's endpoint, the switch endpoint it talks
// to, the group parameters every rank shares, the plan, bounds and output.
// parse_options() validates everything once (plan syntax and the plan against
// the group included); the rest of the tool reads plain values.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datapath/engine/collective.h"
#include "datapath/wire/roce_packet.h"
#include "host/transport/soft/io/loss_injector.h"

namespace epic::tools::rank {

struct Options {
  bool help = false;

  // this rank's endpoint, and the switch's virtual endpoint for it
  std::string iface;
  wire::MacAddr mac{};
  uint32_t ip = 0;  // host order
  uint32_t qpn = 0;
  uint16_t udp_sport = 0xC000;
  uint32_t switch_ip = 0;
  uint32_t switch_qpn = 0;
  uint32_t arp_timeout_ms = 5000;

  // the group (the same on every rank and in the switch's configuration)
  uint16_t rank = 0;
  uint16_t ranks = 0;
  uint32_t initial_psn = 0;
  uint32_t window = 0;  // MW
  uint16_t pmtu = 1024;

  // what to run
  std::string plan_text;
  std::vector<engine::CollectiveDescriptor> plan;
  uint32_t reps = 1;
  uint64_t seed = 1;

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
