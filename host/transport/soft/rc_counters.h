// Counters of one RC QP. Every received packet is counted in `rx_packets` and
// in exactly one `rx_*` disposition below it, so tests can check that the
// dispositions add up (see QpCounters::rx_accounted()).
#pragma once

#include <cstdint>

namespace epic::soft {

struct QpCounters {
  // transmit
  uint64_t tx_packets = 0;      // all frames produced
  uint64_t tx_requests = 0;     // request packets sent the first time
  uint64_t tx_retransmits = 0;  // request packets sent again (timeout, NAK, RNR)
  // ... by what made them go again (they add up to tx_retransmits):
  uint64_t tx_resent_timeout = 0;      // the local ACK timeout's resend
  uint64_t tx_resent_nak_seq = 0;      // go-back-N after a NAK-sequence-error
  uint64_t tx_resent_rnr_probe = 0;    // the NAKed packet alone after an RNR wait
  uint64_t tx_resent_rnr_window = 0;   // the whole window after an RNR wait
  uint64_t tx_resent_after_probe = 0;  // what followed a probe the responder took alone
  uint64_t tx_acks = 0;
  uint64_t tx_nak_seq = 0;    // NAK PSN sequence error
  uint64_t tx_nak_other = 0;  // NAK invalid request / remote access / remote op
  uint64_t tx_rnr_naks = 0;
  uint64_t tx_cnps = 0;
  uint64_t timeouts = 0;       // retransmission timer expirations
  uint64_t rnr_waits_cut = 0;  // RNR waits ended early by an ACK of the refused packet

  // receive: total, then exactly one disposition per packet
  uint64_t rx_packets = 0;
  uint64_t rx_wrong_qp = 0;                 // destination QP is not ours: dropped
  uint64_t rx_request_accepted = 0;         // in-sequence request packet executed
  uint64_t rx_request_duplicate = 0;        // PSN before the expected one: re-ACKed, not executed
  uint64_t rx_request_out_of_sequence = 0;  // PSN after the expected one: NAK (once), dropped
  uint64_t rx_request_invalid = 0;       // opcode sequence / length / unsupported: NAK invalid req
  uint64_t rx_request_access_error = 0;  // bad rkey or range: NAK remote access error
  uint64_t rx_request_rnr = 0;           // no receive posted: RNR NAK, dropped
  uint64_t rx_ack = 0;                   // ACK/NAK that acknowledged or acted on something
  uint64_t rx_ack_stale = 0;             // ACK/NAK for nothing outstanding (old or invalid PSN)
  uint64_t rx_cnp = 0;
  uint64_t rx_in_error_state = 0;  // dropped because the QP is in the error state

  // informational (not dispositions)
  uint64_t rx_ce_marked = 0;  // requests that arrived with ECN CE
  uint64_t rx_nak_seq = 0;
  uint64_t rx_rnr_nak = 0;

  uint64_t rx_accounted() const {
    return rx_wrong_qp + rx_request_accepted + rx_request_duplicate + rx_request_out_of_sequence +
           rx_request_invalid + rx_request_access_error + rx_request_rnr + rx_ack + rx_ack_stale +
           rx_cnp + rx_in_error_state;
  }
};

}  // namespace epic::soft
