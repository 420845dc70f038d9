// Test fabrics for the manager core: one switch, or leaves and spines, with ranks behind the
// leaves, and join requests for them. Addresses follow one scheme so tests can name them:
// switch `leafL` is 10.77.L.254 (MAC 02:ec:00:00:L:fe), spine S 10.78.S.254; rank R behind
// leaf L is 10.77.L.(R+1) on port rR (MAC 02:00:00:00:L:R+1).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "manager/core/inc_manager.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/memory.h"

namespace epic::manager::testing {

inline uint32_t ip(const std::string& s) { return *vocab::parse_ipv4(s); }
inline vocab::MacAddr mac(const std::string& s) { return *vocab::parse_mac(s); }

// prefix + n, appended: GCC 12 -O3 reports a false -Wrestrict on `"literal" + std::to_string(n)`
// (PR 105329).
inline std::string numbered(const char* prefix, int n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}
inline std::string leaf_name(int l) { return numbered("leaf", l); }
inline std::string spine_name(int s) { return numbered("spine", s); }
inline uint32_t rank_ip(int leaf, int r) {
  std::string s = numbered("10.77.", leaf);
  s += numbered(".", r + 1);
  return ip(s);
}
inline vocab::MacAddr rank_mac(int leaf, int r) {
  return vocab::MacAddr{0x02, 0, 0, 0, static_cast<uint8_t>(leaf), static_cast<uint8_t>(r + 1)};
}

// Switch memory counted in slots of the default pmtu 1024 (3104 bytes each): a window-16 group
// at pmtu 1024 holds slots(32) = 99328 bytes.
inline constexpr uint64_t slots(uint64_t n) { return n * vocab::slot_bytes(1024); }

struct FabricShape {
  int leaves = 1;
  int spines = 0;
  int ranks_per_leaf = 4;
  uint32_t leaf_slots = 1024;  // capacity: slots(leaf_slots) bytes
  uint32_t spine_slots = 1024;
  uint16_t port_mtu = 9000;
  uint32_t max_window = 1024;
  uint16_t max_pmtu = 4096;
};

inline SwitchSpec leaf_spec(const FabricShape& f, int l) {
  SwitchSpec s;
  s.id = leaf_name(l);
  s.inc_ipv4 = ip(numbered("10.77.", l) + ".254");
  s.inc_mac = vocab::MacAddr{0x02, 0xec, 0, 0, static_cast<uint8_t>(l), 0xfe};
  for (int r = 0; r < f.ranks_per_leaf; ++r) s.ports.push_back({numbered("r", r), f.port_mtu});
  for (int u = 0; u < f.spines; ++u) s.ports.push_back({numbered("up", u), f.port_mtu});
  s.capacity_bytes = slots(f.leaf_slots);
  s.max_window = f.max_window;
  s.max_pmtu = f.max_pmtu;
  return s;
}

inline SwitchSpec spine_spec(const FabricShape& f, int sp) {
  SwitchSpec s;
  s.id = spine_name(sp);
  s.inc_ipv4 = ip(numbered("10.78.", sp) + ".254");
  s.inc_mac = vocab::MacAddr{0x02, 0xec, 0, 1, static_cast<uint8_t>(sp), 0xfe};
  for (int l = 0; l < f.leaves; ++l) s.ports.push_back({numbered("d", l), f.port_mtu});
  s.capacity_bytes = slots(f.spine_slots);
  s.max_window = f.max_window;
  s.max_pmtu = f.max_pmtu;
  return s;
}

// Leaves and spines, every leaf's upU cabled to spine U's dL, ranks behind every leaf, and a
// tenant "t" without limits.
inline void build_fabric(IncManager& m, const FabricShape& f) {
  for (int l = 0; l < f.leaves; ++l) ASSERT_TRUE(m.add_switch(leaf_spec(f, l)).ok());
  for (int s = 0; s < f.spines; ++s) ASSERT_TRUE(m.add_switch(spine_spec(f, s)).ok());
  for (int l = 0; l < f.leaves; ++l) {
    for (int s = 0; s < f.spines; ++s) {
      ASSERT_TRUE(
          m.add_link({{leaf_name(l), numbered("up", s)}, {spine_name(s), numbered("d", l)}}).ok());
    }
    for (int r = 0; r < f.ranks_per_leaf; ++r) {
      ASSERT_TRUE(
          m.attach_rank({rank_ip(l, r), rank_mac(l, r), {leaf_name(l), numbered("r", r)}}).ok());
    }
  }
  ASSERT_TRUE(m.set_tenant({.name = "t", .quota = {}, .reserved = {}}).ok());
}

// Rank i of the group sits at (leaf, port index) hosts[i]; QPNs start at qpn_base.
inline GroupRequest make_request(const std::string& name,
                                 const std::vector<std::pair<int, int>>& hosts,
                                 uint32_t window = 16, uint32_t qpn_base = 0x11,
                                 const std::string& tenant = "t") {
  GroupRequest r;
  r.tenant = tenant;
  r.name = name;
  r.window = window;
  r.pmtu = 1024;
  for (size_t i = 0; i < hosts.size(); ++i) {
    r.ranks.push_back({static_cast<uint32_t>(i), rank_ip(hosts[i].first, hosts[i].second),
                       qpn_base + static_cast<uint32_t>(i), std::nullopt});
  }
  return r;
}

// `n` ranks spread over `leaves` leaves in order (ranks of one leaf consecutive).
inline std::vector<std::pair<int, int>> hosts_on(int leaves, int per_leaf) {
  std::vector<std::pair<int, int>> h;
  for (int l = 0; l < leaves; ++l) {
    for (int r = 0; r < per_leaf; ++r) h.emplace_back(l, r);
  }
  return h;
}

// Acknowledges every pending switch of the group; returns the last ack's effects.
inline Effects ack_all(IncManager& m, uint32_t group_id, Millis now) {
  Effects last;
  const std::set<SwitchId> pending = m.find_group(group_id)->pending;
  for (const auto& sw : pending) {
    auto r = m.ack(group_id, sw, now);
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    if (r.ok()) last = r.value();
  }
  return last;
}

// Joins and installs; returns the group id (0 on failure, with a test failure).
inline uint32_t install(IncManager& m, const GroupRequest& r, Millis now) {
  auto j = m.join(r, now);
  EXPECT_TRUE(j.ok()) << j.error().to_string();
  if (!j.ok()) return 0;
  EXPECT_EQ(j.value().state, GroupState::kInstalling);
  ack_all(m, j.value().group_id, now);
  return j.value().group_id;
}

inline std::vector<std::pair<ActionKind, SwitchId>> action_list(const Effects& fx) {
  std::vector<std::pair<ActionKind, SwitchId>> out;
  for (const auto& a : fx.actions) out.emplace_back(a.kind, a.switch_id);
  return out;
}

}  // namespace epic::manager::testing
