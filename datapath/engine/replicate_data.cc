#include "datapath/engine/replicate_data.h"

#include <optional>

#include "datapath/engine/aggregate_data.h"

namespace epic::engine {

void replicate_data(GroupState& g, const PacketRef& ref, const Payload& p, Fanout fanout,
                    int only_child, Actions& a) {
  const GroupConfig& cfg = *g.config;
  // The copies differ only in their headers: the first copy's ICRC is computed, every other
  // copy's adjusted from it (icrc_delta.h), so a copy costs a header pass, not a payload pass.
  std::optional<wire::IcrcDelta> icrc_base;
  for (size_t c = 0; c < cfg.children.size(); ++c) {
    if (fanout == Fanout::kOne && static_cast<size_t>(only_child) != c) continue;
    if (!child_receives(g, c, ref)) continue;
    const ChildLink& link = cfg.children[c];
    FrameSpec f;
    f.src = &link.local;
    f.dst = &link.remote;
    f.udp_src_port = link.udp_src_port;
    f.pkey = cfg.wire_pkey();
    f.tos = cfg.tos(p.ecn);
    f.opcode = p.opcode;
    f.psn = recv_psn(g, c, ref);
    f.ack_req = true;  // every result is acknowledged: the ACKs drive the senders' windows
    f.immdt = p.immdt;
    f.payload = p.data;
    f.payload_len = p.len;
    f.icrc_from = icrc_base ? &*icrc_base : nullptr;
    const bool more = fanout != Fanout::kOne && c + 1 < cfg.children.size();
    a.send(link.port, f, more ? &icrc_base : nullptr);
    if (p.ecn == kEcnCe) ++a.counters.ecn_ce_out;
    if (fanout == Fanout::kFirst) {
      ++a.counters.results_replicated;
      ++g.stats.results_replicated;
    }
  }
}

void send_up(const GroupState& g, uint32_t psn, const Payload& p, Actions& a) {
  const ParentLink& link = *g.config->parent;
  FrameSpec f;
  f.src = &link.local;
  f.dst = &link.remote;
  f.udp_src_port = link.udp_src_port;
  f.pkey = g.config->wire_pkey();
  f.tos = g.config->tos(p.ecn);
  f.opcode = p.opcode;
  f.psn = psn;
  f.immdt = p.immdt;
  f.payload = p.data;
  f.payload_len = p.len;
  a.send(link.port, f);
  if (p.ecn == kEcnCe) ++a.counters.ecn_ce_out;
}

}  // namespace epic::engine
