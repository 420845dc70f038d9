#include "datapath/engine/group_instance.h"

#include <algorithm>

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
  return "";
}

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
  const uint32_t start = config.initial_psn & vocab::kPsnMask;
  const uint32_t before = vocab::psn_add(start, -1);
  st.next_g_ctrl = start;
  st.subtree_frontier = st.global_frontier = before;
  for (size_t c = 0; c < config.children.size(); ++c) {
    st.next_send_ctrl[c] = st.next_recv_ctrl[c] = start;
    st.child_frontier[c] = st.acked_recv_psn[c] = st.acked_send_psn[c] = before;
    st.max_send_psn[c] = st.parked_psn[c] = before;
  }
  return g;
}

}  // namespace epic::engine
