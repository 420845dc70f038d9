#include "host/transport/verbs/mr_cache.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

namespace epic::verbs {

MrCache::MrCache(size_t page_size, size_t max_idle, RegisterFn reg, DeregisterFn dereg)
    : page_size_(page_size),
      max_idle_(max_idle),
      register_(std::move(reg)),
      deregister_(std::move(dereg)) {
  if (page_size == 0 || !std::has_single_bit(page_size)) {
    throw std::invalid_argument("MrCache: page_size must be a power of two");
  }
}

MrCache::~MrCache() { clear(); }

std::optional<MrCache::Ref> MrCache::acquire(const void* data, size_t length, bool need_write) {
  if (length == 0) {
    error_ = "MrCache::acquire: empty range";
    return std::nullopt;
  }
  const auto addr = reinterpret_cast<uintptr_t>(data);
  if (addr > UINTPTR_MAX - length) {
    error_ = "MrCache::acquire: range wraps the address space";
    return std::nullopt;
  }
  const uintptr_t end = addr + length;
  Entry* best = nullptr;
  for (Entry& e : entries_) {
    if (e.begin <= addr && end <= e.end && (e.writable || !need_write) &&
        (best == nullptr || e.last_use > best->last_use)) {
      best = &e;
    }
  }
  if (best != nullptr) {
    ++best->refs;
    best->last_use = ++tick_;
    ++hits_;
    return Ref{best->id, best->reg.lkey};
  }
  const uintptr_t mask = page_size_ - 1;
  const uintptr_t begin = addr & ~mask;
  const uintptr_t stop = end > UINTPTR_MAX - mask ? end : (end + mask) & ~mask;
  std::string why;
  bool writable = true;
  std::optional<Registration> r = register_(begin, stop - begin, true, why);
  if (!r && !need_write) {
    // A send from read-only memory: no local write access needed.
    std::string why_ro;
    r = register_(begin, stop - begin, false, why_ro);
    writable = false;
    if (!r) why += "; read-only: " + why_ro;
  }
  if (!r) {
    error_ = why;
    return std::nullopt;
  }
  ++registrations_;
  Entry e;
  e.id = next_id_++;
  e.begin = begin;
  e.end = stop;
  e.writable = writable;
  e.reg = *r;
  e.refs = 1;
  e.last_use = ++tick_;
  entries_.push_back(e);
  return Ref{e.id, e.reg.lkey};
}

void MrCache::release(uint64_t id) {
  auto it =
      std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.id == id; });
  if (it == entries_.end() || it->refs == 0) {
    throw std::logic_error("MrCache::release: id " + std::to_string(id) + " is not in use");
  }
  if (--it->refs == 0) trim();
}

size_t MrCache::idle() const {
  return static_cast<size_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.refs == 0; }));
}

void MrCache::trim() {
  size_t n = idle();
  while (n > max_idle_) {
    auto lru = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->refs == 0 && (lru == entries_.end() || it->last_use < lru->last_use)) lru = it;
    }
    deregister_(lru->reg.handle);
    ++evictions_;
    entries_.erase(lru);
    --n;
  }
}

void MrCache::clear() {
  for (Entry& e : entries_) deregister_(e.reg.handle);
  entries_.clear();
}

}  // namespace epic::verbs
