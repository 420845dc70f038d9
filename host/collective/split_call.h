// One collective call split into collectives of at most `piece` elements each (libinc's calls,
// inc-rank's plan items; the piece size from host/collective/piece_size.h). Each piece is a whole
// collective of the same primitive over elements [first, first + n) of the call:
//   AllReduce, Reduce, Broadcast: the same range of the send and result buffers;
//   ReduceScatter: every rank's chunk is split alike, so a piece's input is the range of each
//     rank's chunk, packed one after another (send_staging);
//   AllGather: a piece's result is every rank's range, packed (recv_staging); finish() copies
//     them to where they belong in the caller's result once every piece is in.
// Unsplit (one piece), the pieces point at the caller's buffers and nothing is staged.
// The pieces point into the caller's buffers and into the SplitCall's own staging, which a move
// keeps (std::vector moves its storage). Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/vocab/collective.h"
#include "proto/vocab/dtype.h"

namespace epic::host {

struct CollectivePiece {
  vocab::CollectiveDescriptor desc;
  const uint8_t* send = nullptr;  // send_len bytes (none where this rank sends nothing)
  size_t send_len = 0;
  uint8_t* recv = nullptr;  // recv_len bytes (none where this rank receives nothing)
  size_t recv_len = 0;
  size_t first = 0;  // elements [first, first + n) of the call (of each rank's chunk)
  size_t n = 0;
};

struct SplitCall {
  std::vector<CollectivePiece> pieces;
  std::vector<uint8_t> send_staging;  // ReduceScatter split: each piece's input, packed
  std::vector<uint8_t> recv_staging;  // AllGather split: each piece's result, packed
  uint8_t* gather_to = nullptr;       // AllGather split: the caller's result
  size_t gather_count_bytes = 0;      // bytes of each rank's chunk in it
  uint16_t ranks = 0;
  // AllGather split: copies the packed results into the caller's result. Else nothing.
  void finish() const;
};

// `send` / `recv` are the call's buffers in the primitive's layout (layout.h); `piece` >= 1.
// A Barrier is one piece without buffers.
SplitCall split_call(const vocab::CollectiveDescriptor& call, uint16_t rank, uint16_t ranks,
                     const uint8_t* send, uint8_t* recv, size_t piece);

}  // namespace epic::host
