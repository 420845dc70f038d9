#include "host/transport/open.h"

#include <algorithm>

#include "host/transport/soft/io/soft_transport.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/dscp.h"
#ifdef EPIC_HAVE_VERBS
#include "host/transport/verbs/verbs_transport.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/psn.h"
#endif

namespace epic::host {

namespace {

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
  c.qp.rnr_retry = 7;            // infinite: the switch answers RNR NAK while other ranks are slow
  c.qp.probe_on_timeout = true;  // the switch holds our uploads while others are slow
  c.qp.max_send_wr = o.max_send_wr;
  c.qp.max_recv_wr = o.max_recv_wr;
  c.qp.path.remote_ipv4 = o.switch_ip;
  c.qp.path.udp_src_port = o.udp_sport;
  c.qp.pkey = o.pkey;
  c.qp.path.tos = o.traffic_class;
  c.arp_timeout = o.arp_timeout;
  auto t = soft::io::SoftTransport::open(c);
  if (!t.ok()) return {nullptr, "soft transport on " + o.iface + ": " + t.error};
  return {std::move(t.value), ""};
}

#ifdef EPIC_HAVE_VERBS
verbs::VerbsConfig verbs_config(const TransportOptions& o) {
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
  c.pkey = o.pkey;
  c.traffic_class = o.traffic_class;
  return c;
}
#endif

#ifndef EPIC_HAVE_VERBS
const char* const kNoVerbs =
    "this libinc was built without libibverbs (apt-get install libibverbs-dev, "
    "then rebuild): use INC_TRANSPORT=soft";
#endif

soft::io::Result<std::unique_ptr<Transport>> open_verbs(const TransportOptions& o) {
#ifndef EPIC_HAVE_VERBS
  (void)o;
  return {nullptr, kNoVerbs};
#else
  auto t = verbs::VerbsTransport::open(verbs_config(o));
  if (!t.ok()) return {nullptr, "verbs transport: " + t.error};
  return {std::move(t.value), ""};
#endif
}

// verbs: the QP exists (and has its QPN) before the rendezvous; connected after it.
soft::io::Result<std::unique_ptr<Transport>> open_verbs_resolved(const TransportOptions& o,
                                                                 const PeerResolver& resolve) {
#ifndef EPIC_HAVE_VERBS
  (void)o;
  (void)resolve;
  return {nullptr, kNoVerbs};
#else
  auto t = verbs::VerbsTransport::create(verbs_config(o));
  if (!t.ok()) return {nullptr, "verbs transport: " + t.error};
  LocalEndpoint local;
  local.kind = "verbs";
  local.gid = t.value->local_gid();
  local.ipv4 = o.ip;
  const auto& g = local.gid;
  if (local.ipv4 == 0 && g[10] == 0xFF && g[11] == 0xFF) {
    local.ipv4 = uint32_t{g[12]} << 24 | uint32_t{g[13]} << 16 | uint32_t{g[14]} << 8 | g[15];
  }
  local.qpn = t.value->qpn();
  auto peer = resolve(local);
  if (!peer.ok()) return {nullptr, peer.error};
  const PeerParams& p = peer.value;
  if (auto s = t.value->connect(p.switch_ip, p.switch_qpn, p.initial_psn, p.pmtu, p.window,
                                peer_traffic_class(o.traffic_class, p.dscp));
      !s.ok()) {
    return {nullptr, "verbs transport: " + s.error};
  }
  return {std::move(t.value), ""};
#endif
}

}  // namespace

uint8_t peer_traffic_class(uint8_t traffic_class, std::optional<uint8_t> dscp) {
  if (!dscp) return traffic_class;
  return vocab::tos_byte(*dscp, traffic_class & vocab::kEcnBits);
}

bool verbs_device_present() {
#ifdef EPIC_HAVE_VERBS
  return !verbs::list_devices().empty();
#else
  return false;
#endif
}

std::string validate_local(const TransportOptions& o) {
  if (o.kind != "soft" && o.kind != "verbs" && o.kind != "auto") {
    return "transport '" + o.kind + "' is not one of soft, verbs, auto";
  }
  if (o.retry_count > 7) return "retry_count must be 0..7";
  if (o.timeout_code > 31) return "timeout_code must be 0..31";
  if (o.kind == "soft") {
    if (o.iface.empty()) return "the soft transport needs an interface (iface)";
    if (o.mac == vocab::MacAddr{}) return "the soft transport needs the endpoint's own MAC (mac)";
    if (o.ip == 0) return "the soft transport needs the endpoint's own IPv4 address (ip)";
    if (o.qpn == 0 || o.qpn > vocab::kQpnMask)
      return "the soft transport needs a QPN in 1..0xffffff";
  }
  return "";
}

std::string validate(const TransportOptions& o) {
  if (std::string why = validate_local(o); !why.empty()) return why;
  if (o.switch_ip == 0) return "the switch's INC address (switch_ip) is not set";
  if (o.switch_qpn == 0 || o.switch_qpn > vocab::kQpnMask) {
    return "the switch's virtual QPN must be in 1..0xffffff (got " + std::to_string(o.switch_qpn) +
           ")";
  }
  if (o.initial_psn > vocab::kPsnMask) return "the initial PSN must fit 24 bits";
  if (!vocab::valid_pmtu(o.pmtu)) {
    return "path MTU " + std::to_string(o.pmtu) + " is not one of " +
           std::string(vocab::kPmtuChoices);
  }
  if (o.window == 0) return "the window (MW) must be at least 1 packet";
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

soft::io::Result<std::unique_ptr<Transport>> open_transport(const TransportOptions& o,
                                                            const PeerResolver& resolve) {
  TransportOptions eff = o;
  if (o.kind == "auto") eff.kind = verbs_device_present() ? "verbs" : "soft";
  if (const std::string why = validate_local(eff); !why.empty()) return {nullptr, why};
  if (eff.kind == "verbs") return open_verbs_resolved(eff, resolve);
  // soft: the QPN is ours to choose, so the rendezvous can run before the NIC opens.
  LocalEndpoint local;
  local.kind = "soft";
  local.ipv4 = eff.ip;
  local.mac = eff.mac;
  local.gid[10] = local.gid[11] = 0xFF;
  for (int i = 0; i < 4; ++i) local.gid[12 + i] = static_cast<uint8_t>(eff.ip >> (24 - 8 * i));
  local.qpn = eff.qpn;
  auto peer = resolve(local);
  if (!peer.ok()) return {nullptr, peer.error};
  eff.switch_ip = peer.value.switch_ip;
  eff.switch_qpn = peer.value.switch_qpn;
  eff.initial_psn = peer.value.initial_psn;
  eff.pmtu = peer.value.pmtu;
  eff.window = peer.value.window;
  eff.traffic_class = peer_traffic_class(eff.traffic_class, peer.value.dscp);
  if (const std::string why = validate(eff); !why.empty()) {
    return {nullptr, "the rendezvous answered unusable peer parameters: " + why};
  }
  return open_soft(eff);
}

}  // namespace epic::host
