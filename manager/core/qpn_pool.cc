#include "manager/core/qpn_pool.h"

#include "manager/core/limits.h"

namespace epic::manager {

uint32_t QpnPool::free_count(const SwitchId& id) const {
  auto it = used_.find(id);
  const uint32_t used = it == used_.end() ? 0 : static_cast<uint32_t>(it->second.size());
  return kQpnLimit - kFirstVirtualQpn - used;
}

uint32_t QpnPool::allocate(const SwitchId& id, const RandomBits& random) {
  auto& used = used_[id];
  if (random) {
    for (int k = 0; k < kRandomTries; ++k) {
      const uint32_t qpn =
          kFirstVirtualQpn + static_cast<uint32_t>(random() % (kQpnLimit - kFirstVirtualQpn));
      if (used.insert(qpn).second) return qpn;
    }
  }
  uint32_t qpn = kFirstVirtualQpn;
  for (uint32_t u : used) {  // ascending: the first gap is the lowest free QPN
    if (u != qpn) break;
    ++qpn;
  }
  used.insert(qpn);
  return qpn;
}

Status QpnPool::claim(const SwitchId& id, uint32_t qpn) {
  if (qpn < kFirstVirtualQpn || qpn >= kQpnLimit) {
    return make_error(ErrorCode::kInvalidArgument,
                      "virtual QPN " + vocab::format_qpn(qpn) + " on switch '" + id +
                          "' is outside the manager's range 0x000100..0xffffff");
  }
  if (!used_[id].insert(qpn).second) {
    return make_error(ErrorCode::kAlreadyExists, "virtual QPN " + vocab::format_qpn(qpn) +
                                                     " on switch '" + id + "' is used twice");
  }
  return {};
}

void QpnPool::release(const SwitchId& id, uint32_t qpn) {
  auto it = used_.find(id);
  if (it == used_.end()) return;
  it->second.erase(qpn);
  if (it->second.empty()) used_.erase(it);
}

}  // namespace epic::manager
