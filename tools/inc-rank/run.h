// inc-rank's program: the SoftNic on the interface (our own MAC and IPv4, ARP,
// the Asio loop), one RcQp to the switch's virtual endpoint for this rank, and
// a host::CollectiveRunner driving it through the plan. Every wait runs the
// loop (the QP keeps acknowledging and retransmitting) and is bounded.
// Thread-safety: a single-threaded program.
#pragma once

#include "tools/inc-rank/options.h"

namespace epic::tools::rank {

// Runs the plan; prints one line per collective and the summary line; returns
// the exit status (report.h).
int run_rank(const Options& o);

}  // namespace epic::tools::rank
