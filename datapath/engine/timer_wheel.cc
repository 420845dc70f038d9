#include "datapath/engine/timer_wheel.h"

namespace epic::engine {

TimerWheel::TimerWheel(uint32_t slots, uint64_t tick_ns, uint64_t now_ns)
    : heads_(slots == 0 ? 1 : slots),
      tick_ns_(tick_ns == 0 ? 1 : tick_ns),
      mask_(heads_.size() - 1),
      current_(now_ns / tick_ns_) {
  // Not a power of two: the largest power of two below it (the caller sized it; never more).
  while ((heads_.size() & mask_) != 0) {
    heads_.pop_back();
    mask_ = heads_.size() - 1;
  }
  for (TimerNode& h : heads_) h.prev = h.next = &h;
}

void TimerWheel::arm(TimerNode& n, uint64_t now_ns, uint64_t delay_ns) {
  cancel(n);
  const uint64_t at = now_ns + delay_ns;
  uint64_t due = at / tick_ns_ + (at % tick_ns_ != 0 ? 1 : 0);  // the first boundary at or after
  if (due < current_) due = current_;  // a tick already passed: the next one the wheel looks at
  n.due = due;
  TimerNode& head = heads_[due & mask_];
  n.prev = &head;
  n.next = head.next;
  head.next->prev = &n;
  head.next = &n;
  ++armed_;
}

void TimerWheel::cancel(TimerNode& n) {
  if (n.armed()) unlink(n);
}

void TimerWheel::unlink(TimerNode& n) {
  n.prev->next = n.next;
  n.next->prev = n.prev;
  n.prev = n.next = nullptr;
  --armed_;
}

std::optional<uint64_t> TimerWheel::next_due_ns() const {
  if (armed_ == 0) return std::nullopt;
  std::optional<uint64_t> due;
  for (const TimerNode& head : heads_) {
    for (const TimerNode* n = head.next; n != &head; n = n->next) {
      if (!due || n->due < *due) due = n->due;
    }
  }
  if (!due) return std::nullopt;
  return *due * tick_ns_;
}

}  // namespace epic::engine
