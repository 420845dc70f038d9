#include "datapath/engine/translate_psn.h"

namespace epic::engine {

namespace {

constexpr uint32_t kHalf = (vocab::kPsnMask + 1) / 2;  // PSN order is defined within 2^23

const CollectiveRecord& newest(const GroupState& g, uint64_t k) {
  return g.history[(g.collectives - 1 - k) % g.history.size()];
}

// The record holding position `psn` of one PSN sequence (a child's sends or receives, or the
// group's). A sequence's records are contiguous — each starts where the one before it ended,
// and the newest ends at `end`, the next record's start — so the k-th newest record holds
// `psn` when it is the first, counting back from the newest, to start at or before it. Distances
// back from `end` grow strictly with k and are exact: the records kept (first_kept onwards)
// span less than 2^24 PSNs of every sequence (create_record). The search gallops (k = 0, 1, 3,
// 7, ...) and then halves the last gap: one probe for the newest record, two for the one before,
// at most 2·log2(kMaxHistory) + 1 = 25 for any packet, whatever the history holds. A position
// at or after `end`, or more than 2^23 behind it, is nobody's.
template <typename StartFn>
const CollectiveRecord* find_record(const GroupState& g, uint32_t end, uint32_t psn,
                                    StartFn&& start) {
  const uint32_t back = (end - psn) & vocab::kPsnMask;  // psn = end - back
  if (back == 0 || back > kHalf) return nullptr;
  const uint64_t kept = g.collectives - g.first_kept;
  const auto holds = [&](uint64_t k) {  // the k-th newest record starts at or before psn
    return ((end - start(newest(g, k))) & vocab::kPsnMask) >= back;
  };
  uint64_t lo = 0;     // records newer than lo start after psn
  uint64_t hi = kept;  // the answer is in [lo, hi]; kept: no record holds psn
  for (uint64_t k = 0, step = 1; k < kept; k += step, step *= 2) {
    if (holds(k)) {
      hi = k;
      break;
    }
    lo = k + 1;
  }
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (holds(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return hi < kept ? &newest(g, hi) : nullptr;
}

// The packet at `psn` of edge `e`'s own send (or receive) sequence.
PacketRef locate_edge(const GroupState& g, size_t e, uint32_t psn, bool send) {
  const auto start = [&](const CollectiveRecord& r) {
    return send ? r.send_ctrl[e] : r.recv_ctrl[e];
  };
  const CollectiveRecord* rec =
      find_record(g, send ? g.next_send_ctrl[e] : g.next_recv_ctrl[e], psn, start);
  if (rec == nullptr) return {};
  const uint32_t off = (psn - start(*rec)) & vocab::kPsnMask;
  if (off == 0) return {rec, true, 0};
  const RankRange r = edge_ranks(g, e);
  const vocab::PacketSet set =
      send ? rec->shape.send_set(r.first, r.count) : rec->shape.recv_set(r.first, r.count);
  return {rec, false, set.item(off - 1)};
}

}  // namespace

PacketRef locate_send(const GroupState& g, int child, uint32_t psn) {
  const auto c = static_cast<size_t>(child);
  if (!own_sequences(g, c)) return locate_group(g, psn);
  return locate_edge(g, c, psn, true);
}

PacketRef locate_recv(const GroupState& g, int child, uint32_t psn) {
  return locate_edge(g, static_cast<size_t>(child), psn, false);
}

PacketRef locate_parent_send(const GroupState& g, uint32_t psn) {
  return locate_edge(g, kParentEdge, psn, true);
}

PacketRef locate_parent_recv(const GroupState& g, uint32_t psn) {
  return locate_edge(g, kParentEdge, psn, false);
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
  const auto advance = [&](size_t e) {
    rec.send_ctrl[e] = g.next_send_ctrl[e];
    rec.recv_ctrl[e] = g.next_recv_ctrl[e];
    uint32_t sent = rec.shape.n_data;
    uint32_t recvd = rec.shape.n_data;
    if (own_sequences(g, e)) {
      const RankRange r = edge_ranks(g, e);
      sent = rec.shape.send_set(r.first, r.count).count();
      recvd = rec.shape.recv_set(r.first, r.count).count();
    }
    g.next_send_ctrl[e] = vocab::psn_add(g.next_send_ctrl[e], 1 + int64_t{sent});
    g.next_recv_ctrl[e] = vocab::psn_add(g.next_recv_ctrl[e], 1 + int64_t{recvd});
  };
  for (size_t c = 0; c < cfg.children.size(); ++c) advance(c);
  if (cfg.parent && own_sequences(g, kParentEdge)) advance(kParentEdge);
  if (!rec.shape.multi_source() && rec.shape.n_data > 0) {
    g.one_source_until = vocab::psn_add(rec.g_ctrl, rec.shape.n_data);
  }
  g.next_g_ctrl = vocab::psn_add(g.next_g_ctrl, 1 + int64_t{rec.shape.n_data});
  ++g.collectives;
  // Forget the records that left the ring, and those whose every group PSN now lies more than
  // 2^23 behind the end (the next record starts there). A record adds at most
  // 1 + kMaxCollectivePackets PSNs to a sequence (announce refuses more), and a rank's sequence
  // no more than the group's, so the distances compared here are exact, and the records kept
  // span less than 2^23 + 2^22 + 1 < 2^24 PSNs of every sequence.
  const uint64_t h = g.history.size();
  if (g.collectives - g.first_kept > h) g.first_kept = g.collectives - h;
  while (g.collectives - g.first_kept > 1) {
    const CollectiveRecord& next = newest(g, g.collectives - g.first_kept - 2);
    if (((g.next_g_ctrl - next.g_ctrl) & vocab::kPsnMask) <= kHalf) break;
    ++g.first_kept;
  }
  return &rec;
}

uint32_t recv_psn(const GroupState& g, size_t e, const PacketRef& ref) {
  if (!own_sequences(g, e)) return ref.gpsn();
  const CollectiveRecord& rec = *ref.record;
  if (ref.control) return rec.recv_ctrl[e];
  const RankRange r = edge_ranks(g, e);
  return vocab::psn_add(rec.recv_ctrl[e],
                        1 + int64_t{rec.shape.recv_set(r.first, r.count).index(ref.j)});
}

uint32_t send_psn(const GroupState& g, size_t e, const PacketRef& ref) {
  if (!own_sequences(g, e)) return ref.gpsn();
  const CollectiveRecord& rec = *ref.record;
  if (ref.control) return rec.send_ctrl[e];
  const RankRange r = edge_ranks(g, e);
  return vocab::psn_add(rec.send_ctrl[e],
                        1 + int64_t{rec.shape.send_set(r.first, r.count).index(ref.j)});
}

}  // namespace epic::engine
