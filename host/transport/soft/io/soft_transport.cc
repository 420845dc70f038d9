#include "host/transport/soft/io/soft_transport.h"

#include "host/transport/soft/soft_endpoint.h"
#include "proto/vocab/addr.h"

namespace epic::soft::io {

Result<std::unique_ptr<SoftTransport>> SoftTransport::open(const SoftTransportConfig& config) {
  auto nic = SoftNic::open(config.nic);
  if (!nic.ok()) return {nullptr, nic.error};
  QpConfig q = config.qp;
  if (q.path.local_ipv4 == 0) q.path.local_ipv4 = config.nic.ipv4;
  if (q.path.local_mac == vocab::MacAddr{}) q.path.local_mac = config.nic.mac;
  auto mac = nic.value->resolve(q.path.remote_ipv4, config.arp_timeout);
  if (!mac.ok()) {
    return {nullptr, mac.error + " (is incd running, with " +
                         vocab::format_ipv4(q.path.remote_ipv4) + " among its inc_addresses?)"};
  }
  q.path.remote_mac = mac.value;
  return {std::unique_ptr<SoftTransport>(
              new SoftTransport(std::move(nic.value), std::make_unique<RcQp>(q))),
          ""};
}

SoftTransport::SoftTransport(std::unique_ptr<SoftNic> nic, std::unique_ptr<RcQp> qp)
    : nic_(std::move(nic)), qp_(std::move(qp)) {
  nic_->attach(*qp_);
}

SoftTransport::~SoftTransport() { nic_->detach(qp_->config().qpn); }

std::string SoftTransport::describe() const {
  const NicCounters& n = nic_->counters();
  return SoftQpEndpoint::describe_qp(*qp_) + " on " + nic_->config().ifname +
         " (rx_roce=" + std::to_string(n.rx_roce) + " tx_roce=" + std::to_string(n.tx_roce) +
         " rx_bad_icrc=" + std::to_string(n.rx_bad_icrc) + ")";
}

bool SoftTransport::run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) {
  // The predicate may post work (deferred data): transmit it right away.
  return nic_->run_until(
      [&] {
        const bool d = done();
        nic_->kick();
        return d;
      },
      timeout);
}

}  // namespace epic::soft::io
