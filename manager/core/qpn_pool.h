// QpnPool: the virtual QPNs in use on each switch's INC address. Every edge of an IncTree
// ends, on a switch, in a virtual QP the switch finds the group's context by, so a QPN is
// unique per switch (incd rejects a local <IPv4, QPN> that appears twice). With a random
// source (random_bits.h) a free QPN drawn from it is handed out, so a host cannot guess a
// group's QPNs; without one, the lowest free QPN from kFirstVirtualQpn (deterministic).
// Threading: a plain value, owned by the IncManager.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "manager/core/endpoint.h"
#include "manager/core/error.h"
#include "manager/core/random_bits.h"

namespace epic::manager {

class QpnPool {
 public:
  // QPNs still free on `id`.
  uint32_t free_count(const SwitchId& id) const;
  // A free QPN on `id`: drawn from `random` (kRandomTries draws; the lowest free one if every
  // draw was taken), or the lowest free one without a source. The caller has checked
  // free_count().
  uint32_t allocate(const SwitchId& id, const RandomBits& random = {});
  static constexpr int kRandomTries = 64;
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
