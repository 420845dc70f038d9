// Backoff: the agent's reconnect delays — exponential from `initial` to `max`, each draw
// uniformly in [d·(1 - jitter), d] so that many switches losing one manager do not all
// reconnect in the same millisecond, never above `max` and never below initial·(1 - jitter).
// reset() after a successful registration starts again from `initial`.
// Threading: a plain value on the agent's thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace epic::agent {

class Backoff {
 public:
  using ms = std::chrono::milliseconds;
  Backoff(ms initial, ms max, double jitter, uint64_t seed)
      : initial_(std::max<ms>(initial, ms{1})),
        max_(std::max(max, initial_)),
        jitter_(std::clamp(jitter, 0.0, 1.0)),
        rng_(seed),
        next_(initial_) {}

  ms next() {
    const ms d = next_;
    next_ = std::min<ms>(max_, next_ * 2);
    std::uniform_real_distribution<double> u(1.0 - jitter_, 1.0);
    return std::max<ms>(ms{1}, ms{static_cast<int64_t>(static_cast<double>(d.count()) * u(rng_))});
  }
  void reset() { next_ = initial_; }

 private:
  ms initial_, max_;
  double jitter_;
  std::mt19937_64 rng_;
  ms next_;
};

}  // namespace epic::agent
