// Report: what the offload library did with every collective, so that no one has to guess
// whether EPIC ran it (docs/mpi.md, "Checking").
//
// Per call (the six interposed collectives) it counts the calls EPIC ran (offloaded), those
// handed to MPI (fallback) with why, and those that failed (strict mode, or an EPIC error);
// and per communicator what it became (an EPIC group, or why not). EPIC_MPI_LOG=1 writes one
// line per decision to stderr; at MPI_Finalize every rank writes one summary line and one line
// per fallback reason to stderr, and EPIC_MPI_REPORT=path (%r: the world rank) a JSON file.
// Thread-safety: every method locks (collectives may run on several threads).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace epic::mpi {

enum class Call : uint8_t {
  kAllreduce,
  kReduce,
  kBcast,
  kBarrier,
  kReduceScatterBlock,
  kAllgather
};
inline constexpr size_t kNumCalls = 6;
const char* call_name(Call c);  // "MPI_Allreduce", ...

class Report {
 public:
  Report();
  void set_rank(int world_rank) { rank_ = world_rank; }
  bool logging() const { return log_; }

  // `comm`: the communicator's label; `what`: the call's arguments in words.
  void offloaded(Call c, const std::string& comm, const std::string& what);
  void fell_back(Call c, const std::string& comm, const std::string& what, const std::string& why);
  void failed(Call c, const std::string& comm, const std::string& what, const std::string& why);
  // A communicator's outcome, once: "EPIC group mpi-… (inc, soft, fp32_arrival)" or
  // "MPI (why)".
  void communicator(const std::string& comm, const std::string& outcome);

  // The stderr lines of MPI_Finalize and, with EPIC_MPI_REPORT, the JSON file.
  void finish();

  // A line to stderr prefixed "epic-mpi: rank N: ".
  void say(const std::string& line) const;

 private:
  struct Counts {
    uint64_t offloaded = 0, fallback = 0, failed = 0;
  };
  std::string json() const;

  mutable std::mutex mu_;
  int rank_ = -1;
  bool log_ = false;
  std::array<Counts, kNumCalls> counts_{};
  // (call, reason) -> calls; reasons of fallbacks and failures, failures marked.
  std::map<std::pair<Call, std::string>, uint64_t> reasons_;
  std::vector<std::pair<std::string, std::string>> comms_;  // (label, outcome)
};

}  // namespace epic::mpi
