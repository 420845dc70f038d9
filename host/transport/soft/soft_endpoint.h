// SoftQpEndpoint: a host::Endpoint over a user-space RcQp whose frames someone
// else moves (the Mode-II harness's simulated links, or SoftTransport).
// Thread-safety: none; the thread that owns the RcQp.
#pragma once

#include <string>

#include "host/transport/endpoint.h"
#include "host/transport/soft/rc_qp.h"

namespace epic::soft {

class SoftQpEndpoint : public host::Endpoint {
 public:
  explicit SoftQpEndpoint(RcQp& qp) : qp_(qp) {}
  uint16_t pmtu() const override { return qp_.config().pmtu; }
  bool post_send(const SendWr& wr) override { return qp_.post_send(wr); }
  bool post_recv(const RecvWr& wr) override { return qp_.post_recv(wr); }
  std::optional<Completion> poll_cq() override { return qp_.poll_cq(); }
  void flush() override { qp_.flush(); }
  std::string describe() const override { return describe_qp(qp_); }

  // "qp 0x000102 state=RTS next_send_psn=... expected_psn=... ..."
  static std::string describe_qp(const RcQp& qp);

 private:
  RcQp& qp_;
};

}  // namespace epic::soft
