// RankEnv: the INC_* parameters one MPI process joins EPIC groups with, and the parameters of
// one communicator's group derived from them (docs/mpi.md, "Environment").
//
// Every rank of a job usually has the same environment (mpirun -x), but its endpoint (soft
// transport: interface, MAC, IP, QPN) is its own: either Open MPI's MPMD form gives each rank
// its own -x INC_IFACE=..., or EPIC_MPI_CONFIG names a file per rank, `%r` standing for the
// rank in MPI_COMM_WORLD (/etc/epic/rank%r.env). The file holds libinc's KEY=VALUE lines;
// INC_* variables in the environment override it (libinc's own rule).
//
// Each communicator is its own EPIC group with its own QPs: communicator slot k (MPI_COMM_WORLD
// is slot 0) uses INC_QPN + 4k (and INC_HOST_QPN + 4k when given; libinc's host ring takes the
// next two QPNs by default). INC_RANK, INC_RANKS and INC_GROUP are the communicator's.
//
// INC_COPY_SEND_BYTES is 0 unless the user sets it: a libinc call that copied its input returns
// when its results are in, while its own upload may still be on the way (an Allgather's or a
// Bcast root's data, a Reduce's contribution), and libinc moves it only inside its calls. An
// MPI program may next block in MPI (PMPI_*) waiting for the very peers that wait for that
// upload; so every offloaded call returns only once this rank's uploads are acknowledged.
// Thread-safety: plain values and pure functions (read_rank_env reads environ).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace epic::mpi {

// QPNs one communicator may use: its QP, a spare, and libinc's two host-ring QPs.
inline constexpr uint32_t kQpnsPerComm = 4;

struct RankEnv {
  std::map<std::string, std::string> pairs;  // INC_* from the file, then the environment
  std::string source;                        // "environment" or "<file> + environment"
  std::string error;                         // "": usable
  // Asks a manager for groups (INC_MANAGER), so any communicator can be set up.
  bool managed() const { return pairs.count("INC_MANAGER") != 0; }
  // Has any EPIC peer parameters at all (a manager or static switch parameters).
  bool configured() const { return managed() || pairs.count("INC_SWITCH_IP") != 0; }
};

// `world_rank` fills EPIC_MPI_CONFIG's %r.
RankEnv read_rank_env(int world_rank);

struct GroupPairs {
  std::map<std::string, std::string> pairs;
  std::string error;
};

// The INC_* pairs of one communicator's group: the rank's own, with INC_RANK/INC_RANKS of
// the communicator, INC_GROUP = `group` (with a manager) and the QPNs of `slot`.
GroupPairs group_pairs(const RankEnv& env, int rank, int size, const std::string& group,
                       uint32_t slot);

}  // namespace epic::mpi
