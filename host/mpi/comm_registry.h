// CommRegistry: the EPIC group behind each MPI communicator the library offloads.
//
// MPI_COMM_WORLD is set up right after MPI_Init; any other intracommunicator at its first
// collective that EPIC could run (every member calls it, so the set-up, itself collective on
// that communicator, has every member), and torn down at MPI_Comm_free or MPI_Finalize.
// Set-up: the communicator's rank 0 draws a random group id and PMPI_Bcasts it, every rank
// joins the group through inc-manager (libinc's Communicator, INC_* from RankEnv), and a
// PMPI_Allreduce agrees on the outcome: EPIC only if every rank joined with INC memory;
// otherwise every rank leaves and the communicator stays with MPI, with the first failing
// rank's reason (PMPI_Bcast from it). A group the manager answered with host fallback (no INC
// memory) is handed back to MPI, whose own algorithms serve a host collective better.
// Thread-safety: get/release/finish lock the registry; a CommState is used by the one thread
// that runs a collective on its communicator (MPI allows no more).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "host/inc/communicator.h"
#include "host/mpi/rank_config.h"
#include "host/mpi/report.h"

namespace epic::mpi {

struct CommState {
  std::string label;                       // "MPI_COMM_WORLD", "communicator 2 (MY_NAME)"
  std::unique_ptr<inc::Communicator> inc;  // set: EPIC runs its collectives
  std::string why_not;                     // inc unset: why MPI runs them
  std::string broken;  // an EPIC collective failed: every later one fails with this
  uint32_t slot = 0;
};

class CommRegistry {
 public:
  explicit CommRegistry(Report& report) : report_(report) {}

  // After PMPI_Init: reads the environment and sets up MPI_COMM_WORLD (collective).
  void init();
  bool disabled() const { return disabled_; }
  int world_rank() const { return world_rank_; }

  // The communicator's state, set up now if this is its first offloadable collective:
  // collective over `comm`.
  CommState& get(MPI_Comm comm);
  // The label of `comm` without setting it up.
  std::string label(MPI_Comm comm);
  // MPI_Comm_free: leaves the communicator's group (before the handle is freed).
  void release(MPI_Comm comm);
  // MPI_Finalize: leaves every group.
  void finish();

 private:
  std::unique_ptr<CommState> set_up(MPI_Comm comm, const std::string& label);
  uint32_t take_slot();
  void close(CommState& s);

  Report& report_;
  RankEnv env_;
  // The attribute every set-up communicator carries: its CommState (looked up per collective)
  // and a delete callback that leaves the group when MPI frees the communicator.
  int keyval_ = MPI_KEYVAL_INVALID;
  bool disabled_ = false;
  int world_rank_ = -1;
  uint64_t labels_ = 0;  // communicators met so far (names the unnamed ones)
  std::mutex mu_;
  std::map<MPI_Comm, std::unique_ptr<CommState>> comms_;
  std::set<uint32_t> slots_;  // in use
};

}  // namespace epic::mpi
