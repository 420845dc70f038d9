// The clock the soft transport's I/O gives RcQp: nanoseconds of
// std::chrono::steady_clock since its epoch, so a deadline returned by
// RcQp::next_deadline() converts back to a steady_clock time point for an Asio
// timer without drift. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace epic::soft::io {

using MonoClock = std::chrono::steady_clock;

inline uint64_t mono_now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(MonoClock::now().time_since_epoch())
          .count());
}

inline MonoClock::time_point mono_time_point(uint64_t ns) {
  return MonoClock::time_point(
      std::chrono::duration_cast<MonoClock::duration>(std::chrono::nanoseconds(ns)));
}

}  // namespace epic::soft::io
