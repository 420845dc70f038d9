// RcQp: a RoCEv2 Reliable Connected queue pair in user space — requester and
// responder — that behaves like a NIC's (IBA chapter 9, as Linux rdma_rxe does
// it) and is independent of any I/O or clock:
//
//   packets in:   receive(view, now)    a parsed, ICRC-checked frame for this QP
//   packets out:  pop_tx()              frames to put on the wire, in order
//   time:         on_timer(now)         retransmission / RNR timers; next_deadline()
//   verbs:        post_send, post_recv, register_mr, poll_cq
//
// The same code runs in the deterministic simulator (tests/unit/host/...) and
// on a real interface (host/transport/soft/io/soft_nic.h). All times are
// nanoseconds on a caller-chosen monotonic clock.
//
// Implemented: SEND and RDMA WRITE, with and without Immediate, segmented into
// path-MTU packets; 24-bit PSNs with wrap; cumulative, coalesced ACKs;
// NAK-sequence-error and go-back-N; retransmission timeout with retry count;
// RNR NAK and RNR retry; duplicate detection (re-ACK); MSN and AETH syndromes;
// NAK invalid request / remote access error; CNP for CE-marked requests; an
// outstanding-packet window (MW). Not implemented: RDMA READ, atomics, SEND with
// invalidate, UD/UC, congestion control on receiving CNPs (counted only).
// See docs/soft-rc-endpoint.md.
//
// Thread-safety: none; one thread owns a QP. Not for the switch datapath (it
// allocates frames); it is the endpoint a rank or a test uses.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "datapath/wire/packet_view.h"
#include "host/transport/soft/rc_counters.h"
#include "host/transport/soft/rc_types.h"

namespace epic::soft {

class RcQp {
 public:
  explicit RcQp(const QpConfig& config);

  // Queue a SEND / RDMA WRITE. False (nothing queued) when the send queue is
  // full, the QP is in the error state, or the request is malformed.
  bool post_send(const SendWr& wr);
  // Queue a receive buffer for incoming SENDs and WRITE-with-Immediate.
  bool post_recv(const RecvWr& wr);
  // Allow the peer to RDMA WRITE into [mr.va, mr.va + mr.length) with mr.rkey.
  void register_mr(const MemoryRegion& mr);

  // Process one received frame (parsed and ICRC-verified by the caller).
  void receive(const wire::PacketView& pkt, uint64_t now_ns);
  // Expire timers; call at or after next_deadline().
  void on_timer(uint64_t now_ns);
  // Earliest time on_timer() has work to do, if any.
  std::optional<uint64_t> next_deadline() const;

  // Next frame to transmit. Coalesced ACKs are emitted here, after a burst of
  // receive() calls, so the I/O loop should drain pop_tx() after each RX burst.
  std::optional<std::vector<uint8_t>> pop_tx(uint64_t now_ns);
  std::optional<Completion> poll_cq();
  // Moves the QP to the error state (ibv_modify_qp(IBV_QPS_ERR)): every posted
  // send and receive completes with kWrFlushErr and no buffer of theirs is
  // touched again; received frames are dropped (rx_in_error_state).
  void flush() { enter_error(); }

  QpState state() const { return state_; }
  const QpCounters& counters() const { return counters_; }
  const QpConfig& config() const { return config_; }
  // Requester: PSN of the next new request packet. Responder: expected PSN.
  uint32_t next_send_psn() const { return next_psn_; }
  uint32_t expected_psn() const { return epsn_; }
  uint32_t msn() const { return msn_; }
  // Work requests not yet completed (sends) / receive buffers still posted.
  size_t outstanding_sends() const { return send_queue_.size(); }
  size_t posted_recvs() const { return recv_queue_.size(); }

 private:
  struct SendWqe {
    SendWr wr;
    uint32_t first_psn = 0;
    uint32_t npackets = 0;
  };
  enum class MsgKind : uint8_t { kNone, kSend, kWrite };

  // requester
  void fill_window(uint64_t now_ns);
  void emit_next(uint64_t now_ns, bool probe);
  void emit_request(SendWqe& wqe, uint32_t index, bool retransmit, bool probe, uint64_t now_ns);
  void handle_ack(const wire::PacketView& pkt, uint64_t now_ns);
  void acknowledge_through(uint32_t psn, uint64_t now_ns);
  void rewind_to(uint32_t psn);
  void complete_send_error(WcStatus status);
  // responder
  void handle_request(const wire::PacketView& pkt, uint64_t now_ns);
  bool check_sequence(const wire::OpcodeInfo& op, uint32_t payload) const;
  void schedule_ack();
  void send_nak(uint8_t syndrome, uint32_t psn);
  void send_cnp(uint64_t now_ns);
  // both
  void enter_error();
  void push_frame(wire::RocePacket&& p);
  wire::RocePacket header(uint8_t opcode, uint32_t psn) const;
  uint32_t packets_for(uint32_t length) const;

  QpConfig config_;
  QpState state_ = QpState::kRts;
  QpCounters counters_;
  std::deque<std::vector<uint8_t>> tx_;
  std::deque<Completion> cq_;

  // requester state
  std::deque<SendWqe> send_queue_;  // posted, not yet completed; front = oldest
  size_t next_wqe_ = 0;             // index in send_queue_ of the WQE being transmitted
  uint32_t next_psn_ = 0;           // PSN of the next packet to transmit
  uint32_t unacked_psn_ = 0;        // oldest PSN not yet acknowledged
  uint32_t max_sent_psn_ = 0;       // highest PSN ever transmitted + 1 (new vs retransmit)
  uint32_t packets_since_ack_req_ = 0;
  uint8_t retries_left_ = 0;
  uint8_t rnr_retries_left_ = 0;
  std::optional<uint64_t> retransmit_deadline_;
  std::optional<uint64_t> rnr_deadline_;  // transmission paused until then
  std::optional<uint32_t> rewound_psn_;   // go-back-N restart point of the last NAK obeyed
  bool probe_next_ = false;  // the next resend (after an RNR wait or a timeout) is one packet
  std::optional<uint32_t> probe_psn_;     // that packet, until the next ACK, NAK or timeout
  uint32_t rnr_psn_ = 0;                  // the packet the RNR NAK being waited out refused
  std::optional<uint32_t> last_rnr_psn_;  // PSN of the last RNR NAK since a timeout or NAK
  // Why the packets now going again go again (the tx_resent_* counters).
  enum class Resend : uint8_t { kTimeout, kNakSeq, kRnrProbe, kRnrWindow, kAfterProbe };
  Resend resend_cause_ = Resend::kTimeout;
  void note_retransmission(Resend cause) { resend_cause_ = cause; }
  void arm_retransmit_timer(uint64_t now_ns) {
    retransmit_deadline_ = now_ns + config_.retransmit_timeout_ns;
  }

  // responder state
  uint32_t epsn_ = 0;
  uint32_t msn_ = 0;
  MsgKind in_message_ = MsgKind::kNone;
  uint64_t write_va_ = 0;  // next byte of the current RDMA WRITE
  uint32_t write_rkey_ = 0;
  uint32_t write_remaining_ = 0;
  uint32_t write_total_ = 0;
  uint32_t recv_offset_ = 0;  // bytes of the current SEND placed in the front receive
  bool nak_sent_ = false;     // a NAK-sequence-error for epsn_ is outstanding
  bool ack_pending_ = false;
  uint64_t last_cnp_ns_ = 0;
  bool cnp_sent_ = false;
  std::deque<RecvWr> recv_queue_;
  std::vector<MemoryRegion> mrs_;
};

}  // namespace epic::soft
