// inc-rank: one rank of an EPIC Mode-II group — an RC queue pair to the switch
// (incd), EPIC's user-space one on a Linux interface or an RDMA device's
// (verbs), driven through a plan of collectives, each result checked bit for
// bit. See `inc-rank --help`.
#include <cstdio>

#include "tools/inc-rank/options.h"
#include "tools/inc-rank/report.h"
#include "tools/inc-rank/run.h"

int main(int argc, char** argv) {
  namespace rk = epic::tools::rank;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const rk::ParsedOptions parsed = rk::parse_options(argc, argv);
  if (parsed.options.help) {
    std::fputs(rk::kUsage, stdout);
    return rk::kExitPass;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "inc-rank: %s\n(run 'inc-rank --help' for usage)\n", parsed.error.c_str());
    return rk::kExitUsage;
  }
  return rk::run_rank(parsed.options);
}
