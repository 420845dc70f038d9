// A plan: the sequence of collectives a group runs, written as text so that a
// command line (tools/inc-rank --plan) or a test names it the same way.
// Items are comma-separated; the fields of an item are colon-separated, the
// primitive first, then in any order: a dtype (int32 fp32 fp16 bf16), an op
// (sum min max), root=R, and the count (elements, as
// CollectiveDescriptor::count: per rank, or per rank's chunk for
// reduce_scatter/allgather; "count=N" or a bare number):
//
//   allreduce:DTYPE:OP:COUNT        reduce:DTYPE:OP:root=R:COUNT
//   broadcast:DTYPE:root=R:COUNT    reduce_scatter:DTYPE:OP:COUNT
//   allgather:DTYPE:COUNT           barrier
//
// A field a primitive does not use is an error (a typo must not be ignored);
// unused descriptor fields are 0 / int32 / sum, so every rank encodes the
// same control message. format_collective() writes the canonical form back.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/vocab/collective.h"

namespace epic::host {

struct ParsedPlan {
  std::vector<vocab::CollectiveDescriptor> plan;
  std::string error;  // empty: `plan` is valid syntax (see check_plan for the group)
};

ParsedPlan parse_plan(std::string_view text);

// "allreduce:int32:sum:1048576", "barrier", ... (parse_plan reads it back).
std::string format_collective(const vocab::CollectiveDescriptor& d);

// Largest buffer (input or result) of one collective that check_plan accepts.
inline constexpr uint64_t kMaxPlanBufferBytes = uint64_t{1} << 30;

// What makes `plan` impossible for a group of `ranks` ranks ("" if nothing):
// a root outside the group, a buffer above kMaxPlanBufferBytes.
std::string check_plan(const std::vector<vocab::CollectiveDescriptor>& plan, uint16_t ranks);

}  // namespace epic::host
