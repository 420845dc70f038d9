#include "proto/vocab/straggler.h"

namespace epic::vocab {

std::string child_name(bool is_rank, uint32_t child, uint32_t first_rank, uint32_t rank_count) {
  if (is_rank) return "rank " + std::to_string(first_rank);
  return "child " + std::to_string(child) + " (ranks " + std::to_string(first_rank) + "-" +
         std::to_string(first_rank + rank_count - 1) + ")";
}

SlowestChild slowest_child(std::span<const ChildTiming> children) {
  SlowestChild s;
  uint64_t most = 0;
  for (size_t c = 0; c < children.size(); ++c) {
    s.slots += children[c].last;
    if (children[c].last > most) {
      most = children[c].last;
      s.child = static_cast<int>(c);
    }
  }
  if (s.slots > 0) s.share = static_cast<double>(most) / static_cast<double>(s.slots);
  return s;
}

}  // namespace epic::vocab
