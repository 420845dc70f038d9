#include "host/transport/open.h"

#include <algorithm>

#include "datapath/wire/addr.h"
#include "host/transport/soft/io/soft_transport.h"
#ifdef EPIC_HAVE_VERBS
#include "host/transport/verbs/verbs_transport.h"
#endif

namespace epic::host {

namespace {

bool valid_pmtu(uint16_t m) { return m == 256 || m == 512 || m == 1024 || m == 2048 || m == 4096; }

soft::io::Result<std::unique_ptr<Transport>> open_soft(const TransportOptions& o) {
  soft::io::SoftTransportConfig c;
  c.nic.ifname = o.iface;
  c.nic.mac = o.mac;
  c.nic.ipv4 = o.ip;
  c.nic.loss = o.loss;
  c.qp.qpn = o.qpn;
  c.qp.remote_qpn = o.switch_qpn;
  c.qp.sq_psn = c.qp.rq_psn = o.initial_psn;  // every rank and the switch start at the group's PSN
  c.qp.pmtu = o.pmtu;
  c.qp.max_outstanding = o.window;
  c.qp.retransmit_timeout_ns = uint64_t{o.retransmit_timeout_us} * 1000;
  c.qp.retry_count = o.retry_count;
  c.qp.rnr_retry = 7;  // infinite: the switch answers RNR NAK while other ranks are slow
  c.qp.max_send_wr = o.max_send_wr;
  c.qp.max_recv_wr = o.max_recv_wr;
  c.qp.path.remote_ipv4 = o.switch_ip;
  c.qp.path.udp_src_port = o.udp_sport;
  c.arp_timeout = o.arp_timeout;
  auto t = soft::io::SoftTransport::open(c);
  if (!t.ok()) return {nullptr, "soft transport on " + o.iface + ": " + t.error};
  return {std::move(t.value), ""};
}

soft::io::Result<std::unique_ptr<Transport>> open_verbs(const TransportOptions& o) {
#ifndef EPIC_HAVE_VERBS
  (void)o;
  return {nullptr,
          "this libinc was built without libibverbs (apt-get install libibverbs-dev, "
          "then rebuild): use INC_TRANSPORT=soft"};
#else
  verbs::VerbsConfig c;
  c.device = o.device;
  c.port = o.ib_port;
  c.gid_index = o.gid_index;
  c.local_ipv4 = o.ip;
  c.remote_ipv4 = o.switch_ip;
  c.remote_qpn = o.switch_qpn;
  c.sq_psn = c.rq_psn = o.initial_psn;
  c.pmtu = o.pmtu;
  c.max_outstanding = o.window;
  c.max_send_wr = o.max_send_wr;
  c.max_recv_wr = o.max_recv_wr;
  c.timeout_code = o.timeout_code;
  c.retry_count = o.retry_count;
  c.rnr_retry = 7;
  auto t = verbs::VerbsTransport::open(c);
  if (!t.ok()) return {nullptr, "verbs transport: " + t.error};
  return {std::move(t.value), ""};
#endif
}

}  // namespace

bool verbs_device_present() {
#ifdef EPIC_HAVE_VERBS
  return !verbs::list_devices().empty();
#else
  return false;
#endif
}

std::string validate(const TransportOptions& o) {
  if (o.kind != "soft" && o.kind != "verbs" && o.kind != "auto") {
    return "transport '" + o.kind + "' is not one of soft, verbs, auto";
  }
  if (o.switch_ip == 0) return "the switch's INC address (switch_ip) is not set";
  if (o.switch_qpn == 0 || o.switch_qpn > 0xFFFFFF) {
    return "the switch's virtual QPN must be in 1..0xffffff (got " + std::to_string(o.switch_qpn) +
           ")";
  }
  if (o.initial_psn > 0xFFFFFF) return "the initial PSN must fit 24 bits";
  if (!valid_pmtu(o.pmtu)) {
    return "path MTU " + std::to_string(o.pmtu) + " is not one of 256, 512, 1024, 2048, 4096";
  }
  if (o.window == 0) return "the window (MW) must be at least 1 packet";
  if (o.retry_count > 7) return "retry_count must be 0..7";
  if (o.timeout_code > 31) return "timeout_code must be 0..31";
  if (o.kind == "soft") {
    if (o.iface.empty()) return "the soft transport needs an interface (iface)";
    if (o.mac == wire::MacAddr{}) return "the soft transport needs the endpoint's own MAC (mac)";
    if (o.ip == 0) return "the soft transport needs the endpoint's own IPv4 address (ip)";
    if (o.qpn == 0 || o.qpn > 0xFFFFFF) return "the soft transport needs a QPN in 1..0xffffff";
  }
  return "";
}

soft::io::Result<std::unique_ptr<Transport>> open_transport(const TransportOptions& o) {
  TransportOptions eff = o;
  if (o.kind == "auto") {
    eff.kind = verbs_device_present() ? "verbs" : "soft";
  }
  if (const std::string why = validate(eff); !why.empty()) return {nullptr, why};
  return eff.kind == "verbs" ? open_verbs(eff) : open_soft(eff);
}

}  // namespace epic::host
