// RcQp requester half: segmentation into path-MTU packets, the outstanding
// window (MW), ACK/NAK processing, go-back-N and the retransmission and RNR
// timers. Behaviour follows IBA 9.7 as Linux rdma_rxe implements it:
// AckReq on the last packet of a message and every `ack_req_every` packets;
// an ACK for PSN p acknowledges every packet up to p; a NAK-sequence-error for
// p acknowledges up to p-1 and restarts transmission at p; timeouts and
// NAK-sequence-errors consume the retry count, which forward progress refills.
#include <algorithm>

#include "host/transport/soft/rc_qp.h"
#include "proto/vocab/aeth.h"
#include "proto/vocab/psn.h"

namespace epic::soft {

namespace w = epic::wire;

namespace {

bool is_write(SendOp op) { return op == SendOp::kRdmaWrite || op == SendOp::kRdmaWriteWithImm; }
bool has_imm(SendOp op) { return op == SendOp::kSendWithImm || op == SendOp::kRdmaWriteWithImm; }

uint8_t request_opcode(SendOp op, uint32_t index, uint32_t npackets) {
  const bool first = index == 0, last = index + 1 == npackets;
  if (is_write(op)) {
    if (first && last) return has_imm(op) ? w::op::kWriteOnlyImm : w::op::kWriteOnly;
    if (first) return w::op::kWriteFirst;
    if (last) return has_imm(op) ? w::op::kWriteLastImm : w::op::kWriteLast;
    return w::op::kWriteMiddle;
  }
  if (first && last) return has_imm(op) ? w::op::kSendOnlyImm : w::op::kSendOnly;
  if (first) return w::op::kSendFirst;
  if (last) return has_imm(op) ? w::op::kSendLastImm : w::op::kSendLast;
  return w::op::kSendMiddle;
}

}  // namespace

void RcQp::emit_next(uint64_t now_ns, bool probe) {
  SendWqe& wqe = send_queue_[next_wqe_];
  const auto index = static_cast<uint32_t>(vocab::psn_diff(next_psn_, wqe.first_psn));
  const bool retransmit = vocab::psn_lt(next_psn_, max_sent_psn_);
  emit_request(wqe, index, retransmit, probe, now_ns);
  next_psn_ = vocab::psn_add(next_psn_, 1);
  if (vocab::psn_gt(next_psn_, max_sent_psn_)) max_sent_psn_ = next_psn_;
  if (index + 1 == wqe.npackets) ++next_wqe_;
  if (!retransmit_deadline_) arm_retransmit_timer(now_ns);
}

void RcQp::fill_window(uint64_t now_ns) {
  if (state_ != QpState::kRts || rnr_deadline_) return;
  // After an RNR wait or a local ACK timeout only the oldest unacknowledged packet goes again
  // (a probe): the responder said it is busy, or is slow to answer, and the packets after it
  // stay in flight. An EPIC Mode-II switch holds a rank's uploads until the slowest rank has
  // contributed, and parks a rank that resends meanwhile with an RNR NAK; resending the whole
  // window (go-back-N) after every RNR round or timeout sent each packet many times over on a
  // lossless network (docs/soft-rc-endpoint.md, "Retransmission"). A responder that did drop
  // the packets after the probe NAKs the next one, or acknowledges the probe alone, and we go
  // back then (handle_ack).
  if (probe_next_) {
    probe_next_ = false;
    if (next_wqe_ < send_queue_.size() && vocab::psn_lt(next_psn_, max_sent_psn_)) {
      probe_psn_ = next_psn_;
      emit_next(now_ns, true);
      rewind_to(max_sent_psn_);
    }
  }
  while (next_wqe_ < send_queue_.size() &&
         static_cast<uint32_t>(vocab::psn_diff(next_psn_, unacked_psn_)) <
             config_.max_outstanding) {
    emit_next(now_ns, false);
  }
}

void RcQp::emit_request(SendWqe& wqe, uint32_t index, bool retransmit, bool probe,
                        uint64_t /*now_ns*/) {
  const SendWr& wr = wqe.wr;
  const uint8_t opcode = request_opcode(wr.op, index, wqe.npackets);
  const w::OpcodeInfo& op = w::opcode_info(opcode);
  w::RocePacket p = header(opcode, vocab::psn_add(wqe.first_psn, index));
  const bool last = index + 1 == wqe.npackets;
  ++packets_since_ack_req_;
  // A probe asks for an ACK: a responder that coalesces ACKs must still answer it.
  p.ack_req = last || probe || packets_since_ack_req_ >= config_.ack_req_every;
  if (p.ack_req) packets_since_ack_req_ = 0;
  if (op.has(w::kExtReth)) p.reth = {wr.remote_va, wr.rkey, wr.length};
  if (op.has(w::kExtImmDt)) p.immdt = wr.imm_data;
  const uint64_t off = uint64_t{index} * config_.pmtu;
  const uint64_t n =
      std::min<uint64_t>(config_.pmtu, wr.length - std::min<uint64_t>(off, wr.length));
  if (n > 0) p.payload.assign(wr.data + off, wr.data + off + n);
  push_frame(std::move(p));
  if (retransmit) {
    ++counters_.tx_retransmits;
    switch (resend_cause_) {
      case Resend::kTimeout:
        ++counters_.tx_resent_timeout;
        break;
      case Resend::kNakSeq:
        ++counters_.tx_resent_nak_seq;
        break;
      case Resend::kRnrProbe:
        ++counters_.tx_resent_rnr_probe;
        break;
      case Resend::kRnrWindow:
        ++counters_.tx_resent_rnr_window;
        break;
      case Resend::kAfterProbe:
        ++counters_.tx_resent_after_probe;
        break;
    }
  } else {
    ++counters_.tx_requests;
  }
}

void RcQp::handle_ack(const w::PacketView& pkt, uint64_t now_ns) {
  const w::Aeth a = pkt.aeth();
  const uint32_t psn = pkt.psn();
  // Everything transmitted and not yet acknowledged: [unacked_psn_, max_sent_psn_).
  const auto in_flight = static_cast<uint32_t>(vocab::psn_diff(max_sent_psn_, unacked_psn_));
  const bool covers_sent = vocab::psn_in_window(psn, unacked_psn_, in_flight);

  switch (vocab::aeth::kind(a.syndrome)) {
    case vocab::aeth::Kind::kAck:
      if (!covers_sent) {
        ++counters_.rx_ack_stale;  // duplicate or coalesced-away ACK, or garbage
        return;
      }
      ++counters_.rx_ack;
      // An RNR NAK after this ACK starts a new round (a Mode-II switch names the oldest upload
      // it holds, which this ACK moved on): it is not the responder refusing the next packet.
      if (vocab::psn_ge(psn, unacked_psn_)) last_rnr_psn_.reset();
      acknowledge_through(psn, now_ns);
      // An ACK of the packet an RNR NAK refused ends the wait: the responder took it after
      // all (a Mode-II switch's slot completed when the slowest rank's upload came). Waiting
      // out the timer would idle the window for up to the NAK's 15 ms. What is in flight after
      // it stays in flight unless the NAK said the responder drops what follows.
      if (rnr_deadline_ && vocab::psn_ge(psn, rnr_psn_)) {
        rnr_deadline_.reset();
        ++counters_.rnr_waits_cut;
        if (probe_next_) {
          probe_next_ = false;
          rewind_to(max_sent_psn_);
        }
        if (unacked_psn_ != max_sent_psn_) arm_retransmit_timer(now_ns);
      }
      // The ACK of the probe alone, with packets after it in flight: the responder may have
      // dropped them (a per-hop reliable Mode-III switch does): go back and send them again.
      if (probe_psn_ && psn == *probe_psn_ && vocab::psn_lt(unacked_psn_, max_sent_psn_)) {
        rewind_to(unacked_psn_);
        note_retransmission(Resend::kAfterProbe);
      }
      probe_psn_.reset();
      fill_window(now_ns);
      return;

    case vocab::aeth::Kind::kNak:
      if (a.syndrome == vocab::aeth::kNakPsnSequenceError) {
        ++counters_.rx_nak_seq;
        // The responder expects `psn`: it must be one we sent and not a NAK we already obeyed.
        if (!covers_sent || (rewound_psn_ && *rewound_psn_ == psn)) {
          ++counters_.rx_ack_stale;
          return;
        }
        ++counters_.rx_ack;
        if (psn != unacked_psn_) acknowledge_through(vocab::psn_add(psn, -1), now_ns);
        if (retries_left_ == 0) {
          complete_send_error(WcStatus::kRetryExcErr);
          return;
        }
        --retries_left_;
        rewind_to(psn);
        note_retransmission(Resend::kNakSeq);
        probe_next_ = false;
        probe_psn_.reset();
        last_rnr_psn_.reset();
        rewound_psn_ = psn;
        // Waiting out an RNR NAK, nothing is sent: the resend after it arms the timer.
        if (!rnr_deadline_) arm_retransmit_timer(now_ns);
        fill_window(now_ns);
        return;
      }
      if (!covers_sent) {
        ++counters_.rx_ack_stale;
        return;
      }
      ++counters_.rx_ack;
      // A fatal NAK for `psn`: earlier packets are acknowledged, its WQE fails.
      if (psn != unacked_psn_) acknowledge_through(vocab::psn_add(psn, -1), now_ns);
      complete_send_error(a.syndrome == vocab::aeth::kNakInvalidRequest ? WcStatus::kRemInvReqErr
                          : a.syndrome == vocab::aeth::kNakRemoteAccessError
                              ? WcStatus::kRemAccessErr
                              : WcStatus::kRemOpErr);
      return;

    case vocab::aeth::Kind::kRnrNak:
      ++counters_.rx_rnr_nak;
      if (!covers_sent) {
        ++counters_.rx_ack_stale;
        return;
      }
      ++counters_.rx_ack;
      if (psn != unacked_psn_) acknowledge_through(vocab::psn_add(psn, -1), now_ns);
      if (config_.rnr_retry != 7) {  // 7 means "retry forever" (IBA)
        if (rnr_retries_left_ == 0) {
          complete_send_error(WcStatus::kRnrRetryExcErr);
          return;
        }
        --rnr_retries_left_;
      }
      rewind_to(psn);
      // ... unless a NAK-sequence-error said packets were lost: then the whole window goes
      // again after the wait (a Broadcast root, parked while receivers recover a gap).
      // Also when this RNR NAK names another packet than the last one did: the responder took
      // the probe and refused the next, so it drops what follows (a full Mode-III Pipe).
      probe_next_ = !rewound_psn_.has_value() && (!last_rnr_psn_ || *last_rnr_psn_ == psn);
      last_rnr_psn_ = psn;
      rnr_psn_ = psn;
      note_retransmission(probe_next_ ? Resend::kRnrProbe : Resend::kRnrWindow);
      // Wait the timer the responder asked for, and at least our configured minimum.
      rnr_deadline_ =
          now_ns + std::max(config_.rnr_delay_ns, vocab::aeth::kRnrTimerNs[a.syndrome & 0x1F]);
      retransmit_deadline_.reset();
      return;

    case vocab::aeth::Kind::kReserved:
      ++counters_.rx_ack_stale;
      return;
  }
}

void RcQp::acknowledge_through(uint32_t psn, uint64_t now_ns) {
  const uint32_t next_unacked = vocab::psn_add(psn, 1);
  if (!vocab::psn_gt(next_unacked, unacked_psn_)) return;
  unacked_psn_ = next_unacked;
  retries_left_ = config_.retry_count;  // forward progress refills the retry budget
  rnr_retries_left_ = config_.rnr_retry;
  if (rewound_psn_ && vocab::psn_ge(unacked_psn_, *rewound_psn_)) rewound_psn_.reset();
  // Complete every WQE whose last packet is now acknowledged.
  while (!send_queue_.empty()) {
    const SendWqe& wqe = send_queue_.front();
    const uint32_t end = vocab::psn_add(wqe.first_psn, wqe.npackets);
    if (vocab::psn_gt(end, unacked_psn_)) break;
    if (wqe.wr.signaled) {
      cq_.push_back({wqe.wr.wr_id, is_write(wqe.wr.op) ? WcOpcode::kRdmaWrite : WcOpcode::kSend,
                     WcStatus::kSuccess, wqe.wr.length, false, 0});
    }
    send_queue_.pop_front();
    if (next_wqe_ > 0) --next_wqe_;
  }
  // An ACK can overtake a go-back-N restart: never resend what is acknowledged.
  if (vocab::psn_lt(next_psn_, unacked_psn_)) rewind_to(unacked_psn_);
  if (unacked_psn_ == max_sent_psn_) {
    retransmit_deadline_.reset();
  } else {
    arm_retransmit_timer(now_ns);
  }
}

void RcQp::rewind_to(uint32_t psn) {
  next_psn_ = psn;
  next_wqe_ = send_queue_.size();
  for (size_t i = 0; i < send_queue_.size(); ++i) {
    const SendWqe& wqe = send_queue_[i];
    if (vocab::psn_in_window(psn, wqe.first_psn, wqe.npackets)) {
      next_wqe_ = i;
      break;
    }
  }
}

void RcQp::on_timer(uint64_t now_ns) {
  if (state_ != QpState::kRts) return;
  if (rnr_deadline_ && now_ns >= *rnr_deadline_) {
    rnr_deadline_.reset();
    retransmit_deadline_.reset();  // the resend arms it afresh
    fill_window(now_ns);
  }
  // No local ACK timeout while the responder told us to wait (nothing of ours is in flight).
  if (!rnr_deadline_ && retransmit_deadline_ && now_ns >= *retransmit_deadline_) {
    if (unacked_psn_ == max_sent_psn_) {
      retransmit_deadline_.reset();
      return;
    }
    ++counters_.timeouts;
    if (retries_left_ == 0) {
      complete_send_error(WcStatus::kRetryExcErr);
      return;
    }
    --retries_left_;
    rewind_to(unacked_psn_);
    note_retransmission(Resend::kTimeout);
    probe_psn_.reset();
    last_rnr_psn_.reset();
    rewound_psn_.reset();
    arm_retransmit_timer(now_ns);
    probe_next_ = config_.probe_on_timeout;
    fill_window(now_ns);
  }
}

std::optional<uint64_t> RcQp::next_deadline() const {
  if (state_ != QpState::kRts) return std::nullopt;
  if (rnr_deadline_) return rnr_deadline_;  // no local ACK timeout while waiting it out
  return retransmit_deadline_;
}

void RcQp::complete_send_error(WcStatus status) {
  if (!send_queue_.empty()) {
    const SendWqe& wqe = send_queue_.front();
    cq_.push_back({wqe.wr.wr_id, is_write(wqe.wr.op) ? WcOpcode::kRdmaWrite : WcOpcode::kSend,
                   status, 0, false, 0});
    send_queue_.pop_front();
  }
  enter_error();
}

}  // namespace epic::soft
