// The modes of inc-rc-peer, each a sequential program over a Session:
//   run_pingpong      ibv_rc_pingpong's exchange and message loop (client or server)
//   run_xfer_controller / run_xfer_agent   the EPICXFER1 SEND/WRITE matrix
// Each prints its progress and one final "INC_RC_PEER PASS|FAIL ..." line and
// returns the process exit status (0 pass, 1 failed check, 3 setup failure).
// Thread-safety: single-threaded programs.
#pragma once

#include <string>

#include "tools/inc-rc-peer/options.h"
#include "tools/inc-rc-peer/session.h"

namespace epic::tools::rc_peer {

inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitSetup = 3;

int run_pingpong(const Options& o);
int run_xfer_controller(const Options& o);
int run_xfer_agent(const Options& o);

// Prints the summary line and returns the exit status: kExitPass when `error`
// is empty and failures == 0, kExitSetup when `setup_error`, else kExitFail.
int finish(const Options& o, const Session* s, std::string_view role, uint64_t bytes,
           uint64_t failures, const std::string& error, bool setup_error,
           const std::string& extra = "");

}  // namespace epic::tools::rc_peer
