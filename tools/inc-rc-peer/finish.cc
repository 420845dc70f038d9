#include <cinttypes>
#include <cstdio>

#include "tools/inc-rc-peer/modes.h"

namespace epic::tools::rc_peer {

int finish(const Options& o, const Session* s, std::string_view role, uint64_t bytes,
           uint64_t failures, const std::string& error, bool setup_error,
           const std::string& extra) {
  const bool pass = error.empty() && failures == 0;
  if (!error.empty()) std::fprintf(stderr, "inc-rc-peer: %s\n", error.c_str());
  std::printf(
      "INC_RC_PEER %s label=%s mode=%s role=%.*s bytes=%" PRIu64 " failures=%" PRIu64 "%s%s %s\n",
      pass ? "PASS" : "FAIL", o.label.c_str(), o.mode == Mode::kPingpong ? "pingpong" : "xfer",
      static_cast<int>(role.size()), role.data(), bytes, failures, extra.empty() ? "" : " ",
      extra.c_str(), s != nullptr ? s->counters_text().c_str() : "");
  std::fflush(stdout);
  if (pass) return kExitPass;
  return setup_error ? kExitSetup : kExitFail;
}

}  // namespace epic::tools::rc_peer
