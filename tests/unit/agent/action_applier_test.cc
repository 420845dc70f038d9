#include "agent/core/action_applier.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "agent/core/registration.h"
#include "daemon/config/config_loader.h"
#include "tests/unit/agent/agent_test_util.h"

namespace epic::agent {
namespace {

using test::switch_context;

inc::v1::Action action(uint64_t id, inc::v1::ActionKind kind, uint32_t group,
                       uint64_t memory_bytes = 0) {
  inc::v1::Action a;
  a.set_action_id(id);
  a.set_kind(kind);
  a.set_group_id(group);
  a.set_memory_bytes(memory_bytes);
  return a;
}

inc::v1::Action install(uint64_t id, const inc::v1::GroupContext& c) {
  inc::v1::Action a = action(id, inc::v1::ACTION_KIND_INSTALL_CONTEXT, c.id(),
                             vocab::group_memory_bytes(c.window(), c.pmtu()));
  *a.mutable_context() = c;
  return a;
}

struct Rig {
  test::FakeSink sink;
  // 128 slots of pmtu 1024: four window-16 groups.
  GroupTable table{
      test::test_switch(), SwitchLimits{128 * vocab::slot_bytes(1024), 1024, 4096}, {}, sink};
  ActionApplier applier{table};
};

TEST(ActionApplier, AnInstallIsAckedWithItsActionIdAndReachesTheDatapath) {
  Rig r;
  const inc::v1::AgentMessage m = r.applier.apply(install(5, switch_context(7, 200)));
  ASSERT_TRUE(m.has_ack());
  EXPECT_EQ(m.ack().action_id(), 5u);
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{7}));
  const vocab::GroupContext g = r.sink.sets().back()[0];
  EXPECT_EQ(g.window, 16u);
  ASSERT_EQ(g.children.size(), 2u);
  EXPECT_TRUE(g.children[1].is_rank);
  EXPECT_EQ(g.children[1].first_rank, 1);
  EXPECT_EQ(g.children[1].port, 1);
  EXPECT_EQ(g.children[1].local.qpn, 201u);
}

TEST(ActionApplier, ARefusedActionIsAFailWithTheReason) {
  Rig r;
  inc::v1::GroupContext c = switch_context(7, 200);
  c.mutable_children(0)->mutable_remote()->set_qpn(1u << 24);
  const inc::v1::AgentMessage m = r.applier.apply(install(6, c));
  ASSERT_TRUE(m.has_fail());
  EXPECT_EQ(m.fail().action_id(), 6u);
  EXPECT_EQ(m.fail().reason(),
            "invalid context: context.children[0].remote.qpn: 0x1000000 does not fit in 24 bits "
            "(must be < 0x1000000)");
  EXPECT_EQ(r.applier
                .apply(action(7, inc::v1::ACTION_KIND_ATTACH_SLOTS, 9,
                              vocab::group_memory_bytes(16, 1024)))
                .fail()
                .reason(),
            "group 9 has no context on this switch; install it (with its memory) instead");
  EXPECT_EQ(r.applier.apply(action(8, inc::v1::ACTION_KIND_UNSPECIFIED, 9)).fail().reason(),
            "unknown action kind 0");
}

// One bad context, refused the same way by incd's static config loader (as groups[0]) and by
// the agent (as what inc-manager sends): the same message is one GroupContext in both, read and
// checked by the same library, so only the path prefix differs.
TEST(ActionApplier, ABadContextIsRefusedAsTheConfigLoaderRefusesIt) {
  struct Bad {
    const char* what;
    std::function<void(inc::v1::GroupContext&)> breaks;
  };
  const Bad bad[] = {
      {"qpn", [](auto& c) { c.mutable_children(1)->mutable_remote()->set_qpn(1u << 24); }},
      {"window", [](auto& c) { c.set_window(24); }},
      {"overlap", [](auto& c) { c.mutable_children(1)->set_rank(0); }},
      {"port", [](auto& c) { c.mutable_children(0)->set_port("nope"); }},
      {"pmtu", [](auto& c) { c.set_pmtu(4096); }},
      {"multicast mac",
       [](auto& c) { c.mutable_children(0)->mutable_remote()->set_mac("01:00:5e:00:00:01"); }},
      {"not an inc address",
       [](auto& c) { c.mutable_children(0)->mutable_local()->set_ipv4("10.77.0.9"); }},
  };
  for (const Bad& b : bad) {
    inc::v1::GroupContext c = switch_context(7, 200);
    b.breaks(c);
    // incd's config file with the test switch (ports r0, r1, up; INC address 10.77.0.254).
    inc::v1::IncdConfig file;
    for (const vocab::SwitchPort& p : test::test_switch().ports) {
      inc::v1::IncdConfig::Port* port = file.add_ports();
      port->set_name(p.name);
      port->set_device("net_null_" + p.name);
      port->set_mtu(p.mtu);
    }
    inc::v1::IncdConfig::IncAddress* inc = file.mutable_switch_()->add_inc_addresses();
    inc->set_ipv4("10.77.0.254");
    inc->set_mac("02:ec:00:00:00:fe");
    *file.add_groups() = c;
    const incd::LoadResult loaded = incd::validate_config(file);
    // The file's errors, with the agent's name for the context ("context" for "groups[0]").
    const auto renamed = [](std::string s) {
      for (size_t at; (at = s.find("groups[0]")) != std::string::npos;) s.replace(at, 9, "context");
      return s;
    };
    vocab::ContextErrors from_file;
    for (const auto& e : loaded.errors) {
      ASSERT_EQ(e.path.rfind("groups[0]", 0), 0u) << b.what << ": " << e.to_string();
      from_file.push_back({renamed(e.path), renamed(e.message)});
    }
    ASSERT_FALSE(from_file.empty()) << b.what;
    Rig r;
    const inc::v1::AgentMessage m = r.applier.apply(install(1, c));
    ASSERT_TRUE(m.has_fail()) << b.what;
    EXPECT_EQ(m.fail().reason(), "invalid context: " + vocab::join(from_file)) << b.what;
    EXPECT_TRUE(r.sink.sets().empty()) << b.what;
  }
}

TEST(ActionApplier, RemoveAndDetachOfUnknownGroupsAreAcked) {
  Rig r;
  EXPECT_TRUE(r.applier.apply(action(1, inc::v1::ACTION_KIND_REMOVE_CONTEXT, 9)).has_ack());
  EXPECT_TRUE(r.applier.apply(action(2, inc::v1::ACTION_KIND_DETACH_SLOTS, 9)).has_ack());
  EXPECT_TRUE(r.sink.sets().empty());
}

TEST(ActionApplier, RegisterListsTheManagerGroupsAsSentWithTheirSlotState) {
  Rig r;
  ASSERT_TRUE(r.applier.apply(install(1, switch_context(7, 200))).has_ack());
  ASSERT_TRUE(r.applier.apply(install(2, switch_context(8, 300))).has_ack());
  ASSERT_TRUE(r.applier.apply(action(3, inc::v1::ACTION_KIND_DETACH_SLOTS, 8)).has_ack());
  SwitchIdentity id;
  id.switch_id = "leaf0";
  id.inc = {*vocab::parse_ipv4("10.77.0.254"), *vocab::parse_mac("02:ec:00:00:00:fe")};
  id.ports = test::test_switch().ports;
  const inc::v1::Register reg = make_register(id, r.applier).registration();
  EXPECT_EQ(reg.switch_id(), "leaf0");
  EXPECT_EQ(reg.inc_ipv4(), "10.77.0.254");
  EXPECT_EQ(reg.inc_mac(), "02:ec:00:00:00:fe");
  ASSERT_EQ(reg.ports_size(), 3);
  EXPECT_EQ(reg.ports(2).name(), "up");
  EXPECT_EQ(reg.ports(2).mtu(), 9000u);
  EXPECT_EQ(reg.capacity_bytes(), 128 * vocab::slot_bytes(1024));
  EXPECT_EQ(reg.slot_capacity(), 0u);  // deprecated, never sent
  ASSERT_EQ(reg.installed_size(), 2);
  EXPECT_EQ(reg.installed(0).group_id(), 7u);
  EXPECT_TRUE(reg.installed(0).slots_attached());
  EXPECT_EQ(reg.installed(0).context().SerializeAsString(),
            switch_context(7, 200).SerializeAsString());
  EXPECT_EQ(reg.installed(1).group_id(), 8u);
  EXPECT_FALSE(reg.installed(1).slots_attached());
  EXPECT_EQ(reg.installed(0).memory_bytes(), vocab::group_memory_bytes(16, 1024));
  EXPECT_EQ(reg.installed(1).memory_bytes(), 0u);
}

TEST(ActionApplier, ResyncRemovesWhatTheManagerDoesNotKeepAndForgetsItsContext) {
  Rig r;
  ASSERT_TRUE(r.applier.apply(install(1, switch_context(7, 200))).has_ack());
  ASSERT_TRUE(r.applier.apply(install(2, switch_context(8, 300))).has_ack());
  inc::v1::Resync keep;
  keep.add_keep_group_ids(8);
  EXPECT_EQ(r.applier.resync(keep), "");
  EXPECT_EQ(r.sink.last_ids(), (std::vector<uint32_t>{8}));
  inc::v1::Register reg;
  r.applier.list_installed(reg);
  ASSERT_EQ(reg.installed_size(), 1);
  EXPECT_EQ(reg.installed(0).group_id(), 8u);
}

}  // namespace
}  // namespace epic::agent
