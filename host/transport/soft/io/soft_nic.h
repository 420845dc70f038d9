// SoftNic: the network side of user-space RoCEv2 endpoints on one Linux
// interface — what a RoCE NIC does around its queue pairs. It owns the
// endpoint's identity (its own MAC and IPv4 address, distinct from the
// kernel's on that interface), an AfPacketPort, an ArpAgent that answers for
// that address and resolves peers, and the Boost.Asio event loop that drives
// the attached RcQps:
//
//   readable  -> a burst of frames: ARP to the agent; RoCEv2 frames for our
//                MAC and IP parsed with wire::parse (ICRC verified) and
//                delivered to the RcQp named by the BTH destination QP;
//                then every QP's pop_tx() drained to the wire
//   timer     -> RcQp::on_timer at the earliest RcQp::next_deadline()
//   kick()    -> drain after the caller posted work
//
// Callers write sequential code and wait with run_until(predicate, timeout):
// the loop runs (QPs keep retransmitting and acknowledging) until the
// predicate holds or the bounded time runs out. Other Asio users (the TCP
// out-of-band exchange, TcpChannel) share io().
// Thread-safety: none; everything runs on the thread that calls run_until().
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datapath/wire/parse_error.h"
#include "host/transport/soft/io/af_packet_port.h"
#include "host/transport/soft/io/arp.h"
#include "host/transport/soft/io/status.h"
#include "host/transport/soft/rc_qp.h"

namespace epic::soft::io {

struct SoftNicConfig {
  std::string ifname;
  vocab::MacAddr mac{};  // the endpoint's own MAC
  uint32_t ipv4 = 0;     // the endpoint's own IPv4 address (host order), not the kernel's
  LossConfig loss;
  size_t rx_burst = 64;  // frames read per readiness before transmitting
};

struct NicCounters {
  uint64_t rx_arp = 0;
  uint64_t rx_roce = 0;        // delivered to a QP
  uint64_t rx_not_for_us = 0;  // another destination MAC or IP (e.g. the kernel's traffic)
  uint64_t rx_not_roce = 0;    // not IPv4/IPv6 UDP 4791
  uint64_t rx_malformed = 0;   // RoCEv2 rejected by the parser (bad ICRC included)
  uint64_t rx_bad_icrc = 0;
  uint64_t rx_unknown_qp = 0;
  uint64_t rx_loss_injected = 0;  // ACKs and requests dropped by the port's LossInjector
  uint64_t tx_roce = 0;           // handed to the port (injected loss included)
  uint64_t tx_arp = 0;
  uint64_t tx_errors = 0;  // frames the port failed to send
  std::array<uint64_t, wire::kParseErrorCount> parse_errors{};
};

class SoftNic {
 public:
  static Result<std::unique_ptr<SoftNic>> open(const SoftNicConfig& config);
  ~SoftNic();
  SoftNic(const SoftNic&) = delete;
  SoftNic& operator=(const SoftNic&) = delete;

  boost::asio::io_context& io() { return io_; }
  const SoftNicConfig& config() const { return config_; }
  const PortInfo& port_info() const { return port_->info(); }

  // Routes frames whose BTH destination QP is qp.config().qpn to `qp`, which
  // must outlive its attachment (detach before destroying it).
  void attach(RcQp& qp);
  void detach(uint32_t qpn);

  // MAC of `ipv4` by ARP: a request every `retry` until a reply or `timeout`.
  Result<vocab::MacAddr> resolve(uint32_t ipv4, std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds retry = std::chrono::milliseconds(200));

  // Transmits what the QPs have queued and re-arms the timer; call after
  // post_send()/post_recv() outside the loop's own handlers.
  void kick();
  // Runs the loop until done() is true (checked before and after every
  // handler), `timeout` passed or the port failed (failure()); returns done().
  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout);
  // Runs the loop for `d` (e.g. to let final ACKs out).
  void run_for(std::chrono::nanoseconds d);

  // Why the port stopped working ("" while it works), e.g. the interface went down.
  const std::string& failure() const { return failure_; }

  const NicCounters& counters() const { return counters_; }
  const PortCounters& port_counters() const { return port_->counters(); }
  uint64_t kernel_rx_drops() const { return port_->kernel_rx_drops(); }
  uint64_t arp_requests_answered() const { return arp_.requests_answered(); }

 private:
  SoftNic(const SoftNicConfig& config, std::unique_ptr<AfPacketPort> port);

  void arm_read();
  void on_readable();
  void handle_frame(const uint8_t* frame, size_t len, uint64_t now);
  void flush_tx();
  bool transmit(std::vector<uint8_t>& frame);  // false: would block, keep it
  void arm_timer();
  void on_timer(uint64_t deadline);

  SoftNicConfig config_;
  boost::asio::io_context io_;
  std::unique_ptr<AfPacketPort> port_;
  boost::asio::posix::stream_descriptor socket_;
  boost::asio::steady_timer timer_;
  std::optional<uint64_t> timer_armed_at_;
  bool write_wait_armed_ = false;
  ArpAgent arp_;
  std::map<uint32_t, RcQp*> qps_;
  std::deque<std::vector<uint8_t>> backlog_;  // popped from a QP, not yet accepted by the port
  std::vector<uint8_t> rx_buf_;
  NicCounters counters_;
  std::string failure_;
};

}  // namespace epic::soft::io
