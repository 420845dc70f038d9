// open_transport(): a rank's connection to the switch's virtual endpoint, on
// the transport a user asked for — "verbs" (an RDMA NIC through rdma-core),
// "soft" (the user-space RC endpoint over AF_PACKET) or "auto" (verbs when an
// RDMA device is present, soft otherwise; the choice is reported by
// Transport::kind()). The peer parameters are those every Mode-II rank needs:
// the switch's INC address and virtual QPN for this rank, the group's initial
// PSN, path MTU and window (docs/design.md; docs/libinc.md).
// Thread-safety: plain values and a factory.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "host/transport/endpoint.h"
#include "host/transport/soft/io/loss_injector.h"
#include "host/transport/soft/io/status.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/pkey.h"

namespace epic::host {

struct TransportOptions {
  std::string kind = "auto";  // soft | verbs | auto

  // the switch's endpoint and the group (the same in the switch's configuration)
  uint32_t switch_ip = 0;   // host order
  uint32_t switch_qpn = 0;  // the switch's virtual QPN for this rank
  uint32_t initial_psn = 0;
  uint16_t pmtu = vocab::kDefaultPmtu;
  uint32_t window = vocab::kDefaultWindow;  // MW, packets in flight

  // soft: the endpoint's interface and identity (its own MAC/IPv4, not the kernel's)
  std::string iface;
  vocab::MacAddr mac{};
  uint32_t ip = 0;   // host order; verbs: optional, selects the GID
  uint32_t qpn = 0;  // soft only: verbs QPNs are chosen by the device
  uint16_t udp_sport = 0xC000;
  soft::io::LossConfig loss;  // soft only: injected on our side (tests)
  // The BTH P_Key the QP sends: the group's partition (proto/vocab/pkey.h). verbs: the port's
  // P_Key table must hold it (full member), and the QP uses its index.
  uint16_t pkey = vocab::kDefaultPkey;
  // The IP TOS / traffic class of every packet the QP sends: DSCP (7:2) and ECN (1:0).
  // soft: the IPv4 TOS; verbs: the GRH traffic class (a NIC with ECN on may set ECT itself).
  // 2 (ECT(0)) makes the QP's packets ECN-capable, so that a switch can mark them CE.
  uint8_t traffic_class = 0;

  // verbs
  std::string device;  // "" = the first RDMA device with an active RoCEv2 port
  uint8_t ib_port = 1;
  int gid_index = -1;  // -1 = the RoCEv2 GID of `ip` (or the first IPv4 one)

  // RC timers
  uint32_t retransmit_timeout_us = 20000;  // soft; verbs uses timeout_code
  uint8_t timeout_code = 14;               // verbs: 4.096 us * 2^code
  uint8_t retry_count = 7;
  uint32_t max_send_wr = 1024;
  uint32_t max_recv_wr = 1024;
  std::chrono::milliseconds arp_timeout{5000};
};

// "" when the options are consistent for their kind, else what is wrong.
std::string validate(const TransportOptions& o);
// The same without the peer fields (switch_ip, switch_qpn, initial_psn, pmtu, window).
std::string validate_local(const TransportOptions& o);

soft::io::Result<std::unique_ptr<Transport>> open_transport(const TransportOptions& o);

// The rank's own side of its connection, known once its QP exists: what a rendezvous
// (inc-manager's JoinGroup, host/inc/manager_join.h) is told.
struct LocalEndpoint {
  std::string kind;               // "soft" | "verbs"
  uint32_t ipv4 = 0;              // host order
  vocab::MacAddr mac{};           // soft: the endpoint's own; verbs: all zero (not known here)
  std::array<uint8_t, 16> gid{};  // the RoCEv2 GID, ::ffff:ipv4
  uint32_t qpn = 0;
};

// What a rendezvous answers: the switch's endpoint for this rank and the group's parameters.
struct PeerParams {
  uint32_t switch_ip = 0;  // host order
  uint32_t switch_qpn = 0;
  uint32_t initial_psn = 0;
  uint16_t pmtu = vocab::kDefaultPmtu;
  uint32_t window = vocab::kDefaultWindow;
  // The group's traffic class, a DSCP (inc-manager's JoinGroupResponse.dscp): it replaces the
  // DSCP bits of TransportOptions::traffic_class, whose ECN bits stay. nullopt: keep them.
  std::optional<uint8_t> dscp{};
};

// TransportOptions::traffic_class with the DSCP a rendezvous answered (PeerParams::dscp).
uint8_t peer_traffic_class(uint8_t traffic_class, std::optional<uint8_t> dscp);

using PeerResolver = std::function<soft::io::Result<PeerParams>(const LocalEndpoint&)>;

// Creates the QP (soft: the QPN is o.qpn; verbs: the device's), calls `resolve` with the local
// endpoint, then connects to the peer it answers; the peer fields of `o` are ignored. An error
// from `resolve` is returned as it is.
soft::io::Result<std::unique_ptr<Transport>> open_transport(const TransportOptions& o,
                                                            const PeerResolver& resolve);

// True when at least one RDMA device is present (what "auto" decides on).
bool verbs_device_present();

}  // namespace epic::host
