// inc-bench's measurement: for each (primitive, dtype, size) case, warm-up
// calls, then timed calls of the libinc Communicator, every result checked
// bit for bit against the expected result computed locally from every rank's
// deterministic exact inputs (host/collective/inputs.h, expected.h).
// Thread-safety: none; one thread drives one communicator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/inc/communicator.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/collective.h"

namespace epic::tools::bench {

struct Case {
  vocab::CollectiveDescriptor desc;  // count = elements per rank, as the Communicator's count
  size_t bytes = 0;                  // the size asked for: bytes of one rank's buffer
};

struct CaseResult {
  Case c;
  uint32_t iters = 0;
  std::vector<double> latency_us;  // one per timed call
  bool verified = false;           // every timed and warm-up result was checked
  uint32_t wrong = 0;              // results that differed
  std::string error;               // a call failed (then the sweep stops)
};

struct SweepOptions {
  uint32_t iters = 20;
  uint32_t warmup = 3;
  bool verify = true;
  uint64_t seed = 1;
  vocab::GroupArith arith{};  // the group's arithmetic: an exact group's sums are checked exactly
};

CaseResult run_case(inc::Communicator& comm, const Case& c, uint64_t case_index,
                    const SweepOptions& o);

// Percentile p (0..100) of `v` by nearest rank; 0 for an empty vector.
double percentile(std::vector<double> v, double p);

}  // namespace epic::tools::bench
