#include "agent/core/context_codec.h"

#include <string>

namespace epic::agent {
namespace {

using Group = inc::v1::IncdConfig::Group;

void copy_endpoint(const inc::v1::Endpoint& from, inc::v1::IncdConfig::Endpoint* to) {
  to->set_ipv4(from.ipv4());
  to->set_mac(from.mac());
  to->set_qpn(from.qpn());
}

}  // namespace

std::optional<Group> to_group_message(const inc::v1::SwitchContext& c,
                                      vocab::ContextErrors& errors) {
  const size_t errors_before = errors.size();
  Group g;
  g.set_id(c.group_id());
  g.set_ranks(c.num_ranks());
  g.set_initial_psn(c.initial_psn());
  g.set_window(c.window());
  g.set_pmtu(c.pmtu());
  for (int i = 0; i < c.children_size(); ++i) {
    const inc::v1::ContextChild& from = c.children(i);
    inc::v1::IncdConfig::Child* to = g.add_children();
    to->set_port(from.port());
    if (from.is_rank()) {
      if (from.rank_count() > 1) {
        errors.push_back({vocab::index("context.children", static_cast<size_t>(i)) + ".rank_count",
                          "a rank child is one rank NIC; rank_count " +
                              std::to_string(from.rank_count()) + " must be 1"});
      }
      to->set_rank(from.first_rank());
    } else {
      to->mutable_rank_range()->set_first(from.first_rank());
      to->mutable_rank_range()->set_count(from.rank_count());
    }
    if (from.has_remote()) copy_endpoint(from.remote(), to->mutable_remote());
    if (from.has_local()) copy_endpoint(from.local(), to->mutable_local());
  }
  if (c.has_parent()) {
    const inc::v1::ContextParent& from = c.parent();
    inc::v1::IncdConfig::Parent* to = g.mutable_parent();
    to->set_port(from.port());
    if (from.has_remote()) copy_endpoint(from.remote(), to->mutable_remote());
    if (from.has_local()) copy_endpoint(from.local(), to->mutable_local());
  }
  if (errors.size() != errors_before) return std::nullopt;
  return g;
}

}  // namespace epic::agent
