// IncManager: foreign groups — what an agent serves that this manager has no record of
// (inc_manager.h "Foreign groups"; docs/manager.md "Agent protocol").
#include "manager/core/inc_manager.h"

namespace epic::manager {

void IncManager::keep_foreign(uint32_t group_id, const SwitchId& sw,
                              const std::vector<uint32_t>& qpns) {
  auto& on = foreign_[group_id];
  if (sw.empty()) return;  // restored from the store: the switches tell again when they register
  std::vector<uint32_t>& held = on[sw];
  for (uint32_t q : qpns) {
    // A QPN the pool cannot give (out of range, or used by a group we know) is not ours to
    // hold: the agent's context is what it is; only the ones we could hand out are reserved.
    if (qpns_.claim(sw, q).ok()) held.push_back(q);
  }
}

Result<Effects> IncManager::forget_foreign(uint32_t group_id) {
  auto it = foreign_.find(group_id);
  if (it == foreign_.end()) {
    return make_error(ErrorCode::kNotFound,
                      "group " + std::to_string(group_id) + " is not served by any switch");
  }
  Effects fx;
  for (const auto& [sw, qpns] : it->second) {
    for (uint32_t q : qpns) qpns_.release(sw, q);
    fx.actions.push_back(
        SwitchAction{.kind = ActionKind::kRemoveContext, .switch_id = sw, .group_id = group_id});
  }
  foreign_.erase(it);
  return fx;
}

}  // namespace epic::manager
