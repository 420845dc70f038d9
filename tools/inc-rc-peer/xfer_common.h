// What both roles of inc-rc-peer's xfer mode share: the registered memory
// (a WRITE window the peer targets, a receive area, a send source), the
// checks of received bytes and completions, and the work request for a step.
// The guest-side agent (deploy/lab/rxe_xfer.c) applies the same checks.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/transport/soft/rc_types.h"
#include "tools/inc-rc-peer/xfer_wire.h"

namespace epic::tools::rc_peer {

inline constexpr uint32_t kMaxWriteOffset = 4096;

class XferMemory {
 public:
  // A window for messages up to max_size bytes at offsets below kMaxWriteOffset.
  explicit XferMemory(uint32_t max_size);
  uint64_t window_len() const { return window_len_; }
  uint8_t* window() { return buf_.data(); }
  uint8_t* recv_area() { return buf_.data() + window_len_; }
  uint8_t* send_area() { return buf_.data() + 2 * window_len_; }
  uint64_t window_va() const { return reinterpret_cast<uintptr_t>(buf_.data()); }
  // The RcQp memory region of the window.
  soft::MemoryRegion region(uint32_t rkey);

 private:
  uint64_t window_len_;
  std::vector<uint8_t> buf_;
};

// Whether a step fits a window of window_len bytes ("" if it does).
std::string step_fits(const XferStep& s, uint64_t window_len);
// Checks size pattern bytes of `seed` at p, then the guard bytes after them.
std::string check_bytes(const uint8_t* p, uint32_t size, uint32_t seed);
// Checks the receive completion of a SEND[_IMM] / WRITE_IMM step.
std::string check_recv_completion(const soft::Completion& c, const XferStep& s);
// The work request that performs step s from `src` (pattern already there).
soft::SendWr step_send_wr(const XferStep& s, const uint8_t* src, uint64_t remote_va, uint32_t rkey);
// Guard-fills what the receiving side of s will write, posts nothing.
void prepare_receiver_bytes(const XferStep& s, XferMemory& mem);

}  // namespace epic::tools::rc_peer
