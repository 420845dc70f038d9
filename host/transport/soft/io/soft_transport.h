// SoftTransport: a rank's host::Transport on a machine without an RDMA NIC —
// the user-space RC endpoint (RcQp) on a Linux interface through SoftNic
// (AF_PACKET, its own MAC and IPv4 address, ARP). open() resolves the
// switch's MAC by ARP, so it fails clearly when no incd answers for the
// switch address. Thread-safety: none; one thread owns it.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "host/transport/endpoint.h"
#include "host/transport/soft/io/soft_nic.h"
#include "host/transport/soft/io/status.h"
#include "host/transport/soft/rc_qp.h"

namespace epic::soft::io {

struct SoftTransportConfig {
  SoftNicConfig nic;  // interface, the endpoint's own MAC and IPv4 address, loss
  QpConfig qp;        // path.remote_mac is filled in by ARP; the other path fields
                      // default to the NIC's identity when left zero
  std::chrono::milliseconds arp_timeout{3000};
};

class SoftTransport : public host::Transport {
 public:
  static Result<std::unique_ptr<SoftTransport>> open(const SoftTransportConfig& config);
  ~SoftTransport() override;

  std::string_view kind() const override { return "soft"; }
  uint16_t pmtu() const override { return qp_->config().pmtu; }
  bool post_send(const SendWr& wr) override { return qp_->post_send(wr); }
  bool post_recv(const RecvWr& wr) override { return qp_->post_recv(wr); }
  std::optional<Completion> poll_cq() override { return qp_->poll_cq(); }
  void flush() override { qp_->flush(); }
  std::string describe() const override;
  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) override;
  const std::string& failure() const override { return nic_->failure(); }
  uint32_t qpn() const override { return qp_->config().qpn; }

  const RcQp& qp() const { return *qp_; }
  const SoftNic& nic() const { return *nic_; }

 private:
  SoftTransport(std::unique_ptr<SoftNic> nic, std::unique_ptr<RcQp> qp);
  std::unique_ptr<SoftNic> nic_;
  std::unique_ptr<RcQp> qp_;
};

}  // namespace epic::soft::io
