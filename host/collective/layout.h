// The buffer contract of a rank for each primitive: how many bytes its send
// (input) and receive (result) buffers hold, MPI-style, for a collective of
// `ranks` ranks whose descriptor counts `count` elements as the switch does
// (proto/vocab/collective_map.h):
//
//   primitive        input (every rank)      result
//   AllReduce        count                   count (the reduction)
//   Reduce(root)     count                   root: count (the reduction); others: nothing
//   Broadcast(root)  count (only root's used) count (root's input, the root included)
//   ReduceScatter    ranks x count           count (rank q: the reduction of chunk q)
//   AllGather        count                   ranks x count (chunk q from rank q, own included)
//   Barrier          nothing                 nothing
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proto/vocab/collective.h"

namespace epic::host {

// Bytes of one rank's input to collective `d` (the same for every rank).
size_t send_bytes(const vocab::CollectiveDescriptor& d, uint16_t ranks);
// Bytes of rank `rank`'s result of collective `d`.
size_t recv_bytes(const vocab::CollectiveDescriptor& d, uint16_t rank, uint16_t ranks);

}  // namespace epic::host
