// Session: one inc-rc-peer endpoint — the SoftNic on the interface (our own
// MAC/IP, ARP, the Asio loop), one RcQp once the peer's QPN/PSN/GID are known,
// and bounded waits for its completions. The modes (pingpong, xfer) are
// sequential programs on top of it; every wait runs the loop, so the QP keeps
// acknowledging and retransmitting meanwhile.
// Thread-safety: none; single-threaded by design.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "host/transport/soft/io/soft_nic.h"
#include "host/transport/soft/io/status.h"
#include "host/transport/soft/rc_qp.h"
#include "tools/inc-rc-peer/options.h"
#include "tools/inc-rc-peer/pingpong_wire.h"

namespace epic::tools::rc_peer {

namespace io = epic::soft::io;

struct RemoteQp {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  Gid gid{};
};

class Session {
 public:
  static io::Result<std::unique_ptr<Session>> open(const Options& o);
  ~Session();

  io::SoftNic& nic() { return *nic_; }
  const Options& options() const { return o_; }
  uint32_t local_psn() const { return psn_; }
  Gid local_gid() const { return gid_from_ipv4(o_.ip); }
  std::chrono::milliseconds wait_timeout() const { return std::chrono::seconds(o_.timeout_s); }
  std::chrono::milliseconds connect_timeout() const {
    return std::chrono::seconds(o_.connect_timeout_s);
  }

  // Resolves the peer's MAC (ARP for the IPv4 address in its GID) and creates
  // the QP. Fails for a non-IPv4-mapped GID or without an ARP reply.
  io::Status connect(const RemoteQp& remote);
  bool connected() const { return qp_ != nullptr; }
  soft::RcQp& qp() { return *qp_; }

  // post_send/post_recv, then kick the loop so the frames leave now.
  io::Status post_send(const soft::SendWr& wr);
  io::Status post_recv(const soft::RecvWr& wr);

  // The next completion for which match() is true (others stay queued), within
  // the session timeout; fails on timeout or when the QP enters the error state.
  io::Result<soft::Completion> wait_completion(
      const std::function<bool(const soft::Completion&)>& match, std::string_view what);
  io::Result<soft::Completion> wait_send(std::string_view what);
  io::Result<soft::Completion> wait_recv(std::string_view what);

  // Keeps the loop running (e.g. so our last ACKs can be repeated if lost).
  void linger(std::chrono::milliseconds d) { nic_->run_for(d); }

  // "retransmits=.. timeouts=.. ..." from our QP and NIC counters.
  std::string counters_text() const;
  uint64_t retransmits() const;

 private:
  explicit Session(const Options& o) : o_(o) {}
  void drain_cq();

  Options o_;
  uint32_t psn_ = 0;
  std::unique_ptr<io::SoftNic> nic_;
  std::unique_ptr<soft::RcQp> qp_;
  std::deque<soft::Completion> cq_;
};

}  // namespace epic::tools::rc_peer
