// What of an MPI collective's arguments EPIC can run (docs/mpi.md, "What is offloaded").
//
// Every answer depends only on arguments MPI requires to agree on every rank of the
// communicator (datatype and op of a reduction, the byte count of a broadcast or gather), so
// all ranks decide alike: a rank that took EPIC while another took MPI would wait forever.
// Reductions need an element type and operator the switch aggregates; data movement
// (Bcast, Allgather) only needs bytes, so any datatype goes (packed when it is not dense).
// Thread-safety: pure functions over MPI handles (PMPI_Type_* queries).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "proto/vocab/dtype.h"

namespace epic::mpi {

// "MPI_FLOAT", "a derived datatype", ...
std::string type_name(MPI_Datatype t);
// "MPI_SUM", "MPI_PROD", "a user-defined op", ...
std::string op_name(MPI_Op op);

struct Reduction {
  std::string why_not;  // "": EPIC reduces it as `t` / `op`
  vocab::DType t = vocab::DType::kInt32;
  vocab::ReduceOp op = vocab::ReduceOp::kSum;
  bool ok() const { return why_not.empty(); }
};

// MPI_INT/MPI_INT32_T -> int32, MPI_FLOAT -> fp32, MPI_SIGNED_CHAR/MPI_INT8_T -> int8 (sum, min,
// max); unsigned 32- and 8-bit types for sum only (wrapping sums have the same bits).
Reduction map_reduction(MPI_Datatype t, MPI_Op op);

// `count` elements of `t` as bytes: how many, and whether they lie contiguously from the
// buffer's start (otherwise they are packed with PMPI_Pack).
struct Layout {
  size_t bytes = 0;
  bool dense = false;
  std::string error;  // a datatype MPI refuses to describe
};
Layout layout_of(int count, MPI_Datatype t);

}  // namespace epic::mpi
