// CollectiveRunner: the rank side of EPIC Mode-II collectives over one RC
// queue pair (host::Endpoint: soft or verbs) to the switch's virtual endpoint — what a rank library
// does for each collective (docs/mode2.md, "What the rank library must do"):
//
//   start(d, send, recv)  post the receives (control result, then one per
//                         result message, straight into `recv` at their
//                         offsets), then the control message (SEND with
//                         Immediate), then the data: one RC message per chunk
//                         for ReduceScatter/AllGather. One-source data
//                         (Broadcast root, AllGather) is deferred until the
//                         control result is in (every rank has finished the
//                         previous collective) and, for AllGather, until the
//                         chunks before this rank's own have arrived —
//                         otherwise receivers drop it as out of sequence.
//   poll()                consume the QP's completion queue, send deferred
//                         data when it may go, finish the collective.
//   done()                every result message (and the control result) is in.
//
// The runner owns each control message buffer until its send completes (the
// QP re-reads it on retransmission; a rank moves on before its uploads are
// acknowledged). Caller-owned buffers: `recv` must stay valid until done();
// `send` until sends_busy_from() passes the collective's index, which can be
// after done() (Mode-II acknowledges an upload only when its receivers have
// acknowledged the result).
//
// Local parts of a result are copied from `send` at start(): the root's own
// Broadcast data, a rank's own AllGather chunk (layout.h). The runner does no
// I/O and keeps no clock: the caller moves frames (the harness's simulated
// links, or SoftNic) and bounds the waiting.
// Thread-safety: none; the thread that owns the RcQp drives its runner.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string>

#include "host/transport/endpoint.h"
#include "proto/vocab/collective.h"
#include "proto/vocab/collective_map.h"

namespace epic::host {

class CollectiveRunner {
 public:
  // `qp` is connected to the switch's endpoint for this rank; it must outlive
  // the runner, and nothing else may post on it or poll its completions.
  CollectiveRunner(Endpoint& qp, uint16_t rank, uint16_t ranks);

  // Begins the next collective (number started()). Requires done() and no
  // error. `send` holds send_bytes(d, ranks) bytes (may be empty where this
  // rank sends nothing and keeps no local part: Broadcast non-root, Barrier),
  // `recv` recv_bytes(d, rank, ranks). False, with error() set, when the
  // buffers are short or the QP refuses a work request.
  bool start(const vocab::CollectiveDescriptor& d, std::span<const uint8_t> send,
             std::span<uint8_t> recv);

  // Consumes every completion queued on the QP. After an error the runner
  // stops advancing and keeps the first error.
  void poll();

  // No collective in progress: the last one started has all its results.
  bool done() const { return !active_; }
  // Collectives started so far; the one in progress, if any, is started() - 1.
  uint64_t started() const { return started_; }
  // Send buffers of collectives numbered below this are no longer read.
  uint64_t sends_busy_from() const;
  // Every send posted so far has completed (nothing left to retransmit).
  bool sends_complete() const { return uploads_.empty(); }

  // "" while everything succeeded; else which collective failed and why
  // (completion status, wrong control result, ...) followed by dump().
  const std::string& error() const { return error_; }
  // The stuck state in one line: rank, the collective in progress, what it
  // still waits for, and the QP's PSNs, queues and recovery counters.
  std::string dump() const;

  uint16_t rank() const { return rank_; }
  uint16_t ranks() const { return ranks_; }

 private:
  // Sends of one collective not yet completed, and its control message buffer.
  struct Upload {
    uint64_t index = 0;
    vocab::CollectiveDescriptor desc;
    uint32_t sends_left = 0;  // control + data messages, deferred ones included
    std::array<uint8_t, vocab::kControlPayloadBytes> control{};
  };

  void on_completion(const soft::Completion& c);
  void on_receive(uint64_t index, uint32_t message, const soft::Completion& c);
  bool post_data();
  void maybe_send_deferred();
  void fail(const std::string& why);
  std::string describe(uint64_t index) const;

  Endpoint& qp_;
  uint16_t rank_;
  uint16_t ranks_;
  uint64_t started_ = 0;
  std::deque<Upload> uploads_;  // references stay valid: only push_back / pop_front

  // the collective in progress (started() - 1)
  bool active_ = false;
  vocab::CollectiveShape shape_;
  std::span<const uint8_t> send_;
  std::span<uint8_t> recv_;
  uint32_t result_messages_ = 0;  // data messages this rank receives
  uint32_t results_in_ = 0;       // of which arrived
  bool control_in_ = false;
  bool deferred_ = false;  // one-source data not yet posted
  std::array<uint8_t, vocab::kControlPayloadBytes> control_result_{};

  std::string error_;
};

}  // namespace epic::host
