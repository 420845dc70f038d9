#include "datapath/engine/locate_upload.h"

#include "datapath/arith/kulisch.h"
#include "proto/vocab/collective_map.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

namespace {

// A control message `m` may announce a new collective: at the child's next control PSN, with
// a well-formed descriptor.
PacketRef announce(GroupState& g, const PacketMeta& m, Actions& a) {
  EngineCounters& n = a.counters;
  const size_t c = m.child_index();
  if (m.psn != g.next_send_ctrl[c]) {
    drop(g, vocab::psn_gt(m.psn, g.next_send_ctrl[c]) ? n.drop_data_before_control
                                                      : n.drop_unknown_psn);
    return {};
  }
  if (!m.control) {
    drop(g, n.drop_data_before_control);
    return {};
  }
  const auto d = decode_control(m.payload, m.payload_len);
  if (!d) {
    drop(g, n.drop_bad_control);
    return {};
  }
  switch (vocab::check_collective(*d, g.config->num_ranks, g.config->pmtu, g.config->arith)) {
    case vocab::CollectiveFault::kNone:
      break;
    case vocab::CollectiveFault::kArithmetic:
      // Its accumulator does not fit the slots the group's arithmetic was granted.
      drop(g, n.drop_arith_unfit);
      return {};
    default:
      drop(g, n.drop_bad_control);
      return {};
  }
  return {create_record(g, *d), true, 0};
}

}  // namespace

PacketRef locate_upload(GroupState& g, const PacketMeta& m, Actions& a) {
  EngineCounters& n = a.counters;
  PacketRef ref = locate_send(g, m.child, m.psn);
  if (!ref.known()) {
    ref = announce(g, m, a);
    if (!ref.known()) return {};
  }
  if (m.control != ref.control) {
    drop(g, n.drop_inconsistent);
    return {};
  }
  if (m.control) {
    const auto d = decode_control(m.payload, m.payload_len);
    if (!d || !(*d == ref.record->shape.desc)) {
      drop(g, n.drop_bad_control);
      return {};
    }
  } else if (upload_len(g, m, ref) != ref.record->shape.payload_len(ref.j) || m.has_immdt ||
             !child_sends(g, m.child_index(), ref)) {
    drop(g, n.drop_inconsistent);
    return {};
  }
  return ref;
}

bool carries_partial(const GroupState& g, const PacketMeta& m, const PacketRef& ref) {
  const vocab::CollectiveDescriptor& d = ref.record->shape.desc;
  return !m.control && !g.config->children[m.child_index()].is_rank &&
         vocab::uses_kulisch(g.config->arith.profile, d.dtype, d.op);
}

uint32_t upload_len(const GroupState& g, const PacketMeta& m, const PacketRef& ref) {
  if (!carries_partial(g, m, ref)) return m.payload_len;
  const vocab::DType t = ref.record->shape.desc.dtype;
  const int n = arith::kulisch::partial_elements(t, m.payload, m.payload_len);
  if (n < 0) return UINT32_MAX;
  return static_cast<uint32_t>(n) * static_cast<uint32_t>(vocab::wire_bytes(t));
}

}  // namespace epic::engine
