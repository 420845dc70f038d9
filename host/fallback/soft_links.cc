// RingLinks on the soft transport: one SoftNic, two RcQps.
#include <algorithm>
#include <optional>

#include "host/fallback/ring_links.h"
#include "host/transport/soft/io/soft_nic.h"
#include "host/transport/soft/rc_qp.h"
#include "host/transport/soft/soft_endpoint.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/psn.h"

namespace epic::host::fallback {

namespace {

constexpr uint8_t kRetries = 255;

class SoftLinks : public RingLinks {
 public:
  SoftLinks(const RingOptions& o, std::unique_ptr<soft::io::SoftNic> nic)
      : options_(o), nic_(std::move(nic)) {}
  ~SoftLinks() override {
    if (left_) nic_->detach(left_->config().qpn);
    if (right_) nic_->detach(right_->config().qpn);
  }

  uint32_t qpn_base() const override { return options_.soft_qpn_base; }

  soft::io::Status connect(const RingMember& left, const RingMember& right) override {
    auto left_mac = mac_of(left);
    if (!left_mac.ok()) return soft::io::Status::failure(left_mac.error);
    auto right_mac = mac_of(right);
    if (!right_mac.ok()) return soft::io::Status::failure(right_mac.error);
    left_.emplace(qp_config(qpn_base(), left, left.qpn_base + 1, left_mac.value));
    right_.emplace(qp_config(qpn_base() + 1, right, right.qpn_base, right_mac.value));
    nic_->attach(*left_);
    nic_->attach(*right_);
    left_ep_.emplace(*left_);
    right_ep_.emplace(*right_);
    return soft::io::Status::success();
  }

  Endpoint& to_right() override { return *right_ep_; }
  Endpoint& from_left() override { return *left_ep_; }

  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) override {
    // done() may post work: transmit it right away.
    return nic_->run_until(
        [&] {
          const bool d = done();
          nic_->kick();
          return d;
        },
        timeout);
  }

  std::string failure() const override { return nic_->failure(); }

 private:
  soft::io::Result<vocab::MacAddr> mac_of(const RingMember& m) {
    if (m.mac != vocab::MacAddr{}) return {m.mac, ""};
    auto mac = nic_->resolve(m.ipv4, options_.arp_timeout);
    if (!mac.ok()) {
      mac.error += " (the neighbour's soft endpoint " + vocab::format_ipv4(m.ipv4) +
                   " answers ARP once its HostCollectives is created)";
    }
    return mac;
  }

  soft::QpConfig qp_config(uint32_t qpn, const RingMember& peer, uint32_t peer_qpn,
                           const vocab::MacAddr& peer_mac) const {
    soft::QpConfig q;
    q.qpn = qpn;
    q.remote_qpn = peer_qpn;
    q.sq_psn = q.rq_psn = options_.initial_psn & vocab::kPsnMask;
    q.pmtu = options_.pmtu;
    q.max_outstanding = options_.max_outstanding;
    // No NIC acknowledges for a rank that is outside the library (computing, or
    // already returned from the collective whose last ACK was lost): its
    // neighbour's retransmissions must outlast the silence up to the step
    // timeout instead of exhausting 7 retries in ~0.15 s.
    q.retry_count = kRetries;
    q.retransmit_timeout_ns = static_cast<uint64_t>(std::clamp<int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.timeout).count() / kRetries,
        20'000'000, 1'000'000'000));
    q.path.local_mac = options_.mac;
    q.path.local_ipv4 = options_.ipv4;
    q.path.remote_mac = peer_mac;
    q.path.remote_ipv4 = peer.ipv4;
    q.path.udp_src_port = static_cast<uint16_t>(0xC000 | (qpn & 0x3FFF));
    return q;
  }

  RingOptions options_;
  std::unique_ptr<soft::io::SoftNic> nic_;
  std::optional<soft::RcQp> left_, right_;
  std::optional<soft::SoftQpEndpoint> left_ep_, right_ep_;
};

}  // namespace

std::unique_ptr<RingLinks> open_soft_links(const RingOptions& o, std::string& error) {
  soft::io::SoftNicConfig c;
  c.ifname = o.ifname;
  c.mac = o.mac;
  c.ipv4 = o.ipv4;
  auto nic = soft::io::SoftNic::open(c);
  if (!nic.ok()) {
    error = nic.error;
    return nullptr;
  }
  return std::make_unique<SoftLinks>(o, std::move(nic.value));
}

}  // namespace epic::host::fallback
