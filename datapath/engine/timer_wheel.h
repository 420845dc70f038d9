// A hashed timing wheel for the worker loop: Mode-III's retransmission timers
// (one per out-endpoint with results not yet acknowledged, docs/mode3.md) without
// a syscall or an allocation per packet. Time is the caller's (nanoseconds from
// any monotonic clock it reads once per burst); the wheel counts it in ticks of
// `tick_ns`, in `slots` buckets. A timer expires at the first tick boundary at or
// after its deadline — never early, at most one tick late (plus however late the
// loop calls expire()). A deadline more than one round away stays in its bucket
// across rounds.
// Nodes are the caller's (intrusive: a node lives in the state that owns the
// timer and must not move while armed); the wheel only links them.
// Hot path: arm/cancel O(1); expire() O(buckets passed + nodes in them), and at
// most `max` callbacks per call (the rest wait for the next). No allocation
// after construction. Owned by one worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace epic::engine {

struct TimerNode {
  uint64_t due = 0;  // the tick it expires at
  TimerNode* prev = nullptr;
  TimerNode* next = nullptr;
  uint8_t tag = 0;  // the owner's: which of its timers this node is (the wheel never reads it)
  bool armed() const { return next != nullptr; }
};

class TimerWheel {
 public:
  // `slots`: a power of two >= 1; `tick_ns` >= 1; `now_ns`: the clock now.
  TimerWheel(uint32_t slots, uint64_t tick_ns, uint64_t now_ns);
  TimerWheel(const TimerWheel&) = delete;
  TimerWheel& operator=(const TimerWheel&) = delete;

  // (Re)arms `n` to expire `delay_ns` after `now_ns`.
  void arm(TimerNode& n, uint64_t now_ns, uint64_t delay_ns);
  // Disarms `n` (nothing when it is not armed).
  void cancel(TimerNode& n);

  // Calls fn(TimerNode&) for each node due by `now_ns`, at most `max` of them, each unlinked
  // before its call; returns how many were called. fn may arm the node it is given again (it is
  // linked at the front of its bucket, behind this pass) but must not cancel or arm others.
  template <typename Fn>
  size_t expire(uint64_t now_ns, size_t max, Fn&& fn) {
    const uint64_t now = now_ns / tick_ns_;
    size_t fired = 0;
    // Every bucket once at most: a node due by `now` is found in any pass over its bucket.
    const uint64_t span = now >= current_ ? now - current_ + 1 : 0;
    const uint64_t buckets = span < heads_.size() ? span : heads_.size();
    for (uint64_t k = 0; k < buckets; ++k) {
      TimerNode& head = heads_[(current_ + k) & mask_];
      for (TimerNode* n = head.next; n != &head;) {
        TimerNode* after = n->next;
        if (n->due <= now) {
          if (fired == max) {
            current_ += k;  // this bucket again next time
            return fired;
          }
          unlink(*n);
          ++fired;
          fn(*n);
        }
        n = after;
      }
    }
    if (now + 1 > current_) current_ = now + 1;
    return fired;
  }

  size_t armed() const { return armed_; }
  // The earliest time an armed node is due (its tick's start), nullopt when none is armed.
  // O(slots + armed): for harnesses and tools, not the packet path.
  std::optional<uint64_t> next_due_ns() const;
  uint64_t tick_ns() const { return tick_ns_; }

 private:
  void unlink(TimerNode& n);

  std::vector<TimerNode> heads_;  // one sentinel per bucket (a circular list)
  uint64_t tick_ns_;
  uint64_t mask_;
  uint64_t current_;  // the first tick not yet passed
  size_t armed_ = 0;
};

}  // namespace epic::engine
