#include "datapath/engine/lookup_table.h"

#include <bit>

namespace epic::engine {

LookupTable::LookupTable(size_t max_edges) : max_edges_(max_edges < 1 ? 1 : max_edges) {
  const size_t n = std::bit_ceil(2 * max_edges_);
  entries_.assign(n, Entry{});
  mask_ = n - 1;
  shift_ = 64u - static_cast<unsigned>(std::countr_zero(n));
}

bool LookupTable::insert(uint32_t ipv4, uint32_t qpn, Route r) {
  const uint64_t k = key(ipv4, qpn);
  if (k == kEmpty || size_ >= max_edges_) return false;
  size_t i = home(k);
  for (; entries_[i].key != kEmpty; i = (i + 1) & mask_) {
    if (entries_[i].key == k) return false;
  }
  entries_[i] = {k, r};
  ++size_;
  return true;
}

bool LookupTable::erase(uint32_t ipv4, uint32_t qpn) {
  const uint64_t k = key(ipv4, qpn);
  if (k == kEmpty) return false;
  size_t i = home(k);
  while (entries_[i].key != k) {
    if (entries_[i].key == kEmpty) return false;
    i = (i + 1) & mask_;
  }
  // Backward-shift deletion: move later entries of the probe run into the hole when their
  // home position does not lie cyclically in (hole, their position].
  size_t hole = i;
  for (size_t j = (i + 1) & mask_; entries_[j].key != kEmpty; j = (j + 1) & mask_) {
    const size_t h = home(entries_[j].key);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (!stays) {
      entries_[hole] = entries_[j];
      hole = j;
    }
  }
  entries_[hole] = Entry{};
  --size_;
  return true;
}

}  // namespace epic::engine
