// inc-rank's program: the transport (soft: the SoftNic on the interface — our
// own MAC and IPv4, ARP, the Asio loop — and one RcQp; verbs: an RC QP on an
// RDMA device) connected to the switch's virtual endpoint for this rank, the
// optional QPN rendezvous (--qpn-file, --wait-file), and a
// host::CollectiveRunner driving it through the plan. Every wait drives the
// transport (the QP keeps acknowledging and retransmitting) and is bounded.
// Thread-safety: a single-threaded program.
#pragma once

#include "tools/inc-rank/options.h"

namespace epic::tools::rank {

// Runs the plan; prints one line per collective and the summary line; returns
// the exit status (report.h).
int run_rank(const Options& o);

}  // namespace epic::tools::rank
