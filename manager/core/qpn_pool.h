// QpnPool: the virtual QPNs in use on each switch's INC address. Every edge of an IncTree
// ends, on a switch, in a virtual QP the switch finds the group's context by, so a QPN is
// unique per switch (incd rejects a local <IPv4, QPN> that appears twice). The lowest free
// QPN from kFirstVirtualQpn is handed out, so assignments are deterministic.
// Threading: a plain value, owned by the IncManager.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "manager/core/endpoint.h"
#include "manager/core/error.h"

namespace epic::manager {

class QpnPool {
 public:
  // QPNs still free on `id`.
  uint32_t free_count(const SwitchId& id) const;
  // The lowest free QPN on `id`; the caller has checked free_count().
  uint32_t allocate(const SwitchId& id);
  // Marks a persisted QPN as used: ALREADY_EXISTS if it is, INVALID_ARGUMENT if out of range.
  Status claim(const SwitchId& id, uint32_t qpn);
  void release(const SwitchId& id, uint32_t qpn);
  void drop_switch(const SwitchId& id) { used_.erase(id); }
  const std::map<SwitchId, std::set<uint32_t>>& used() const { return used_; }
  friend bool operator==(const QpnPool&, const QpnPool&) = default;

 private:
  std::map<SwitchId, std::set<uint32_t>> used_{};
};

}  // namespace epic::manager
