// SendWindow: EPIC's sender window MW, counted in packets, for a transport
// whose NIC segments messages itself (verbs). A SEND of L bytes is
// ceil(L / pmtu) packets (an empty one is one packet). Sends wait in a FIFO and
// go to the NIC, in order, only while the packets of the sends posted but not
// yet completed plus the next one stay within MW; a send larger than MW on its
// own goes when nothing else is outstanding. A send completes when all its
// packets are acknowledged, so no more than MW packets of small messages are
// ever unacknowledged — the bound the switch's 2·MW slots rely on (a single
// message larger than MW exceeds it: keep messages <= MW packets).
//
// Pure bookkeeping, no I/O: the transport mirrors the FIFO with its own work
// requests (same order). RC completes sends in posting order, so complete()
// always retires the oldest outstanding one.
// Thread-safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace epic::verbs {

class SendWindow {
 public:
  // max_packets >= 1 (MW); pmtu >= 1.
  SendWindow(uint32_t max_packets, uint32_t pmtu);

  // Packets of a message of `bytes` at this path MTU (0 bytes = 1 packet).
  static uint32_t packets_of(uint64_t bytes, uint32_t pmtu);
  uint32_t packets_of(uint64_t bytes) const { return packets_of(bytes, pmtu_); }

  // Queue a send of `bytes` at the tail of the FIFO.
  void push(uint64_t bytes);
  // The head of the FIFO may go to the NIC now.
  bool can_post() const;
  // The head of the FIFO went to the NIC (requires can_post()).
  void post();
  // The NIC refused the send just posted: it returns to the head of the FIFO.
  void unpost();
  // The oldest outstanding send completed (successfully or not).
  void complete();
  // The queued sends that never reached the NIC are dropped (the QP failed).
  void clear_queued() { queued_.clear(); }

  uint32_t max_packets() const { return max_packets_; }
  uint32_t pmtu() const { return pmtu_; }
  size_t queued() const { return queued_.size(); }
  size_t outstanding_sends() const { return outstanding_.size(); }
  uint64_t outstanding_packets() const { return outstanding_packets_; }

 private:
  uint32_t max_packets_;
  uint32_t pmtu_;
  std::deque<uint32_t> queued_;       // packets of each queued send, FIFO
  std::deque<uint32_t> outstanding_;  // packets of each posted, uncompleted send
  uint64_t outstanding_packets_ = 0;
};

}  // namespace epic::verbs
