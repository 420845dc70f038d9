#include "tools/inc-rc-peer/session.h"

#include <cstdio>
#include <random>
#include <utility>

#include "proto/vocab/addr.h"
#include "proto/vocab/psn.h"

namespace epic::tools::rc_peer {

io::Result<std::unique_ptr<Session>> Session::open(const Options& o) {
  using R = std::unique_ptr<Session>;
  std::unique_ptr<Session> s(new Session(o));
  std::mt19937_64 rng(o.seed * 0x2545F4914F6CDD1Dull + 17);
  s->psn_ = o.psn ? *o.psn : static_cast<uint32_t>(rng() & vocab::kPsnMask);
  io::SoftNicConfig nc;
  nc.ifname = o.iface;
  nc.mac = o.mac;
  nc.ipv4 = o.ip;
  nc.loss.tx_rate = o.tx_loss;
  nc.loss.rx_ack_rate = o.ack_loss;
  nc.loss.rx_request_rate = o.rx_loss;
  nc.loss.seed = o.seed;
  auto nic = io::SoftNic::open(nc);
  if (!nic.ok()) return io::make_error<R>(nic.error);
  s->nic_ = std::move(nic.value);
  return {std::move(s), ""};
}

Session::~Session() {
  if (qp_ && nic_) nic_->detach(qp_->config().qpn);
}

io::Status Session::connect(const RemoteQp& remote) {
  auto ip = ipv4_from_gid(remote.gid);
  if (!ip) {
    return io::Status::failure("the peer's GID " + format_gid(remote.gid) +
                               " is not an IPv4-mapped RoCEv2 GID (use the peer's GID index "
                               "of type RoCE v2 for its IPv4 address, e.g. ibv_rc_pingpong -g 1)");
  }
  auto mac = nic_->resolve(*ip, std::chrono::milliseconds(o_.arp_timeout_ms));
  if (!mac.ok()) return io::Status::failure(mac.error);
  soft::QpConfig c;
  c.qpn = o_.qpn;
  c.remote_qpn = remote.qpn;
  c.sq_psn = psn_;
  c.rq_psn = remote.psn;
  c.pmtu = o_.mtu;
  c.max_outstanding = o_.window;
  c.retransmit_timeout_ns = uint64_t{o_.rto_ms} * 1'000'000;
  c.retry_count = o_.retry;
  c.path.local_mac = o_.mac;
  c.path.remote_mac = mac.value;
  c.path.local_ipv4 = o_.ip;
  c.path.remote_ipv4 = *ip;
  c.path.udp_src_port = o_.udp_sport;
  qp_ = std::make_unique<soft::RcQp>(c);
  nic_->attach(*qp_);
  if (o_.verbose) {
    std::printf("inc-rc-peer: QP 0x%06x -> 0x%06x at %s (%s), sq_psn 0x%06x rq_psn 0x%06x\n", c.qpn,
                c.remote_qpn, vocab::format_ipv4(*ip).c_str(), vocab::format_mac(mac.value).c_str(),
                c.sq_psn, c.rq_psn);
  }
  return io::Status::success();
}

io::Status Session::post_send(const soft::SendWr& wr) {
  if (!qp_->post_send(wr)) {
    return io::Status::failure("post_send refused (send queue full, QP in error or bad request)");
  }
  nic_->kick();
  return io::Status::success();
}

io::Status Session::post_recv(const soft::RecvWr& wr) {
  if (!qp_->post_recv(wr)) return io::Status::failure("post_recv refused");
  nic_->kick();
  return io::Status::success();
}

void Session::drain_cq() {
  while (auto c = qp_->poll_cq()) cq_.push_back(*c);
}

io::Result<soft::Completion> Session::wait_completion(
    const std::function<bool(const soft::Completion&)>& match, std::string_view what) {
  using R = soft::Completion;
  std::optional<soft::Completion> found;
  auto take = [&] {
    drain_cq();
    for (auto it = cq_.begin(); it != cq_.end(); ++it) {
      if (it->status != soft::WcStatus::kSuccess || match(*it)) {
        found = *it;
        cq_.erase(it);
        return true;
      }
    }
    return qp_->state() == soft::QpState::kError;
  };
  nic_->run_until(take, wait_timeout());
  if (!found) {
    if (qp_->state() == soft::QpState::kError) {
      return io::make_error<R>("the QP is in the error state while waiting for " +
                               std::string(what));
    }
    if (!nic_->failure().empty()) {
      return io::make_error<R>(nic_->failure() + " while waiting for " + std::string(what));
    }
    return io::make_error<R>("no completion for " + std::string(what) + " within " +
                             std::to_string(o_.timeout_s) + " s (" + counters_text() + ")");
  }
  if (found->status != soft::WcStatus::kSuccess) {
    return io::make_error<R>("completion wr_id " + std::to_string(found->wr_id) + " failed with " +
                             std::string(soft::to_string(found->status)) + " while waiting for " +
                             std::string(what));
  }
  return {*found, ""};
}

io::Result<soft::Completion> Session::wait_send(std::string_view what) {
  return wait_completion(
      [](const soft::Completion& c) {
        return c.opcode == soft::WcOpcode::kSend || c.opcode == soft::WcOpcode::kRdmaWrite;
      },
      what);
}

io::Result<soft::Completion> Session::wait_recv(std::string_view what) {
  return wait_completion(
      [](const soft::Completion& c) {
        return c.opcode == soft::WcOpcode::kRecv || c.opcode == soft::WcOpcode::kRecvRdmaWithImm;
      },
      what);
}

uint64_t Session::retransmits() const { return qp_ ? qp_->counters().tx_retransmits : 0; }

std::string Session::counters_text() const {
  const io::NicCounters& n = nic_->counters();
  const io::PortCounters& p = nic_->port_counters();
  const soft::QpCounters q = qp_ ? qp_->counters() : soft::QpCounters{};
  const std::pair<const char*, uint64_t> fields[] = {
      {"tx_packets", q.tx_packets},
      {"retransmits", q.tx_retransmits},
      {"timeouts", q.timeouts},
      {"tx_acks", q.tx_acks},
      {"tx_nak_seq", q.tx_nak_seq},
      {"tx_rnr_nak", q.tx_rnr_naks},
      {"rx_packets", q.rx_packets},
      {"rx_accepted", q.rx_request_accepted},
      {"rx_duplicate", q.rx_request_duplicate},
      {"rx_out_of_seq", q.rx_request_out_of_sequence},
      {"rx_invalid", q.rx_request_invalid + q.rx_request_access_error},
      {"rx_ack", q.rx_ack},
      {"rx_ack_stale", q.rx_ack_stale},
      {"rx_nak_seq", q.rx_nak_seq},
      {"rx_rnr_nak", q.rx_rnr_nak},
      {"tx_loss_injected", p.tx_loss_injected},
      {"ack_loss_injected", p.rx_ack_loss_injected},
      {"rx_loss_injected", p.rx_request_loss_injected},
      {"rx_bad_icrc", n.rx_bad_icrc},
      {"rx_malformed", n.rx_malformed},
      {"rx_unknown_qp", n.rx_unknown_qp},
      {"tx_errors", n.tx_errors},
      {"arp_answered", nic_->arp_requests_answered()},
  };
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += ' ';
    out += name;
    out += '=';
    out += std::to_string(value);
  }
  return out;
}

}  // namespace epic::tools::rc_peer
