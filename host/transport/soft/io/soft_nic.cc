#include "host/transport/soft/io/soft_nic.h"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <cstring>

#include "datapath/wire/layout.h"
#include "datapath/wire/parser.h"
#include "host/transport/soft/io/mono_clock.h"
#include "proto/vocab/addr.h"

namespace epic::soft::io {
namespace {

bool is_not_roce(wire::ParseError e) {
  using E = wire::ParseError;
  return e == E::kTruncatedEthernet || e == E::kTruncatedVlan || e == E::kNotIp ||
         e == E::kNotUdp || e == E::kNotRoceV2Port;
}

}  // namespace

Result<std::unique_ptr<SoftNic>> SoftNic::open(const SoftNicConfig& config) {
  using R = std::unique_ptr<SoftNic>;
  if (config.ipv4 == 0) return make_error<R>("the endpoint needs its own IPv4 address");
  if ((config.mac[0] & 1) != 0) {
    return make_error<R>("endpoint MAC " + vocab::format_mac(config.mac) + " is a multicast MAC");
  }
  auto port = AfPacketPort::open(config.ifname, config.loss);
  if (!port.ok()) return make_error<R>(port.error);
  return {R(new SoftNic(config, std::move(port.value))), ""};
}

SoftNic::SoftNic(const SoftNicConfig& config, std::unique_ptr<AfPacketPort> port)
    : config_(config),
      port_(std::move(port)),
      socket_(io_, port_->fd()),
      timer_(io_),
      arp_(config.mac, config.ipv4),
      rx_buf_(AfPacketPort::kMaxFrame) {
  if (config_.rx_burst == 0) config_.rx_burst = 1;
  arm_read();
}

SoftNic::~SoftNic() {
  try {
    boost::system::error_code ec;
    socket_.cancel(ec);
    (void)socket_.release();  // the port owns (and closes) the descriptor
    timer_.cancel();
  } catch (const boost::system::system_error&) {  // nothing left to clean up
  }
}

void SoftNic::attach(RcQp& qp) { qps_[qp.config().qpn] = &qp; }

void SoftNic::detach(uint32_t qpn) { qps_.erase(qpn); }

void SoftNic::arm_read() {
  socket_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [this](const boost::system::error_code& ec) {
                       if (ec == boost::asio::error::operation_aborted) return;
                       on_readable();
                       // A failed socket stays readable: stop rather than spin.
                       if (port_->rx_errno() == 0) {
                         arm_read();
                       } else {
                         failure_ = "receive on " + port_->info().name +
                                    " failed: " + std::strerror(port_->rx_errno());
                       }
                     });
}

void SoftNic::on_readable() {
  const uint64_t now = mono_now_ns();
  for (size_t i = 0; i < config_.rx_burst; ++i) {
    const size_t n = port_->recv(rx_buf_.data(), rx_buf_.size());
    if (n == 0) break;
    handle_frame(rx_buf_.data(), n, now);
  }
  flush_tx();
  arm_timer();
}

void SoftNic::handle_frame(const uint8_t* frame, size_t len, uint64_t now) {
  if (len >= wire::eth::kHeaderLen &&
      wire::load_be16(frame + wire::eth::kType) == wire::eth::kTypeArp) {
    auto m = parse_arp(frame, len);
    if (!m) return;
    ++counters_.rx_arp;
    if (auto reply = arp_.handle(*m)) {
      if (port_->send(reply->data(), reply->size(), false) == SendResult::kSent) ++counters_.tx_arp;
    }
    return;
  }
  if (len < wire::eth::kHeaderLen ||
      std::memcmp(frame + wire::eth::kDst, config_.mac.data(), 6) != 0) {
    ++counters_.rx_not_for_us;
    return;
  }
  const wire::ParseResult r = wire::parse(frame, len);
  if (!r.ok()) {
    ++counters_.parse_errors[static_cast<size_t>(r.error)];
    if (is_not_roce(r.error)) {
      ++counters_.rx_not_roce;
    } else {
      ++counters_.rx_malformed;
      if (r.error == wire::ParseError::kBadIcrc) ++counters_.rx_bad_icrc;
    }
    return;
  }
  const wire::PacketView& v = r.view;
  if (v.ip_version != wire::IpVersion::kV4 || v.ipv4_dst() != config_.ipv4) {
    ++counters_.rx_not_for_us;
    return;
  }
  auto it = qps_.find(v.dest_qp());
  if (it == qps_.end()) {
    ++counters_.rx_unknown_qp;
    return;
  }
  if (v.op->kind == wire::OpKind::kAck ? port_->drop_rx_ack() : port_->drop_rx_request()) {
    ++counters_.rx_loss_injected;
    return;
  }
  ++counters_.rx_roce;
  it->second->receive(v, now);
}

bool SoftNic::transmit(std::vector<uint8_t>& frame) {
  switch (port_->send(frame.data(), frame.size(), true)) {
    case SendResult::kSent:
      ++counters_.tx_roce;
      return true;
    case SendResult::kError:
      ++counters_.tx_errors;
      return true;  // lost, as on a wire; RC recovers it
    case SendResult::kWouldBlock:
      return false;
  }
  return false;
}

void SoftNic::flush_tx() {
  while (!backlog_.empty()) {
    if (!transmit(backlog_.front())) break;
    backlog_.pop_front();
  }
  if (backlog_.empty()) {
    const uint64_t now = mono_now_ns();
    // Round-robin one frame per QP so one busy QP cannot starve the others' ACKs.
    bool more = true;
    while (more && backlog_.empty()) {
      more = false;
      for (auto& [qpn, qp] : qps_) {
        auto f = qp->pop_tx(now);
        if (!f) continue;
        more = true;
        if (!transmit(*f)) {
          backlog_.push_back(std::move(*f));
          break;
        }
      }
    }
  }
  if (!backlog_.empty() && !write_wait_armed_) {
    write_wait_armed_ = true;
    socket_.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                       [this](const boost::system::error_code& ec) {
                         write_wait_armed_ = false;
                         if (ec == boost::asio::error::operation_aborted) return;
                         flush_tx();
                         arm_timer();
                       });
  }
}

void SoftNic::arm_timer() {
  std::optional<uint64_t> earliest;
  for (auto& [qpn, qp] : qps_) {
    if (auto d = qp->next_deadline()) earliest = earliest ? std::min(*earliest, *d) : *d;
  }
  if (earliest == timer_armed_at_) return;
  timer_armed_at_ = earliest;
  if (!earliest) {
    timer_.cancel();
    return;
  }
  timer_.expires_at(mono_time_point(*earliest));
  const uint64_t deadline = *earliest;
  timer_.async_wait([this, deadline](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted) return;
    on_timer(deadline);
  });
}

void SoftNic::on_timer(uint64_t deadline) {
  if (timer_armed_at_ != deadline) return;  // superseded
  timer_armed_at_.reset();
  const uint64_t now = mono_now_ns();
  for (auto& [qpn, qp] : qps_) {
    auto d = qp->next_deadline();
    if (d && *d <= now) qp->on_timer(now);
  }
  flush_tx();
  arm_timer();
}

void SoftNic::kick() {
  flush_tx();
  arm_timer();
}

bool SoftNic::run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) {
  const auto deadline = MonoClock::now() + timeout;
  kick();
  while (!done()) {
    if (!failure_.empty()) return false;
    const auto now = MonoClock::now();
    if (now >= deadline) return done();
    if (io_.stopped()) io_.restart();
    io_.run_one_for(std::min<MonoClock::duration>(deadline - now, std::chrono::milliseconds(50)));
  }
  return true;
}

void SoftNic::run_for(std::chrono::nanoseconds d) {
  (void)run_until([] { return false; }, d);
}

Result<vocab::MacAddr> SoftNic::resolve(uint32_t ipv4, std::chrono::milliseconds timeout,
                                        std::chrono::milliseconds retry) {
  const auto deadline = MonoClock::now() + timeout;
  int sent = 0;
  while (true) {
    if (auto mac = arp_.lookup(ipv4)) return {*mac, ""};
    const auto now = MonoClock::now();
    if (now >= deadline) break;
    if (!failure_.empty()) return make_error<vocab::MacAddr>("ARP: " + failure_);
    const ArpFrame req = arp_.request(ipv4);
    if (port_->send(req.data(), req.size(), false) == SendResult::kSent) {
      ++counters_.tx_arp;
      ++sent;
    }
    const auto wait = std::min<MonoClock::duration>(retry, deadline - now);
    (void)run_until([&] { return arp_.lookup(ipv4).has_value(); },
                    std::chrono::duration_cast<std::chrono::nanoseconds>(wait));
  }
  return make_error<vocab::MacAddr>(
      "ARP: no reply from " + vocab::format_ipv4(ipv4) + " on " + port_->info().name + " within " +
      std::to_string(timeout.count()) + " ms (" + std::to_string(sent) + " requests sent from " +
      vocab::format_ipv4(config_.ipv4) + " / " + vocab::format_mac(config_.mac) +
      "): is the peer up and on this link?");
}

}  // namespace epic::soft::io
