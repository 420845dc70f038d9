#include "host/mpi/decision.h"

#include <array>
#include <utility>

namespace epic::mpi {
namespace {

using vocab::DType;
using vocab::ReduceOp;

bool named(MPI_Datatype t) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  return combiner == MPI_COMBINER_NAMED;
}

}  // namespace

std::string type_name(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  if (PMPI_Type_get_name(t, name, &len) == MPI_SUCCESS && len > 0)
    return {name, static_cast<size_t>(len)};
  return named(t) ? "an unnamed predefined datatype" : "a derived datatype";
}

std::string op_name(MPI_Op op) {
  const std::array<std::pair<MPI_Op, const char*>, 15> ops{{{MPI_SUM, "MPI_SUM"},
                                                            {MPI_MIN, "MPI_MIN"},
                                                            {MPI_MAX, "MPI_MAX"},
                                                            {MPI_PROD, "MPI_PROD"},
                                                            {MPI_LAND, "MPI_LAND"},
                                                            {MPI_BAND, "MPI_BAND"},
                                                            {MPI_LOR, "MPI_LOR"},
                                                            {MPI_BOR, "MPI_BOR"},
                                                            {MPI_LXOR, "MPI_LXOR"},
                                                            {MPI_BXOR, "MPI_BXOR"},
                                                            {MPI_MINLOC, "MPI_MINLOC"},
                                                            {MPI_MAXLOC, "MPI_MAXLOC"},
                                                            {MPI_REPLACE, "MPI_REPLACE"},
                                                            {MPI_NO_OP, "MPI_NO_OP"},
                                                            {MPI_OP_NULL, "MPI_OP_NULL"}}};
  for (const auto& [o, name] : ops) {
    if (o == op) return name;
  }
  return "a user-defined op";
}

Reduction map_reduction(MPI_Datatype t, MPI_Op op) {
  Reduction r;
  if (op == MPI_SUM) {
    r.op = ReduceOp::kSum;
  } else if (op == MPI_MIN) {
    r.op = ReduceOp::kMin;
  } else if (op == MPI_MAX) {
    r.op = ReduceOp::kMax;
  } else {
    r.why_not = op_name(op) + " is not an EPIC reduction (MPI_SUM, MPI_MIN, MPI_MAX)";
    return r;
  }
  if (t == MPI_DATATYPE_NULL || !named(t)) {
    r.why_not = "datatype " + type_name(t) + ": EPIC reduces predefined types only";
    return r;
  }
  // Unsigned sums wrap like the signed ones (two's complement, docs/arithmetic.md), so they
  // have the same bits; their order (min, max) is another.
  const bool sum = r.op == ReduceOp::kSum;
  const bool unsigned32 = t == MPI_UNSIGNED || t == MPI_UINT32_T;
  const bool unsigned8 = t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T;
  if (t == MPI_INT || t == MPI_INT32_T || (sum && unsigned32)) {
    r.t = DType::kInt32;
  } else if (t == MPI_FLOAT) {
    r.t = DType::kFp32;
  } else if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T || (sum && unsigned8)) {
    r.t = DType::kInt8;
  } else if (unsigned32 || unsigned8) {
    r.why_not = "datatype " + type_name(t) + " with " + op_name(op) +
                ": EPIC orders signed integers only (unsigned sums are offloaded)";
  } else {
    r.why_not = "datatype " + type_name(t) +
                " has no EPIC element type (int32, fp32, int8: MPI_INT, MPI_FLOAT, MPI_INT8_T)";
  }
  static_assert(sizeof(int) == 4 && sizeof(float) == 4, "MPI_INT/MPI_FLOAT as int32/fp32");
  return r;
}

Layout layout_of(int count, MPI_Datatype t) {
  Layout l;
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (count < 0 || t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS) {
    l.error = "count " + std::to_string(count) + " of " + type_name(t) + " is not a valid buffer";
    return l;
  }
  l.bytes = static_cast<size_t>(count) * static_cast<size_t>(size);
  l.dense = lb == 0 && true_lb == 0 && extent == size && true_extent == size;
  return l;
}

}  // namespace epic::mpi
