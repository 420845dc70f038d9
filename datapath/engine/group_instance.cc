#include "datapath/engine/group_instance.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "proto/context/context_validate.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/memory.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

uint32_t history_records(uint32_t window) {
  return static_cast<uint32_t>(std::min<uint64_t>(2 * uint64_t{window} + 2, kMaxHistory));
}

std::string check_config(const GroupConfig& config) {
  // The datapath does not trust the control plane: the shape of a context is checked again,
  // by the same rules (proto/context/context_validate.h), before any memory is sized for it.
  vocab::ContextErrors errors;
  vocab::check_shape(config, "", errors);
  return errors.empty() ? "" : errors.front().to_string();
}

std::string check_group(const GroupConfig& config, const SlotRegion* slots) {
  if (std::string e = check_config(config); !e.empty()) return e;
  if (slots == nullptr || slots->nslots != vocab::slots_for_window(config.window) ||
      slots->pmtu != config.pmtu) {
    return "slot region must hold 2*MW slots of the group's path MTU";
  }
  // Mode-III hops carry plain values (pipe.cc): an exact sum across switches needs Mode-II's
  // AUTO partials.
  if (config.arith.profile == vocab::AccumProfile::kKulischFixed &&
      config.mode == vocab::GroupMode::kMode3 &&
      (config.parent || std::any_of(config.children.begin(), config.children.end(),
                                    [](const ChildLink& c) { return !c.is_rank; }))) {
    return "an exact sum (kulisch_fixed) on a Mode-III tree of several switches is not "
           "supported: use Mode-II, or one switch";
  }
  // The Kulisch layouts depend on the ranks R (the exact width grows with ceil(log2 R)).
  const bool exact = config.arith.profile == vocab::AccumProfile::kKulischFixed;
  if (!(slots->arith == config.arith) || (exact && slots->contributors != config.num_ranks) ||
      slots->accum_stride != vocab::slot_accum_bytes(config.pmtu, config.arith, config.num_ranks)) {
    return "slot region must be sized for the group's arithmetic (accumulator profile, dtype, "
           "ranks)";
  }
  return "";
}

namespace {

// Mode-III: the Pipes over the granted slots and the edges' hop state.
bool prepare_mode3(GroupInstance& g, std::string& error) {
  const GroupConfig& cfg = g.config;
  auto m = std::make_unique<Mode3State>();
  const uint32_t start = cfg.initial_psn & vocab::kPsnMask;
  const uint32_t n = g.state.slots->nslots;
  const auto children = static_cast<uint8_t>(cfg.children.size());
  const bool ok = cfg.parent ? pipe_init(m->up, g.state.slots, 0, n / 2, start, 1) &&
                                   pipe_init(m->down, g.state.slots, n / 2, n / 2, start, children)
                             : pipe_init(m->up, g.state.slots, 0, n, start, children);
  if (!ok) {
    error = "the granted slots cannot hold the group's Mode-III Pipes";
    return false;
  }
  // A hop keeps at most MW results in flight (the root's Pipe has 2·MW entries; the others MW).
  pipe_limit_send_window(m->up, cfg.window);
  pipe_limit_send_window(m->down, cfg.window);
  m->policy.timeout_ns = uint64_t{cfg.hop_timeout_us} * 1000;
  for (size_t e = 0; e < kMaxEdges; ++e) {
    m->edges[e].group = &g.state;
    m->edges[e].edge = static_cast<uint8_t>(e);
    m->edges[e].in.epsn = start;
  }
  g.mode3 = std::move(m);
  g.state.mode3 = g.mode3.get();
  return true;
}

}  // namespace

std::unique_ptr<GroupInstance> prepare_group(const GroupConfig& config, SlotRegion* slots,
                                             std::string& error) {
  error = check_group(config, slots);
  if (!error.empty()) return nullptr;
  auto g = std::make_unique<GroupInstance>();
  g->config = config;
  GroupState& st = g->state;
  st.config = &g->config;
  st.slots = slots;
  st.history.resize(history_records(config.window));
  st.straggler.first.resize(std::bit_ceil(std::max<uint32_t>(1, slots->nslots)));
  const uint32_t start = config.initial_psn & vocab::kPsnMask;
  const uint32_t before = vocab::psn_add(start, -1);
  st.next_g_ctrl = start;
  st.subtree_frontier = st.global_frontier = before;
  for (size_t c = 0; c < config.children.size(); ++c) {
    st.next_send_ctrl[c] = st.next_recv_ctrl[c] = start;
    st.child_frontier[c] = st.acked_recv_psn[c] = st.acked_send_psn[c] = before;
    st.max_send_psn[c] = st.parked_psn[c] = before;
  }
  st.next_send_ctrl[kParentEdge] = st.next_recv_ctrl[kParentEdge] = start;
  uint32_t first = UINT32_MAX, ranks = 0;
  for (const ChildLink& c : config.children) {
    first = std::min<uint32_t>(first, c.first_rank);
    ranks += c.rank_count;
  }
  st.subtree_first = static_cast<uint16_t>(first == UINT32_MAX ? 0 : first);
  st.subtree_ranks = static_cast<uint16_t>(ranks);
  if (config.mode == vocab::GroupMode::kMode3 && !prepare_mode3(*g, error)) return nullptr;
  return g;
}

}  // namespace epic::engine
