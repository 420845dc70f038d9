// Controller: the host-collective fallback — a group refused for lack of INC memory whose
// ranks all accept host collectives is answered OK with host_fallback and its members' ring
// endpoints. Nothing is installed or granted for it and the core does not hold it, so
// ListGroups and GetMemory do not list it (docs/manager.md, "Host fallback").
#include <algorithm>

#include "manager/service/controller.h"
#include "manager/service/csprng.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/psn.h"

namespace epic::manager::service {

bool Controller::answer_host_fallback(std::vector<Waiter>& waiters, const Error& refusal,
                                      const std::string& what) {
  if (refusal.code != ErrorCode::kResourceExhausted || waiters.empty()) return false;
  const bool all = std::all_of(waiters.begin(), waiters.end(),
                               [](const Waiter& w) { return w.host_endpoint.has_value(); });
  if (!all) return false;
  pb::JoinGroupResponse base;
  base.set_host_fallback(true);
  base.set_fallback_reason(refusal.message);
  uint32_t pmtu = waiters.front().pmtu;
  for (const Waiter& w : waiters) pmtu = std::min(pmtu, w.pmtu);
  // Left to the manager (0, every rank alike: the rendezvous checks): the ring's is the default.
  base.set_pmtu(pmtu != 0 ? pmtu : vocab::kDefaultPmtu);
  // Not a core group id (none is allocated); any PSN works as long as every rank gets the same.
  base.set_initial_psn(static_cast<uint32_t>(csprng_bits() & vocab::kPsnMask));
  uint32_t ranks = 0;  // a rank that called again (a retry) waits twice
  for (const Waiter& w : waiters) ranks = std::max(ranks, w.rank + 1);
  std::vector<const Waiter*> by_rank(ranks, nullptr);
  for (const Waiter& w : waiters) by_rank[w.rank] = &w;
  for (const Waiter* w : by_rank) {
    if (!w) return false;  // not a whole ring
    *base.add_members() = *w->host_endpoint;
  }
  log_->info("{}: {}; {} ranks fall back to host collectives", what, refusal.to_string(),
             waiters.size());
  for (Waiter& w : waiters) {
    pb::JoinGroupResponse answer = base;
    answer.set_rank(w.rank);
    w.reply(grpc::Status::OK, answer);
  }
  waiters.clear();
  return true;
}

}  // namespace epic::manager::service
