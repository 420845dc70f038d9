#include "host/collective/piece_size.h"

#include <algorithm>
#include <cstdint>

#include "proto/vocab/limits.h"

namespace epic::host {

size_t piece_elements(vocab::CollectiveType type, size_t esz, size_t ranks,
                      size_t max_collective_bytes, size_t max_message_bytes) {
  const bool per_rank_chunks =
      type == vocab::CollectiveType::kReduceScatter || type == vocab::CollectiveType::kAllGather;
  const size_t max_bytes = std::min<uint64_t>(max_collective_bytes, vocab::kMaxCollectiveBytes);
  size_t piece = max_bytes / esz / (per_rank_chunks ? std::max<size_t>(ranks, 1) : 1);
  // One message per chunk (ReduceScatter, AllGather) or per buffer (the others).
  piece = std::min(piece, max_message_bytes / esz);
  return std::max<size_t>(1, piece);
}

}  // namespace epic::host
