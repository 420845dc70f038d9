// The index arithmetic of EPIC's host-based ring collectives
// (host_collectives.h): how `count` elements split into one chunk per rank,
// which chunk a rank sends and receives at each step, and the order in which
// a ring reduce-scatter combines the ranks' contributions to a chunk.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace epic::host::fallback {

struct ChunkSpan {
  size_t offset = 0;  // elements from the start of the buffer
  size_t n = 0;       // elements
  friend bool operator==(const ChunkSpan&, const ChunkSpan&) = default;
};

// Chunk q of `count` elements over `ranks` chunks: the first count % ranks
// chunks hold one element more; with count < ranks the last chunks are empty.
ChunkSpan chunk_of(size_t count, uint16_t ranks, uint16_t q);

// Reduce-scatter step s (0 .. ranks-2) of rank r: the chunk whose partial it
// sends to its right neighbour and the one it receives from its left; after
// the last step rank r holds the reduction of chunk r.
uint16_t rs_send_chunk(uint16_t r, uint16_t ranks, uint32_t s);
uint16_t rs_recv_chunk(uint16_t r, uint16_t ranks, uint32_t s);
// Allgather step s (0 .. ranks-2): rank r forwards chunk (r - s) and receives (r - s - 1).
uint16_t ag_send_chunk(uint16_t r, uint16_t ranks, uint32_t s);
uint16_t ag_recv_chunk(uint16_t r, uint16_t ranks, uint32_t s);

// The ranks whose inputs make up chunk q's reduction, in the order they are
// combined: q+1 is loaded, then q+2, ..., q (mod ranks).
std::vector<uint16_t> ring_order(uint16_t ranks, uint16_t q);

// Pieces: [first, first + n) of `count`, each at most max_n (>= 1) elements.
std::vector<ChunkSpan> pieces_of(size_t count, size_t max_n);

}  // namespace epic::host::fallback
