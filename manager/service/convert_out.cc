#include "manager/service/convert_out.h"

#include <google/protobuf/util/message_differencer.h>

#include "manager/core/group_arith.h"
#include "manager/core/limits.h"
#include "proto/context/context_proto.h"
#include "proto/vocab/addr.h"

namespace epic::manager::service {
namespace {

pb::SwitchPortRef port_ref(const SwitchPort& p) {
  pb::SwitchPortRef out;
  out.set_switch_id(p.switch_id);
  out.set_port(p.port);
  return out;
}

void fill_child(pb::ContextChild& out, const TreeChild& c) {
  out.set_port(c.port);
  out.set_is_rank(c.is_rank);
  out.set_first_rank(c.first_rank);
  out.set_rank_count(c.rank_count);
  if (!c.is_rank) *out.mutable_child_port() = port_ref(c.child_port);
  *out.mutable_remote() = to_proto(c.remote);
  *out.mutable_local() = to_proto(c.local);
}

void fill_parent(pb::ContextParent& out, const TreeParent& p) {
  out.set_port(p.port);
  *out.mutable_parent_port() = port_ref(p.parent_port);
  *out.mutable_remote() = to_proto(p.remote);
  *out.mutable_local() = to_proto(p.local);
}

pb::GroupContext::Endpoint context_endpoint(const Endpoint& e) {
  pb::GroupContext::Endpoint out;
  out.set_ipv4(vocab::format_ipv4(e.ipv4));
  out.set_mac(vocab::format_mac(e.mac));
  out.set_qpn(e.qpn);
  return out;
}

// Text forms differ in case only when an agent formats MACs its own way.
void normalise(pb::GroupContext::Endpoint& e) {
  if (auto m = vocab::parse_mac(e.mac())) e.set_mac(vocab::format_mac(*m));
}

pb::GroupContext comparable(const pb::GroupContext& c) {
  pb::GroupContext out = c;
  for (auto& child : *out.mutable_children()) {
    normalise(*child.mutable_remote());
    normalise(*child.mutable_local());
  }
  if (out.has_parent()) {
    normalise(*out.mutable_parent()->mutable_remote());
    normalise(*out.mutable_parent()->mutable_local());
  }
  return out;
}

}  // namespace

pb::Endpoint to_proto(const Endpoint& e) {
  pb::Endpoint out;
  out.set_ipv4(vocab::format_ipv4(e.ipv4));
  out.set_mac(vocab::format_mac(e.mac));
  out.set_qpn(e.qpn);
  return out;
}

pb::GroupContext to_proto(const SwitchContext& c) {
  pb::GroupContext out;
  out.set_id(c.group_id);
  out.set_ranks(c.num_ranks);
  out.set_initial_psn(c.initial_psn);
  out.set_window(c.window);
  out.set_pmtu(c.pmtu);
  vocab::GroupContext mode;
  mode.mode = c.mode;
  mode.hop_timeout_us = c.hop_timeout_us;
  mode.pkey = c.pkey;
  vocab::write_mode(mode, out);
  vocab::write_pkey(mode, out);
  mode.arith = c.arith;
  vocab::write_arith(mode, out);
  mode.dscp = c.dscp;
  vocab::write_dscp(mode, out);
  for (const TreeChild& child : c.children) {
    pb::GroupContext::Child& to = *out.add_children();
    to.set_port(child.port);
    if (child.is_rank) {
      to.set_rank(child.first_rank);
    } else {
      to.mutable_rank_range()->set_first(child.first_rank);
      to.mutable_rank_range()->set_count(child.rank_count);
    }
    *to.mutable_remote() = context_endpoint(child.remote);
    *to.mutable_local() = context_endpoint(child.local);
  }
  if (c.parent) {
    pb::GroupContext::Parent& to = *out.mutable_parent();
    to.set_port(c.parent->port);
    *to.mutable_remote() = context_endpoint(c.parent->remote);
    *to.mutable_local() = context_endpoint(c.parent->local);
  }
  return out;
}

pb::Action to_proto(const SwitchAction& a, uint64_t action_id) {
  pb::Action out;
  out.set_action_id(action_id);
  switch (a.kind) {
    case ActionKind::kInstallContext:
      out.set_kind(pb::ACTION_KIND_INSTALL_CONTEXT);
      break;
    case ActionKind::kRemoveContext:
      out.set_kind(pb::ACTION_KIND_REMOVE_CONTEXT);
      break;
    case ActionKind::kDetachSlots:
      out.set_kind(pb::ACTION_KIND_DETACH_SLOTS);
      break;
    case ActionKind::kAttachSlots:
      out.set_kind(pb::ACTION_KIND_ATTACH_SLOTS);
      break;
  }
  out.set_group_id(a.group_id);
  if (a.context) *out.mutable_context() = to_proto(*a.context);
  out.set_memory_bytes(a.memory_bytes);
  return out;
}

pb::JoinGroupResponse to_proto(const RankAnswer& a) {
  pb::JoinGroupResponse out;
  out.set_group_id(a.group_id);
  out.set_rank(a.rank);
  out.set_switch_id(a.switch_id);
  auto* peer = out.mutable_peer();
  peer->set_ipv4(vocab::format_ipv4(a.peer.ipv4));
  peer->set_gid(vocab::format_ipv6(a.peer_gid));
  peer->set_mac(vocab::format_mac(a.peer.mac));
  peer->set_qpn(a.peer.qpn);
  out.set_initial_psn(a.initial_psn);
  out.set_pmtu(a.pmtu);
  out.set_window(a.window);
  out.set_mode(mode_to_proto(a.mode));
  out.set_accumulator(a.arith.profile == vocab::AccumProfile::kKulischFixed
                          ? pb::ACCUM_KULISCH_FIXED
                          : pb::ACCUM_UNSPECIFIED);
  out.set_dtype(static_cast<pb::ElementType>(vocab::dtype_to_proto(a.arith.dtype)));
  out.set_dscp(a.dscp);
  return out;
}

pb::Tenant to_proto(const Tenant& t) {
  pb::Tenant out;
  out.set_name(t.name);
  auto* q = out.mutable_quota();
  if (t.quota.max_bytes_per_switch) q->set_max_bytes_per_switch(*t.quota.max_bytes_per_switch);
  if (t.quota.max_bytes_total) q->set_max_bytes_total(*t.quota.max_bytes_total);
  if (t.quota.max_groups) q->set_max_groups(*t.quota.max_groups);
  if (t.quota.max_ranks_per_group) q->set_max_ranks_per_group(*t.quota.max_ranks_per_group);
  for (const auto& [sw, bytes] : t.reserved) (*out.mutable_reserved_bytes())[sw] = bytes;
  if (t.default_dscp) out.set_default_dscp(*t.default_dscp);
  return out;
}

pb::Link to_proto(const Link& l) {
  pb::Link out;
  *out.mutable_a() = port_ref(l.a);
  *out.mutable_b() = port_ref(l.b);
  return out;
}

pb::RankAttachment to_proto(const RankAttachment& r) {
  pb::RankAttachment out;
  out.set_ipv4(vocab::format_ipv4(r.ipv4));
  out.set_mac(vocab::format_mac(r.mac));
  *out.mutable_at() = port_ref(r.at);
  return out;
}

pb::GroupMode mode_to_proto(vocab::GroupMode mode) {
  return mode == vocab::GroupMode::kMode3 ? pb::GROUP_MODE_3 : pb::GROUP_MODE_2;
}

pb::GroupInfo group_info(const Group& g, const IncManager& core) {
  pb::GroupInfo out;
  out.set_group_id(g.id);
  out.set_tenant(g.request.tenant);
  out.set_name(g.request.name);
  out.set_state(std::string(group_state_name(g.state)));
  out.set_size(static_cast<uint32_t>(g.request.ranks.size()));
  out.set_window(g.request.window);
  out.set_pmtu(g.request.pmtu);
  out.set_initial_psn(g.initial_psn);
  for (const RankRequest& r : g.request.ranks) {
    auto* rank = out.add_ranks();
    rank->set_rank(r.rank);
    rank->set_ipv4(vocab::format_ipv4(r.ipv4));
    rank->set_qpn(r.qpn);
    if (r.mac) rank->set_mac(vocab::format_mac(*r.mac));
  }
  if (!g.tree.nodes.empty()) {
    auto* tree = out.mutable_tree();
    tree->set_root(g.tree.root);
    tree->set_depth(g.tree.depth);
    for (const TreeNode& n : g.tree.nodes) {
      auto* node = tree->add_nodes();
      node->set_switch_id(n.switch_id);
      node->set_level(n.level);
      for (const TreeChild& c : n.children) fill_child(*node->add_children(), c);
      if (n.parent) fill_parent(*node->mutable_parent(), *n.parent);
    }
  }
  for (const MemoryGrant& s : g.grants) {
    auto* grant = out.add_grants();
    grant->set_switch_id(s.switch_id);
    grant->set_bytes(s.bytes);
    grant->set_from_partition_bytes(s.from_partition);
  }
  out.set_reason(g.state == GroupState::kBroken ? g.broken_reason : g.wait_reason);
  out.set_created_unix_ms(g.created.count());
  out.set_last_activity_unix_ms(g.last_activity.count());
  out.set_mode(mode_to_proto(mode_of(g.request)));
  if (g.request.pkey) out.set_pkey(*g.request.pkey);
  out.set_accumulator(g.request.arith.profile == vocab::AccumProfile::kKulischFixed
                          ? pb::ACCUM_KULISCH_FIXED
                          : pb::ACCUM_UNSPECIFIED);
  out.set_dtype(static_cast<pb::ElementType>(vocab::dtype_to_proto(g.request.arith.dtype)));
  out.set_dscp(g.request.dscp.value_or(0));
  const ExactFigures exact =
      exact_figures(g.request.arith, static_cast<uint32_t>(g.request.ranks.size()));
  out.set_exact_width_bits(exact.width_bits);
  out.set_accum_bytes_per_element(exact.accum_bytes_per_element);
  out.set_hop_timeout_us(g.hop_timeout_us);
  for (const ModeCost& c : core.mode_costs(g)) {
    auto* cost = out.add_mode_costs();
    cost->set_mode(mode_to_proto(c.mode));
    cost->set_window(c.window);
    cost->set_bytes_per_switch(c.bytes_per_switch);
  }
  return out;
}

pb::SwitchInfo switch_info(const SwitchSpec& s, const IncManager& core) {
  pb::SwitchInfo out;
  out.set_switch_id(s.id);
  out.set_inc_ipv4(vocab::format_ipv4(s.inc_ipv4));
  out.set_inc_mac(vocab::format_mac(s.inc_mac));
  for (const PortSpec& p : s.ports) {
    auto* port = out.add_ports();
    port->set_name(p.name);
    port->set_mtu(p.mtu);
  }
  out.set_capacity_bytes(s.capacity_bytes);
  out.set_max_window(s.max_window);
  out.set_max_pmtu(s.max_pmtu);
  uint64_t granted = 0;
  uint32_t groups = 0;
  for (const auto& [id, g] : core.groups()) {
    if (g.tree.node(s.id)) ++groups;
    for (const MemoryGrant& grant : g.grants) {
      if (grant.switch_id == s.id) granted += grant.bytes;
    }
  }
  out.set_granted_bytes(granted);
  out.set_groups(groups);
  return out;
}

pb::SwitchMemory switch_memory(const SwitchId& id, const SwitchBook& book, const IncManager& core) {
  pb::SwitchMemory out;
  out.set_switch_id(id);
  out.set_capacity_bytes(book.capacity);
  uint64_t granted = 0;
  for (const auto& [tenant, held] : book.held) granted += held;
  out.set_granted_bytes(granted);
  out.set_free_bytes(book.capacity - granted);
  out.set_shared_capacity_bytes(book.shared_capacity());
  out.set_shared_used_bytes(book.shared_used);
  for (const auto& [name, tenant] : core.tenants()) {
    auto* t = out.add_tenants();
    t->set_tenant(name);
    auto r = book.reserved.find(name);
    t->set_reserved_bytes(r == book.reserved.end() ? 0 : r->second);
    t->set_held_bytes(core.ledger().held_on(name, id));
    t->set_free_bytes(core.ledger().free_for(name, id));
  }
  return out;
}

std::optional<SwitchContext> context_on(const Group& g, const SwitchId& sw) {
  const TreeNode* n = g.tree.node(sw);
  if (!n) return std::nullopt;
  uint64_t bytes = 0;
  for (const MemoryGrant& s : g.grants) {
    if (s.switch_id == sw) bytes = s.bytes;
  }
  return switch_context(g, *n, bytes);
}

bool same_context(const pb::GroupContext& agent, const pb::GroupContext& manager) {
  return google::protobuf::util::MessageDifferencer::Equals(comparable(agent), comparable(manager));
}

}  // namespace epic::manager::service
