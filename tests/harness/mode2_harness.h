// The deterministic harness: an in-process network of soft RC ranks
// (host/transport/soft RcQp, the same endpoint that interoperates with Linux
// rdma_rxe) and Mode-II or Mode-III switches (datapath/engine), joined by simulated links
// with seeded loss, duplication, reordering and delay (ACKs included), on a
// virtual clock. Every rank runs a plan of collectives with the rank library's
// own logic (host/collective CollectiveRunner: post receives, send the control
// message, send its data, wait for the results), and the harness checks
// results against host/collective/expected.h bit for bit. A virtual-time
// bound turns a hang into a failure with a dump of the stuck PSNs. In Mode-III
// the network then drains (every ACK delivered, every timer stopped) and every
// Pipe must have sent and recycled every entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datapath/engine/counters.h"
#include "host/transport/soft/rc_counters.h"
#include "proto/context/group_context.h"
#include "proto/vocab/collective.h"
#include "proto/vocab/counters.h"
#include "proto/vocab/straggler.h"

namespace epic::harness {

struct Faults {
  double loss = 0;  // per frame, on every link, both directions
  double duplicate = 0;
  double reorder = 0;  // probability a frame takes an extra random delay
  // A burst outage: every frame sent on any link in [outage_at_ns, outage_at_ns + outage_ns)
  // of virtual time is lost.
  uint64_t outage_at_ns = 0;
  uint64_t outage_ns = 0;
  friend bool operator==(const Faults&, const Faults&) = default;
};

struct HarnessConfig {
  // Tree shape, root first: {8} = one switch with 8 ranks; {2, 3} = a root with 2 leaf
  // switches of 3 ranks each; {2, 2, 2} = three levels.
  std::vector<int> shape{4};
  uint32_t window = 16;  // MW, also the ranks' outstanding-packet window
  // Mode-III only: the ranks' outstanding-packet window when it is not MW (0: MW). A hop
  // needs only its own bandwidth-delay product in flight; MW then sizes the Pipes.
  uint32_t rank_window = 0;
  uint16_t pmtu = 256;
  uint32_t initial_psn = 0xFFFFF0;  // common initial PSN (near the wrap on purpose)
  Faults faults;
  uint64_t seed = 1;
  uint64_t time_limit_ns = 20'000'000'000;  // virtual time
  // A late rank: it starts each collective late_ns after it could (it computes meanwhile), so
  // the others wait for it at the switch.
  int late_rank = -1;
  uint64_t late_ns = 0;
  // The group's mode at every switch; Mode-III's hop timeout (local ACK timeout per hop).
  vocab::GroupMode mode = vocab::GroupMode::kMode2;
  uint32_t hop_timeout_us = 100;
  // Links: propagation delay, and a line rate (0: frames take no time to serialise; else each
  // direction of a link sends one frame after the other at this rate, lost frames included).
  uint64_t link_delay_ns = 1000;
  double link_gbps = 0;
  // The ranks' RC retransmission timeout (their local ACK timeout).
  uint64_t rank_timeout_ns = 2'000'000;
  // The group's RoCE partition at every switch (GroupContext::pkey; nullopt: not checked), and
  // the P_Key every rank's QP sends.
  std::optional<uint16_t> group_pkey{};
  uint16_t rank_pkey = vocab::kDefaultPkey;
  // The group's arithmetic at every switch (GroupContext::arith: accumulator profile, dtype).
  vocab::GroupArith arith{};
  // Compare every result with its reference; off for runs whose results depend on arrival
  // order by design (FP32_ARRIVAL float sums under reordering), which read RunResult::results.
  bool check_results = true;
};

struct RunResult {
  bool ok = false;
  std::string failure;              // first violated property, or the hang dump
  uint64_t virtual_ns = 0;          // when the run ended (Mode-III: after the network drained)
  uint64_t done_ns = 0;             // when every rank had its last result (0: never)
  engine::EngineCounters switches;  // summed over all switches
  std::vector<engine::EngineCounters> per_switch;
  // The group's own telemetry at each switch (root first, as `shape`): its counters and the
  // straggler figures of its children (datapath/engine/straggler.h).
  std::vector<vocab::GroupStats> group_stats;
  std::vector<std::vector<vocab::ChildTiming>> child_timing;
  soft::QpCounters ranks;  // summed over all ranks
  size_t ranks_count = 0;
  // What every rank received: results[k][r] is rank r's receive buffer of collective k.
  std::vector<std::vector<std::vector<uint8_t>>> results;
};

// Runs `plan` (the same sequence of collectives on every rank), each rank driven by the
// rank library's host::CollectiveRunner. Rank r's input to collective k is inputs[k][r]
// (host::send_bytes(plan[k], ranks) bytes, little-endian elements, e.g. host::exact_inputs);
// every rank's result is checked against host::expected_result.
RunResult run(const HarnessConfig& cfg, const std::vector<vocab::CollectiveDescriptor>& plan,
              const std::vector<std::vector<std::vector<uint8_t>>>& inputs);
// The same, checking every rank's result against expected[k][r] instead (e.g. an exact
// reference computed outside our code, for an exact sum).
RunResult run(const HarnessConfig& cfg, const std::vector<vocab::CollectiveDescriptor>& plan,
              const std::vector<std::vector<std::vector<uint8_t>>>& inputs,
              const std::vector<std::vector<std::vector<uint8_t>>>& expected);

int rank_count(const std::vector<int>& shape);

}  // namespace epic::harness
