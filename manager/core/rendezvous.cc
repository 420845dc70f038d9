#include "manager/core/rendezvous.h"

#include "manager/core/group_arith.h"
#include "proto/context/context_validate.h"

namespace epic::manager {
namespace {

std::string group_text(const RankJoin& j) {
  return "group '" + j.group + "' of tenant '" + j.tenant + "'";
}

std::string endpoint_text(const RankRequest& r) {
  return vocab::format_ipv4(r.ipv4) + " qpn " + vocab::format_qpn(r.qpn);
}

}  // namespace

Result<std::optional<GroupRequest>> Rendezvous::offer(const RankJoin& join, Millis now) {
  const std::string who = "rank " + std::to_string(join.rank.rank) + " of " + group_text(join);
  if (join.size == 0 || join.size > kMaxRanks) {
    return make_error(ErrorCode::kInvalidArgument,
                      who + ": a group has 1..65535 ranks, not " + std::to_string(join.size));
  }
  if (join.rank.rank >= join.size) {
    return make_error(ErrorCode::kInvalidArgument, who + " is out of range: the group has " +
                                                       std::to_string(join.size) + " ranks (0.." +
                                                       std::to_string(join.size - 1) + ")");
  }
  auto key = std::make_pair(join.tenant, join.group);
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    it = pending_.emplace(key, Pending{join, now, {}}).first;
  }
  Pending& p = it->second;
  const RankJoin& f = p.first;
  const std::string first = "rank " + std::to_string(f.rank.rank);
  auto differs = [&](const std::string& what, uint64_t mine, uint64_t theirs) {
    return make_error(ErrorCode::kInvalidArgument, who + " asks for " + what + " " +
                                                       std::to_string(mine) + "; " + first +
                                                       " asked for " + std::to_string(theirs));
  };
  if (join.size != f.size) return differs("a group size of", join.size, f.size);
  if (join.window != f.window) return differs("window", join.window, f.window);
  if (join.pmtu != f.pmtu) return differs("pmtu", join.pmtu, f.pmtu);
  if (join.mode != f.mode) {
    auto text = [](const std::optional<vocab::GroupMode>& m) {
      return m ? std::string(vocab::mode_name(*m)) : std::string("the fabric's default mode");
    };
    return make_error(ErrorCode::kInvalidArgument, who + " asks for " + text(join.mode) + "; " +
                                                       first + " asked for " + text(f.mode));
  }
  if (join.pkey != f.pkey) {
    auto text = [](const std::optional<uint16_t>& k) {
      return k ? "P_Key " + std::to_string(*k) : std::string("no P_Key");
    };
    return make_error(ErrorCode::kInvalidArgument, who + " asks for " + text(join.pkey) + "; " +
                                                       first + " asked for " + text(f.pkey));
  }
  if (join.dscp != f.dscp) {
    auto text = [](const std::optional<uint8_t>& d) {
      return d ? "DSCP " + std::to_string(*d) : std::string("the tenant's default DSCP");
    };
    return make_error(ErrorCode::kInvalidArgument, who + " asks for " + text(join.dscp) + "; " +
                                                       first + " asked for " + text(f.dscp));
  }
  if (!(join.arith == f.arith)) {
    return make_error(ErrorCode::kInvalidArgument, who + " asks for accumulator " +
                                                       arith_text(join.arith) + "; " + first +
                                                       " asked for " + arith_text(f.arith));
  }
  if (join.queue_timeout != f.queue_timeout) {
    return differs("a queue timeout (ms) of", static_cast<uint64_t>(join.queue_timeout.count()),
                   static_cast<uint64_t>(f.queue_timeout.count()));
  }
  if (auto r = p.ranks.find(join.rank.rank); r != p.ranks.end()) {
    if (r->second == join.rank) return std::optional<GroupRequest>{};  // a retried call
    return make_error(ErrorCode::kAlreadyExists,
                      who + " has already joined with endpoint " + endpoint_text(r->second));
  }
  for (const auto& [rank, other] : p.ranks) {
    if (other.ipv4 == join.rank.ipv4 && other.qpn == join.rank.qpn) {
      return make_error(ErrorCode::kInvalidArgument,
                        who + " uses endpoint " + endpoint_text(join.rank) + ", already rank " +
                            std::to_string(rank) + "'s");
    }
  }
  p.ranks.emplace(join.rank.rank, join.rank);
  if (p.ranks.size() < join.size) return std::optional<GroupRequest>{};
  GroupRequest req{.tenant = join.tenant,
                   .name = join.group,
                   .window = join.window,
                   .pmtu = join.pmtu,
                   .mode = join.mode,
                   .ranks = {},
                   .queue_timeout = join.queue_timeout,
                   .pkey = join.pkey,
                   .arith = join.arith,
                   .dscp = join.dscp};
  for (auto& [rank, r] : p.ranks) req.ranks.push_back(r);
  pending_.erase(it);
  return std::optional<GroupRequest>{std::move(req)};
}

std::vector<ExpiredRendezvous> Rendezvous::expire(Millis now) {
  std::vector<ExpiredRendezvous> out;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Pending& p = it->second;
    if (now - p.started < timeout_) {
      ++it;
      continue;
    }
    ExpiredRendezvous e{
        .tenant = p.first.tenant, .group = p.first.group, .joined = {}, .error = {}};
    std::string missing;
    uint32_t shown = 0, absent = 0;
    for (uint32_t r = 0; r < p.first.size; ++r) {
      if (p.ranks.count(r)) {
        e.joined.push_back(r);
        continue;
      }
      ++absent;
      if (shown < 16) {
        missing += (shown ? ", " : "") + std::to_string(r);
        ++shown;
      }
    }
    if (absent > shown) missing += ", ... (" + std::to_string(absent) + " in all)";
    e.error = make_error(ErrorCode::kDeadlineExceeded,
                         group_text(p.first) + ": " + std::to_string(p.ranks.size()) + " of " +
                             std::to_string(p.first.size) + " ranks joined within " +
                             std::to_string(timeout_.count()) + " ms; missing rank(s) " + missing);
    out.push_back(std::move(e));
    it = pending_.erase(it);
  }
  return out;
}

void Rendezvous::cancel(const std::string& tenant, const std::string& group) {
  pending_.erase({tenant, group});
}

}  // namespace epic::manager
