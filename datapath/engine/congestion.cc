#include "datapath/engine/congestion.h"

#include "datapath/wire/opcode.h"

namespace epic::engine {

namespace {

// Sends a CNP on edge `e` unless one went there less than kCnpIntervalNs ago.
template <typename Link>
void cnp_to(GroupState& g, size_t e, const Link& link, Actions& a) {
  if (g.cnp_sent[e] && a.now_ns - g.cnp_sent_ns[e] < kCnpIntervalNs) {
    ++a.counters.cnps_rate_limited;
    return;
  }
  g.cnp_sent[e] = true;
  g.cnp_sent_ns[e] = a.now_ns;
  FrameSpec f;
  f.src = &link.local;
  f.dst = &link.remote;
  f.udp_src_port = link.udp_src_port;
  f.pkey = g.config->wire_pkey();
  f.opcode = wire::op::kCnp;
  f.tos = g.config->tos(0);  // the group's class; a CNP is not ECN-capable
  f.becn = true;
  a.send(link.port, f);
  ++a.counters.cnps_forwarded;
}

}  // namespace

void forward_cnp(GroupState& g, const PacketMeta& m, Actions& a) {
  ++a.counters.cnps;
  const GroupConfig& cfg = *g.config;
  for (size_t c = 0; c < cfg.children.size(); ++c) {
    if (static_cast<int>(c) != m.child) cnp_to(g, c, cfg.children[c], a);
  }
  if (cfg.parent && m.child >= 0) cnp_to(g, kParentEdge, *cfg.parent, a);
}

}  // namespace epic::engine
