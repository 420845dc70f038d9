// LookupTable (IncEngine module, routing state): what identifies an engine
// edge — the destination (IPv4, QPN) of an arriving packet, one of this
// switch's virtual endpoints — to the group it belongs to and the edge it
// came on (a child index, or the parent). One flat open-addressing table of
// fixed capacity (linear probing, Fibonacci hashing, backward-shift erase):
// find() is one hashed probe sequence in one array, prefetch() lets a burst
// warm the lines before it looks up, and insert()/erase() never allocate, so
// a worker can apply a new snapshot without touching the heap.
// Threading: changed only at a worker's quiescent point (or by the control
// side before publishing); read by the owning worker's packet path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/vocab/psn.h"

namespace epic::engine {

struct GroupState;

struct Route {
  GroupState* group = nullptr;
  int16_t child = -1;  // index into the group's children; -1: the packet came from the parent
};

class LookupTable {
 public:
  // Room for `max_edges` edges (the table holds twice as many entries, a power of two).
  explicit LookupTable(size_t max_edges = kDefaultMaxEdges);

  // False (nothing changed) when (ipv4, qpn) is already an edge, is (0, 0), or the table is
  // full (size() == max_edges()).
  bool insert(uint32_t ipv4, uint32_t qpn, Route r);
  // False when (ipv4, qpn) is not an edge.
  bool erase(uint32_t ipv4, uint32_t qpn);
  const Route* find(uint32_t ipv4, uint32_t qpn) const {
    const uint64_t k = key(ipv4, qpn);
    for (size_t i = home(k);; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.key == k) return &e.route;
      if (e.key == kEmpty) return nullptr;
    }
  }
  // Brings the first entry find(ipv4, qpn) reads into the cache.
  void prefetch(uint32_t ipv4, uint32_t qpn) const {
    __builtin_prefetch(&entries_[home(key(ipv4, qpn))]);
  }

  size_t size() const { return size_; }
  size_t max_edges() const { return max_edges_; }
  size_t bytes() const { return entries_.size() * sizeof(Entry); }

  static constexpr size_t kDefaultMaxEdges = 4096;

 private:
  struct Entry {
    uint64_t key = kEmpty;
    Route route;
  };
  static constexpr uint64_t kEmpty = 0;  // (0.0.0.0, QPN 0) is never an INC endpoint
  static uint64_t key(uint32_t ipv4, uint32_t qpn) {
    return (uint64_t{ipv4} << 24) | (qpn & vocab::kQpnMask);
  }
  size_t home(uint64_t k) const {
    return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  std::vector<Entry> entries_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
  size_t max_edges_ = 0;
};

}  // namespace epic::engine
