#include "host/transport/soft/soft_endpoint.h"

#include <cstdio>

namespace epic::soft {

namespace {

std::string hex24(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%06x", v);
  return b;
}

}  // namespace

std::string SoftQpEndpoint::describe_qp(const RcQp& qp) {
  const QpCounters& q = qp.counters();
  return "soft qp " + hex24(qp.config().qpn) + " -> " + hex24(qp.config().remote_qpn) +
         " state=" + (qp.state() == QpState::kRts ? "RTS" : "ERROR") +
         " next_send_psn=" + hex24(qp.next_send_psn()) +
         " expected_psn=" + hex24(qp.expected_psn()) +
         " outstanding_sends=" + std::to_string(qp.outstanding_sends()) +
         " posted_recvs=" + std::to_string(qp.posted_recvs()) +
         " retransmits=" + std::to_string(q.tx_retransmits) +
         " timeouts=" + std::to_string(q.timeouts) +
         " rnr_naks_rx=" + std::to_string(q.rx_rnr_nak) +
         " naks_seq_rx=" + std::to_string(q.rx_nak_seq);
}

}  // namespace epic::soft
