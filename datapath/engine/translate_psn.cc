#include "datapath/engine/translate_psn.h"

namespace epic::engine {

namespace {

// The record holding position `psn` of one PSN sequence (a child's sends or receives, or the
// group's). A sequence's records are contiguous — each starts where the one before it ended,
// and the newest ends at `end`, the next record's start — so the walk from the newest stops at
// the first record that starts at or before `psn` (measured backward from `end`). Positions
// more than half the PSN space (2^23) behind `end` are nobody's: PSN order is only defined
// within half the space (vocab::psn_gt). The distances back grow with every step and the walk
// stops at the first one reaching `back` (at most 2^23): no distance before it wraps.
template <typename StartFn>
const CollectiveRecord* find_record(const GroupState& g, uint32_t end, uint32_t psn,
                                    StartFn&& start) {
  constexpr uint32_t kHalf = (vocab::kPsnMask + 1) / 2;
  const uint32_t back = (end - psn) & vocab::kPsnMask;  // psn = end - back
  if (back == 0 || back > kHalf) return nullptr;        // at or after end, or too far back
  const size_t h = g.history.size();
  const auto known = static_cast<uint32_t>(g.collectives < h ? g.collectives : h);
  for (uint32_t k = 0; k < known; ++k) {
    const CollectiveRecord& rec = g.history[(g.collectives - 1 - k) % h];
    const uint32_t rec_back = (end - start(rec)) & vocab::kPsnMask;
    if (rec_back >= back) return &rec;  // start(rec) <= psn < the next record's start
  }
  return nullptr;  // before the oldest record kept
}

PacketRef locate_rank(const GroupState& g, size_t c, uint32_t psn, bool send) {
  const uint16_t rank = g.config->children[c].first_rank;
  const auto start = [&](const CollectiveRecord& r) {
    return send ? r.send_ctrl[c] : r.recv_ctrl[c];
  };
  const CollectiveRecord* rec =
      find_record(g, send ? g.next_send_ctrl[c] : g.next_recv_ctrl[c], psn, start);
  if (rec == nullptr) return {};
  const uint32_t off = (psn - start(*rec)) & vocab::kPsnMask;
  if (off == 0) return {rec, true, 0};
  return {rec, false,
          send ? rec->shape.send_item(rank, off - 1) : rec->shape.recv_item(rank, off - 1)};
}

}  // namespace

PacketRef locate_send(const GroupState& g, int child, uint32_t psn) {
  const auto c = static_cast<size_t>(child);
  if (!g.config->children[c].is_rank) return locate_group(g, psn);
  return locate_rank(g, c, psn, true);
}

PacketRef locate_recv(const GroupState& g, int child, uint32_t psn) {
  return locate_rank(g, static_cast<size_t>(child), psn, false);
}

PacketRef locate_group(const GroupState& g, uint32_t gpsn) {
  const CollectiveRecord* rec =
      find_record(g, g.next_g_ctrl, gpsn, [](const CollectiveRecord& r) { return r.g_ctrl; });
  if (rec == nullptr) return {};
  const uint32_t off = (gpsn - rec->g_ctrl) & vocab::kPsnMask;
  return off == 0 ? PacketRef{rec, true, 0} : PacketRef{rec, false, off - 1};
}

const CollectiveRecord* create_record(GroupState& g, const CollectiveDescriptor& d) {
  const GroupConfig& cfg = *g.config;
  CollectiveRecord& rec = g.history[g.collectives % g.history.size()];
  rec.shape = shape_of(d, cfg.num_ranks, cfg.pmtu);
  rec.g_ctrl = g.next_g_ctrl;
  for (size_t c = 0; c < cfg.children.size(); ++c) {
    const ChildLink& link = cfg.children[c];
    rec.send_ctrl[c] = g.next_send_ctrl[c];
    rec.recv_ctrl[c] = g.next_recv_ctrl[c];
    const uint32_t sent = link.is_rank ? rec.shape.send_count(link.first_rank) : rec.shape.n_data;
    const uint32_t recvd = link.is_rank ? rec.shape.recv_count(link.first_rank) : rec.shape.n_data;
    g.next_send_ctrl[c] = vocab::psn_add(g.next_send_ctrl[c], 1 + int64_t{sent});
    g.next_recv_ctrl[c] = vocab::psn_add(g.next_recv_ctrl[c], 1 + int64_t{recvd});
  }
  if (!rec.shape.multi_source() && rec.shape.n_data > 0) {
    g.one_source_until = vocab::psn_add(rec.g_ctrl, rec.shape.n_data);
  }
  g.next_g_ctrl = vocab::psn_add(g.next_g_ctrl, 1 + int64_t{rec.shape.n_data});
  ++g.collectives;
  return &rec;
}

uint32_t recv_psn(const GroupState& g, size_t child, const PacketRef& ref) {
  const ChildLink& link = g.config->children[child];
  if (!link.is_rank) return ref.gpsn();
  const CollectiveRecord& rec = *ref.record;
  if (ref.control) return rec.recv_ctrl[child];
  return vocab::psn_add(rec.recv_ctrl[child],
                        1 + int64_t{rec.shape.recv_index(link.first_rank, ref.j)});
}

uint32_t send_psn(const GroupState& g, size_t child, const PacketRef& ref) {
  const ChildLink& link = g.config->children[child];
  const CollectiveRecord& rec = *ref.record;
  if (ref.control) return rec.send_ctrl[child];
  return vocab::psn_add(rec.send_ctrl[child],
                        1 + int64_t{rec.shape.send_index(link.first_rank, ref.j)});
}

}  // namespace epic::engine
