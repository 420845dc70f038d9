// MrCache: memory registrations for work requests that point straight into
// user buffers (the CollectiveRunner's send and receive buffers). acquire()
// finds a registration covering [data, data + length) or registers the
// page-aligned range around it, and takes a reference for one posted work
// request; release() drops it when that request completes. A registration is
// never deregistered while a posted request uses it.
//
// Idle registrations (no posted request) are kept for reuse, at most
// `max_idle` of them, the least recently used deregistered first. Reusing an
// idle registration is only correct while its memory has not been freed and
// mapped again in between: a registration pins the physical pages it was made
// on, so a buffer freed and reallocated at the same address (glibc trims and
// regrows its heap, munmaps large blocks) would be read from — and received
// into — the old pages. A NIC with on-demand paging (ODP) is immune; without
// it keep max_idle = 0 (the default of VerbsConfig) unless the application's
// buffers live as long as the transport. With max_idle = 0 a registration is
// still shared by every request posted into it while any is in flight (one
// per collective buffer, not one per message).
//
// The registering and deregistering functions are injected (ibv_reg_mr /
// ibv_dereg_mr in VerbsTransport, fakes in the unit tests).
// Thread-safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace epic::verbs {

class MrCache {
 public:
  struct Registration {
    void* handle = nullptr;  // what deregister() gets back (an ibv_mr*)
    uint32_t lkey = 0;
  };
  // Registers [begin, begin + length), page-aligned; writable = local write
  // access (receives). On failure returns nothing and says why in `error`.
  using RegisterFn = std::function<std::optional<Registration>(uintptr_t begin, size_t length,
                                                               bool writable, std::string& error)>;
  using DeregisterFn = std::function<void(void* handle)>;

  struct Ref {
    uint64_t id = 0;  // for release()
    uint32_t lkey = 0;
  };

  // page_size: a power of two (sysconf(_SC_PAGESIZE)).
  MrCache(size_t page_size, size_t max_idle, RegisterFn reg, DeregisterFn dereg);
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // A registration covering [data, data + length) (length >= 1) with write
  // access if need_write, referenced once more. A send that cannot be
  // registered writable (read-only memory) is registered read-only. Nothing
  // (and error() says why) when registration failed.
  std::optional<Ref> acquire(const void* data, size_t length, bool need_write);
  // The request that acquired `id` completed.
  void release(uint64_t id);
  // Deregisters everything, in use or not (the QP is gone).
  void clear();

  size_t size() const { return entries_.size(); }
  size_t idle() const;
  size_t max_idle() const { return max_idle_; }
  uint64_t registrations() const { return registrations_; }
  uint64_t hits() const { return hits_; }
  uint64_t evictions() const { return evictions_; }
  const std::string& error() const { return error_; }

 private:
  struct Entry {
    uint64_t id = 0;
    uintptr_t begin = 0;
    uintptr_t end = 0;  // exclusive
    bool writable = false;
    Registration reg;
    uint32_t refs = 0;
    uint64_t last_use = 0;
  };
  void trim();

  size_t page_size_;
  size_t max_idle_;
  RegisterFn register_;
  DeregisterFn deregister_;
  std::vector<Entry> entries_;
  uint64_t next_id_ = 1;
  uint64_t tick_ = 0;
  uint64_t registrations_ = 0;
  uint64_t hits_ = 0;
  uint64_t evictions_ = 0;
  std::string error_;
};

}  // namespace epic::verbs
