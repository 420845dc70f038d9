// What inc-rank prints: one line per collective and a final summary, either
// for people or as JSON lines for scripts (benchmarks, the e2e tests).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "host/transport/soft/rc_counters.h"
#include "proto/vocab/collective.h"

namespace epic::tools::rank {

inline constexpr int kExitPass = 0;
inline constexpr int kExitWrongResult = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSetup = 3;  // setup, timeout, QP error

struct CollectiveOutcome {
  uint64_t k = 0;  // collective index over all repetitions
  vocab::CollectiveDescriptor desc;
  uint64_t bytes = 0;  // the larger of this rank's input and result buffers
  double latency_us = 0;
  std::optional<size_t> first_difference;  // none: the result matched
};

struct Summary {
  uint64_t collectives = 0;  // completed
  uint64_t failed = 0;       // completed with a wrong result
  soft::QpCounters qp;
  uint64_t kernel_rx_drops = 0;  // soft: frames the kernel dropped before our socket read them
  int exit_code = kExitPass;
  std::string error;  // why the run stopped early ("" if it did not)
};

std::string collective_line(uint16_t rank, const CollectiveOutcome& c, bool json);
std::string summary_line(uint16_t rank, const Summary& s, bool json);

}  // namespace epic::tools::rank
