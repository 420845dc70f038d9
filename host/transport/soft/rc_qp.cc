// RcQp: construction, verbs entry points, frame output and the receive
// dispatch. The requester half is in rc_requester.cc, the responder half in
// rc_responder.cc.
#include "host/transport/soft/rc_qp.h"

#include <stdexcept>
#include <string>

#include "proto/vocab/aeth.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/psn.h"

namespace epic::soft {

namespace w = epic::wire;

RcQp::RcQp(const QpConfig& config) : config_(config) {
  const uint16_t m = config.pmtu;
  if (!vocab::valid_pmtu(m)) {
    throw std::invalid_argument("pmtu must be one of " + std::string(vocab::kPmtuChoices) +
                                ", not " + std::to_string(m));
  }
  if (config.max_outstanding == 0 || config.max_outstanding >= vocab::kPsnHalf) {
    throw std::invalid_argument("max_outstanding must be in [1, 2^23)");
  }
  if (config.ack_req_every == 0) throw std::invalid_argument("ack_req_every must be >= 1");
  config_.qpn &= vocab::kPsnMask;
  config_.remote_qpn &= vocab::kPsnMask;
  next_psn_ = unacked_psn_ = max_sent_psn_ = config_.sq_psn & vocab::kPsnMask;
  epsn_ = config_.rq_psn & vocab::kPsnMask;
  retries_left_ = config_.retry_count;
  rnr_retries_left_ = config_.rnr_retry;
}

uint32_t RcQp::packets_for(uint32_t length) const {
  return length == 0 ? 1 : (length + config_.pmtu - 1) / config_.pmtu;
}

bool RcQp::post_send(const SendWr& wr) {
  if (state_ != QpState::kRts || send_queue_.size() >= config_.max_send_wr) return false;
  if (wr.length > 0 && wr.data == nullptr) return false;
  if (wr.length > (1u << 31)) return false;  // IBA message size limit
  SendWqe wqe;
  wqe.wr = wr;
  wqe.npackets = packets_for(wr.length);
  // PSNs are assigned in posting order, right after the previous WQE's.
  wqe.first_psn = send_queue_.empty()
                      ? next_psn_
                      : vocab::psn_add(send_queue_.back().first_psn, send_queue_.back().npackets);
  send_queue_.push_back(wqe);
  return true;
}

bool RcQp::post_recv(const RecvWr& wr) {
  if (state_ != QpState::kRts || recv_queue_.size() >= config_.max_recv_wr) return false;
  if (wr.length > 0 && wr.data == nullptr) return false;
  recv_queue_.push_back(wr);
  return true;
}

void RcQp::register_mr(const MemoryRegion& mr) { mrs_.push_back(mr); }

std::optional<Completion> RcQp::poll_cq() {
  if (cq_.empty()) return std::nullopt;
  Completion c = cq_.front();
  cq_.pop_front();
  return c;
}

void RcQp::receive(const w::PacketView& pkt, uint64_t now_ns) {
  ++counters_.rx_packets;
  if (pkt.dest_qp() != config_.qpn) {
    ++counters_.rx_wrong_qp;
    return;
  }
  if (state_ == QpState::kError) {
    ++counters_.rx_in_error_state;
    return;
  }
  const w::OpcodeInfo& op = *pkt.op;
  switch (op.kind) {
    case w::OpKind::kAck:
      handle_ack(pkt, now_ns);
      return;
    case w::OpKind::kCnp:
      ++counters_.rx_cnp;  // congestion control is not implemented: counted only
      return;
    case w::OpKind::kReadResponse:
    case w::OpKind::kAtomicAck:
      ++counters_.rx_ack_stale;  // we never issue READs or atomics
      return;
    default:
      break;
  }
  if (op.transport != w::Transport::kRc) {
    ++counters_.rx_request_invalid;  // UC/UD opcode on an RC QP: silently dropped (IBA 9.6.1)
    return;
  }
  handle_request(pkt, now_ns);
}

std::optional<std::vector<uint8_t>> RcQp::pop_tx(uint64_t now_ns) {
  if (tx_.empty()) {
    // One cumulative ACK for everything received since the last drain.
    if (ack_pending_ && state_ == QpState::kRts) {
      w::RocePacket p = header(w::op::kAck, vocab::psn_add(epsn_, -1));
      p.aeth = {vocab::aeth::kAckUnlimitedCredits, msn_};
      push_frame(std::move(p));
      ++counters_.tx_acks;
    }
    ack_pending_ = false;
    fill_window(now_ns);
  }
  if (tx_.empty()) return std::nullopt;
  std::vector<uint8_t> f = std::move(tx_.front());
  tx_.pop_front();
  return f;
}

w::RocePacket RcQp::header(uint8_t opcode, uint32_t psn) const {
  const PathConfig& path = config_.path;
  w::RocePacket p;
  p.eth_dst = path.remote_mac;
  p.eth_src = path.local_mac;
  p.ip_version = path.ip_version;
  p.ipv4_src = path.local_ipv4;
  p.ipv4_dst = path.remote_ipv4;
  p.ipv6_src = path.local_ipv6;
  p.ipv6_dst = path.remote_ipv6;
  p.tos = path.tos;
  p.ttl = path.ttl;
  p.udp_src_port = path.udp_src_port;
  p.opcode = opcode;
  p.pkey = config_.pkey;
  p.dest_qp = config_.remote_qpn;
  p.psn = psn & vocab::kPsnMask;
  return p;
}

void RcQp::push_frame(w::RocePacket&& p) {
  tx_.push_back(w::encode(p));
  ++counters_.tx_packets;
}

void RcQp::enter_error() {
  if (state_ == QpState::kError) return;
  state_ = QpState::kError;
  for (const SendWqe& wqe : send_queue_) {
    const WcOpcode opc = (wqe.wr.op == SendOp::kRdmaWrite || wqe.wr.op == SendOp::kRdmaWriteWithImm)
                             ? WcOpcode::kRdmaWrite
                             : WcOpcode::kSend;
    cq_.push_back({wqe.wr.wr_id, opc, WcStatus::kWrFlushErr, 0, false, 0});
  }
  send_queue_.clear();
  next_wqe_ = 0;
  for (const RecvWr& r : recv_queue_) {
    cq_.push_back({r.wr_id, WcOpcode::kRecv, WcStatus::kWrFlushErr, 0, false, 0});
  }
  recv_queue_.clear();
  retransmit_deadline_.reset();
  rnr_deadline_.reset();
  ack_pending_ = false;
}

}  // namespace epic::soft
