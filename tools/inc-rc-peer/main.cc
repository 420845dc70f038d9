// inc-rc-peer: a user-space RoCEv2 RC endpoint (host/transport/soft) on a Linux
// interface, for interoperability checks against real RDMA stacks: it speaks
// ibv_rc_pingpong's out-of-band exchange, and its own EPICXFER1 SEND/WRITE
// matrix with deploy/lab/rxe_xfer (Soft-RoCE guests) or another inc-rc-peer.
// See `inc-rc-peer --help` and options.cc.
#include <csignal>
#include <cstdio>

#include "tools/inc-rc-peer/modes.h"
#include "tools/inc-rc-peer/options.h"

int main(int argc, char** argv) {
  namespace rp = epic::tools::rc_peer;
  std::signal(SIGPIPE, SIG_IGN);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const rp::ParsedOptions parsed = rp::parse_options(argc, argv);
  if (parsed.options.help) {
    std::fputs(rp::kUsage, stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "inc-rc-peer: %s\n(run 'inc-rc-peer --help' for usage)\n",
                 parsed.error.c_str());
    return 2;
  }
  const rp::Options& o = parsed.options;
  if (o.mode == rp::Mode::kPingpong) return rp::run_pingpong(o);
  return o.peer.empty() ? rp::run_xfer_agent(o) : rp::run_xfer_controller(o);
}
