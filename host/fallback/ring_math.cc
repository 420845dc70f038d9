#include "host/fallback/ring_math.h"

#include <algorithm>

namespace epic::host::fallback {

namespace {
uint16_t ring_minus(uint16_t r, uint16_t ranks, uint64_t k) {
  return static_cast<uint16_t>((r + ranks - k % ranks) % ranks);
}
}  // namespace

ChunkSpan chunk_of(size_t count, uint16_t ranks, uint16_t q) {
  const size_t base = count / ranks;
  const size_t rem = count % ranks;
  return {q * base + std::min<size_t>(q, rem), base + (q < rem ? 1 : 0)};
}

uint16_t rs_send_chunk(uint16_t r, uint16_t ranks, uint32_t s) {
  return ring_minus(r, ranks, uint64_t{s} + 1);
}
uint16_t rs_recv_chunk(uint16_t r, uint16_t ranks, uint32_t s) {
  return ring_minus(r, ranks, uint64_t{s} + 2);
}
uint16_t ag_send_chunk(uint16_t r, uint16_t ranks, uint32_t s) { return ring_minus(r, ranks, s); }
uint16_t ag_recv_chunk(uint16_t r, uint16_t ranks, uint32_t s) {
  return ring_minus(r, ranks, uint64_t{s} + 1);
}

std::vector<uint16_t> ring_order(uint16_t ranks, uint16_t q) {
  std::vector<uint16_t> order;
  order.reserve(ranks);
  for (uint16_t i = 1; i <= ranks; ++i) order.push_back(static_cast<uint16_t>((q + i) % ranks));
  return order;
}

std::vector<ChunkSpan> pieces_of(size_t count, size_t max_n) {
  std::vector<ChunkSpan> out;
  for (size_t first = 0; first < count; first += max_n) {
    out.push_back({first, std::min(max_n, count - first)});
  }
  return out;
}

}  // namespace epic::host::fallback
