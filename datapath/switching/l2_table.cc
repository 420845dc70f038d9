#include "datapath/switching/l2_table.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace epic::switching {

L2Table::L2Table(size_t capacity, uint64_t aging_ns)
    : nbuckets_(std::bit_ceil(std::max(capacity, kBucketSlots)) / kBucketSlots),
      aging_ns_(aging_ns) {
  buckets_ = std::make_unique<Bucket[]>(nbuckets_);
}

uint64_t L2Table::mac48(const vocab::MacAddr& mac) {
  uint64_t m = 0;  // any fixed 48-bit encoding will do: it is only hashed and compared
  std::memcpy(&m, mac.data(), mac.size());
  return m;
}

void L2Table::buckets_of(uint64_t mac, Bucket** first, Bucket** second) const {
  // splitmix64 finaliser: MACs of one vendor differ only in their low bytes.
  uint64_t z = mac;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const size_t mask = nbuckets_ - 1;
  const size_t a = z & mask;
  size_t b = (z >> 32) & mask;
  if (b == a) b = a ^ (1 & mask);  // two distinct buckets whenever there are two
  *first = &buckets_[a];
  *second = &buckets_[b];
}

void L2Table::learn(const vocab::MacAddr& mac, uint16_t port, uint64_t now_ns) {
  if (mac[0] & 0x01) return;  // group bit: multicast or broadcast is never a source
  const uint64_t m = mac48(mac);
  if (m == 0) return;
  const uint64_t mac_port = (m << 16) | port;

  Bucket* cand[2];
  buckets_of(m, &cand[0], &cand[1]);
  if (Entry* e = find(m, cand)) {
    if (expired(*e, now_ns)) {
      ++counters_.aged_out;
      ++counters_.learned;
    } else if (e->port() != port) {
      ++counters_.moved;
    }
    e->mac_port = mac_port;
    e->seen_ns = now_ns;
    return;
  }

  // New MAC: a reusable slot (empty or expired) in the candidate bucket with fewer live entries.
  const int ncand = cand[0] == cand[1] ? 1 : 2;
  Entry* reusable[2] = {nullptr, nullptr};
  int live[2] = {0, 0};
  for (int c = 0; c < ncand; ++c) {
    for (Entry& e : cand[c]->slot) {
      if (e.mac_port != 0 && !expired(e, now_ns)) {
        ++live[c];
      } else if (!reusable[c]) {
        reusable[c] = &e;
      }
    }
  }
  Entry* slot = reusable[0];
  if (!slot || (reusable[1] && live[1] < live[0])) slot = reusable[1];
  if (!slot) {
    ++counters_.table_full;
    return;
  }
  if (slot->mac_port != 0) ++counters_.aged_out;
  ++counters_.learned;
  slot->mac_port = mac_port;
  slot->seen_ns = now_ns;
}

std::optional<uint16_t> L2Table::lookup(const vocab::MacAddr& mac, uint64_t now_ns) const {
  const uint64_t m = mac48(mac);
  if (m == 0) return std::nullopt;
  Bucket* cand[2];
  buckets_of(m, &cand[0], &cand[1]);
  const Entry* e = find(m, cand);
  if (!e || expired(*e, now_ns)) return std::nullopt;
  return e->port();
}

L2Table::Entry* L2Table::find(uint64_t mac, Bucket* const cand[2]) {
  for (int c = 0; c < 2; ++c) {
    for (Entry& e : cand[c]->slot) {
      if (e.mac() == mac) return &e;  // an empty slot has mac() 0, never a learned MAC
    }
  }
  return nullptr;
}

void L2Table::flush_port(uint16_t port) {
  for (size_t i = 0; i < nbuckets_; ++i) {
    for (Entry& e : buckets_[i].slot) {
      if (e.mac_port == 0 || e.port() != port) continue;
      e = Entry{};
      ++counters_.flushed;
    }
  }
}

size_t L2Table::size(uint64_t now_ns) const {
  size_t n = 0;
  for (size_t i = 0; i < nbuckets_; ++i) {
    for (const Entry& e : buckets_[i].slot) {
      if (e.mac_port != 0 && !expired(e, now_ns)) ++n;
    }
  }
  return n;
}

}  // namespace epic::switching
