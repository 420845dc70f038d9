// RcQp responder half (IBA 9.7.4, 9.9): PSN classification against the
// expected PSN (in sequence / duplicate / out of sequence), opcode-sequence and
// length checks, placement of SEND payloads into posted receives and of RDMA
// WRITE payloads into registered memory, MSN, coalesced ACKs, NAKs and CNPs.
//
//   duplicate          -> not executed again; ACK of expected-1 (rxe does the same)
//   out of sequence    -> dropped; one NAK-sequence-error per expected PSN
//   no receive posted  -> RNR NAK, not executed (the requester retries)
//   invalid request    -> NAK invalid request; QP enters the error state (class D1)
//   bad rkey / range   -> NAK remote access error; QP enters the error state
#include <algorithm>
#include <cstring>

#include "host/transport/soft/rc_qp.h"
#include "proto/vocab/aeth.h"
#include "proto/vocab/psn.h"

namespace epic::soft {

namespace w = epic::wire;

bool RcQp::check_sequence(const w::OpcodeInfo& op, uint32_t payload) const {
  const MsgKind kind = op.kind == w::OpKind::kWrite ? MsgKind::kWrite : MsgKind::kSend;
  switch (op.position) {
    case w::Position::kFirst:
      return in_message_ == MsgKind::kNone && payload == config_.pmtu;
    case w::Position::kMiddle:
      return in_message_ == kind && payload == config_.pmtu;
    case w::Position::kLast:
      return in_message_ == kind && payload >= 1 && payload <= config_.pmtu;
    case w::Position::kOnly:
      return in_message_ == MsgKind::kNone && payload <= config_.pmtu;
    case w::Position::kNone:
      return false;
  }
  return false;
}

void RcQp::handle_request(const w::PacketView& pkt, uint64_t now_ns) {
  const w::OpcodeInfo& op = *pkt.op;
  const uint32_t psn = pkt.psn();
  if (pkt.ecn() == 3) {
    ++counters_.rx_ce_marked;
    send_cnp(now_ns);
  }

  const int32_t d = vocab::psn_diff(psn, epsn_);
  if (d < 0) {
    ++counters_.rx_request_duplicate;
    ack_pending_ = true;  // re-ACK, so a requester whose ACK was lost makes progress
    return;
  }
  if (d > 0) {
    ++counters_.rx_request_out_of_sequence;
    if (!nak_sent_) {
      send_nak(vocab::aeth::kNakPsnSequenceError, epsn_);
      nak_sent_ = true;
    }
    return;
  }

  // In sequence. Only SEND and RDMA WRITE are supported.
  const uint32_t payload = pkt.data_len();
  if ((op.kind != w::OpKind::kSend && op.kind != w::OpKind::kWrite) || op.has(w::kExtIeth) ||
      !check_sequence(op, payload)) {
    ++counters_.rx_request_invalid;
    send_nak(vocab::aeth::kNakInvalidRequest, psn);
    enter_error();
    return;
  }

  // Resources: a receive for SEND (at its first packet) and for the Immediate.
  const bool needs_recv = (op.kind == w::OpKind::kSend && op.starts_message()) ||
                          (op.kind == w::OpKind::kWrite && op.has(w::kExtImmDt));
  if (needs_recv && recv_queue_.empty()) {
    ++counters_.rx_request_rnr;
    send_nak(vocab::aeth::rnr_nak(config_.rnr_timer_code), psn);
    nak_sent_ = true;
    return;
  }

  if (op.kind == w::OpKind::kSend) {
    RecvWr& r = recv_queue_.front();
    if (uint64_t{recv_offset_} + payload > r.length) {
      ++counters_.rx_request_invalid;
      cq_.push_back({r.wr_id, WcOpcode::kRecv, WcStatus::kLocLenErr, 0, false, 0});
      recv_queue_.pop_front();
      send_nak(vocab::aeth::kNakInvalidRequest, psn);
      enter_error();
      return;
    }
    if (payload > 0) std::memcpy(r.data + recv_offset_, pkt.payload(), payload);
    recv_offset_ += payload;
  } else {
    if (op.has(w::kExtReth)) {
      const w::Reth reth = pkt.reth();
      const bool fits = std::any_of(mrs_.begin(), mrs_.end(), [&](const MemoryRegion& mr) {
        return mr.rkey == reth.rkey && reth.va >= mr.va &&
               reth.va + reth.dma_len <= mr.va + mr.length && reth.va + reth.dma_len >= reth.va;
      });
      // A zero-length RDMA WRITE checks no key (IBA 9.4.3.1); otherwise the range must be ours,
      // and an ONLY packet must carry exactly the announced length.
      const bool length_ok =
          op.position == w::Position::kOnly ? payload == reth.dma_len : reth.dma_len > payload;
      if (!length_ok) {
        ++counters_.rx_request_invalid;
        send_nak(vocab::aeth::kNakInvalidRequest, psn);
        enter_error();
        return;
      }
      if (reth.dma_len > 0 && !fits) {
        ++counters_.rx_request_access_error;
        send_nak(vocab::aeth::kNakRemoteAccessError, psn);
        enter_error();
        return;
      }
      write_va_ = reth.va;
      write_rkey_ = reth.rkey;
      write_remaining_ = reth.dma_len;
      write_total_ = reth.dma_len;
    }
    const bool ends = op.ends_message();
    if (payload > write_remaining_ || (ends && payload != write_remaining_)) {
      ++counters_.rx_request_invalid;  // packets disagree with the RETH length
      send_nak(vocab::aeth::kNakInvalidRequest, psn);
      enter_error();
      return;
    }
    if (payload > 0) {
      for (const MemoryRegion& mr : mrs_) {
        if (mr.rkey == write_rkey_ && write_va_ >= mr.va &&
            write_va_ + payload <= mr.va + mr.length) {
          std::memcpy(mr.data + (write_va_ - mr.va), pkt.payload(), payload);
          break;
        }
      }
    }
    write_va_ += payload;
    write_remaining_ -= payload;
  }

  // Executed.
  ++counters_.rx_request_accepted;
  epsn_ = vocab::psn_add(epsn_, 1);
  nak_sent_ = false;
  if (op.ends_message()) {
    msn_ = (msn_ + 1) & vocab::kPsnMask;
    in_message_ = MsgKind::kNone;
    const bool imm = op.has(w::kExtImmDt);
    if (op.kind == w::OpKind::kSend) {
      const RecvWr r = recv_queue_.front();
      recv_queue_.pop_front();
      cq_.push_back(
          {r.wr_id, WcOpcode::kRecv, WcStatus::kSuccess, recv_offset_, imm, imm ? pkt.immdt() : 0});
      recv_offset_ = 0;
    } else if (imm) {
      const RecvWr r = recv_queue_.front();
      recv_queue_.pop_front();
      cq_.push_back({r.wr_id, WcOpcode::kRecvRdmaWithImm, WcStatus::kSuccess, write_total_, true,
                     pkt.immdt()});
    }
  } else {
    in_message_ = op.kind == w::OpKind::kWrite ? MsgKind::kWrite : MsgKind::kSend;
  }
  if (pkt.ack_req()) ack_pending_ = true;
}

void RcQp::send_nak(uint8_t syndrome, uint32_t psn) {
  // A NAK acknowledges everything before `psn`: it replaces a pending ACK.
  ack_pending_ = false;
  w::RocePacket p = header(w::op::kAck, psn);
  p.aeth = {syndrome, msn_};
  push_frame(std::move(p));
  if (syndrome == vocab::aeth::kNakPsnSequenceError) {
    ++counters_.tx_nak_seq;
  } else if (vocab::aeth::kind(syndrome) == vocab::aeth::Kind::kRnrNak) {
    ++counters_.tx_rnr_naks;
  } else {
    ++counters_.tx_nak_other;
  }
}

void RcQp::send_cnp(uint64_t now_ns) {
  if (cnp_sent_ && now_ns - last_cnp_ns_ < config_.cnp_interval_ns) return;
  cnp_sent_ = true;
  last_cnp_ns_ = now_ns;
  w::RocePacket p = header(w::op::kCnp, 0);
  p.tos = static_cast<uint8_t>(p.tos & 0xFC);  // a CNP is not ECN-capable
  p.becn = true;
  push_frame(std::move(p));
  ++counters_.tx_cnps;
}

}  // namespace epic::soft
