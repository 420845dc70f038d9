// EdgeBinding (IncEngine module, security): a packet the LookupTable routed to an
// edge must come from the member the manager installed on that edge. The
// LookupTable finds the edge by the destination (IPv4, QPN) alone, which anyone
// who can reach the switch can write; the binding is what only the member has:
//   ingress port  the port the edge's frames leave on (ChildLink/ParentLink::port)
//   source MAC    the edge's remote endpoint's MAC
//   source IPv4   the edge's remote endpoint's address
//   UDP source    inside the switch's range (RoCEv2 NICs vary it per QP or flow
//                 for ECMP; incd's `switch.udp_source_ports`, default any)
//   P_Key         only for a group bound to a partition (GroupConfig::pkey, off by
//                 default): the BTH's P_Key matches the group's (proto/vocab/pkey.h)
// The engine checks it before any module sees the packet, so a forged
// contribution, result, ACK, NAK or announcement changes no state; each mismatch
// is dropped and counted by reason (EngineCounters drop_edge_*) and by ingress
// port (docs/security.md).
// Hot path: compares fields of the parsed frame with the group's config; no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/engine/group.h"
#include "datapath/wire/packet_view.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/pkey.h"

namespace epic::engine {

using vocab::UdpPortRange;  // the shared type (proto/vocab/addr.h)

// Ingress ports whose binding drops are counted one by one; a frame from a higher port id is
// counted on the last one.
inline constexpr size_t kMaxIngressPorts = 32;

enum class Binding : uint8_t {
  kMatch,
  kWrongPort,     // came in on another port than the edge's
  kWrongMac,      // source MAC is not the edge's remote endpoint's
  kWrongIpv4,     // source IPv4 is not the edge's remote endpoint's
  kWrongUdpPort,  // UDP source port outside the switch's range
  kWrongPkey,     // the group has a P_Key (GroupConfig::pkey) and the BTH's does not match it
};

// Whether IPv4 frame `v`, which came in on `ingress_port` and was routed to edge `child` (-1: the
// parent) of the group `cfg`, comes from that edge's member. Checked in the order of the enum.
inline Binding check_binding(const GroupConfig& cfg, int16_t child, const wire::PacketView& v,
                             uint16_t ingress_port, const UdpPortRange& udp) {
  const vocab::Endpoint* remote = nullptr;
  uint16_t port = 0;
  if (child < 0) {
    if (!cfg.parent) return Binding::kWrongPort;  // the LookupTable routes none: defensive
    remote = &cfg.parent->remote;
    port = cfg.parent->port;
  } else {
    const auto& c = cfg.children[static_cast<size_t>(child)];
    remote = &c.remote;
    port = c.port;
  }
  if (ingress_port != port) return Binding::kWrongPort;
  if (std::memcmp(v.eth_src(), remote->mac.data(), remote->mac.size()) != 0) {
    return Binding::kWrongMac;
  }
  if (v.ipv4_src() != remote->ipv4) return Binding::kWrongIpv4;
  if (!udp.contains(v.udp_src_port())) return Binding::kWrongUdpPort;
  if (cfg.pkey && !vocab::pkey_matches(v.pkey(), *cfg.pkey)) return Binding::kWrongPkey;
  return Binding::kMatch;
}

}  // namespace epic::engine
