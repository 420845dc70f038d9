// The rank's side of its RC connection to the switch's virtual endpoint, as
// the rank library sees it — the verbs subset a Mode-II collective needs:
// post receives, post SENDs (with Immediate for the control message), poll
// completions. Two implementations:
//
//   soft   host/transport/soft (SoftQpEndpoint over an RcQp; SoftTransport
//          adds the AF_PACKET interface and the event loop)
//   verbs  host/transport/verbs (an rdma-core RC QP on any RoCEv2 NIC)
//
// Work requests and completions use the soft endpoint's value types, which are
// named after ibv_send_wr / ibv_recv_wr / ibv_wc (host/transport/soft/rc_types.h).
// Thread-safety: none; one thread owns an endpoint.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "host/transport/soft/rc_types.h"

namespace epic::host {

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // Path MTU of the connection in bytes (256..4096).
  virtual uint16_t pmtu() const = 0;
  // False when the work request was not queued (queue full, QP in error, the
  // buffer could not be registered); nothing was posted then.
  virtual bool post_send(const soft::SendWr& wr) = 0;
  virtual bool post_recv(const soft::RecvWr& wr) = 0;
  // The next completion, if any (never blocks).
  virtual std::optional<soft::Completion> poll_cq() = 0;
  // Abandons every posted work request, as ibv_modify_qp(IBV_QPS_ERR) does:
  // the QP enters the error state and, when flush() returns, no send or
  // receive refers to caller memory any more — each completes with
  // kWrFlushErr (poll_cq()) — and later frames are dropped. Whoever gives up
  // on a collective calls it before its buffers go back to their owner.
  // Nothing can be posted afterwards. Idempotent.
  virtual void flush() = 0;
  // The connection's state in one line for stuck reports: QP state, next send
  // PSN, expected PSN, outstanding work, retransmission counters.
  virtual std::string describe() const = 0;
};

// An Endpoint with its own I/O: what a rank process holds.
class Transport : public Endpoint {
 public:
  // "soft" or "verbs".
  virtual std::string_view kind() const = 0;
  // Drives the endpoint (moves frames, fires retransmission timers, or just
  // polls the NIC) until done() is true — checked before waiting and after
  // every event — `timeout` passed, or the transport failed (failure()).
  // Returns done(). Work posted from inside done() is transmitted.
  virtual bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) = 0;
  // Why the transport stopped working ("" while it works).
  virtual const std::string& failure() const = 0;
  // Local identity of the QP, as the switch's group configuration names it.
  virtual uint32_t qpn() const = 0;
};

}  // namespace epic::host
