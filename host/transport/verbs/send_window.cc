#include "host/transport/verbs/send_window.h"

#include <algorithm>
#include <stdexcept>

namespace epic::verbs {

SendWindow::SendWindow(uint32_t max_packets, uint32_t pmtu)
    : max_packets_(max_packets), pmtu_(pmtu) {
  if (max_packets == 0) throw std::invalid_argument("SendWindow: max_packets must be >= 1");
  if (pmtu == 0) throw std::invalid_argument("SendWindow: pmtu must be >= 1");
}

uint32_t SendWindow::packets_of(uint64_t bytes, uint32_t pmtu) {
  if (bytes == 0) return 1;
  const uint64_t n = (bytes + pmtu - 1) / pmtu;
  return static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX));
}

void SendWindow::push(uint64_t bytes) { queued_.push_back(packets_of(bytes)); }

bool SendWindow::can_post() const {
  if (queued_.empty()) return false;
  return outstanding_.empty() || outstanding_packets_ + queued_.front() <= max_packets_;
}

void SendWindow::post() {
  if (queued_.empty()) throw std::logic_error("SendWindow::post: nothing queued");
  const uint32_t p = queued_.front();
  queued_.pop_front();
  outstanding_.push_back(p);
  outstanding_packets_ += p;
}

void SendWindow::unpost() {
  if (outstanding_.empty()) throw std::logic_error("SendWindow::unpost: nothing outstanding");
  const uint32_t p = outstanding_.back();
  outstanding_.pop_back();
  outstanding_packets_ -= p;
  queued_.push_front(p);
}

void SendWindow::complete() {
  if (outstanding_.empty()) throw std::logic_error("SendWindow::complete: nothing outstanding");
  outstanding_packets_ -= outstanding_.front();
  outstanding_.pop_front();
}

}  // namespace epic::verbs
