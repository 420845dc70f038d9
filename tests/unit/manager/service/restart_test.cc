// inc-manager's state survives a restart (the store under --state-dir), and a switch whose
// agent goes away keeps its groups; a re-registering agent is re-synchronised.
#include <fstream>
#include <set>

#include "tests/unit/manager/service/harness.h"

namespace epic::manager::service::testing {
namespace {

pb::ListGroupsResponse list_groups(const TestManager& m) {
  pb::ListGroupsResponse out;
  auto ctx = deadline();
  EXPECT_TRUE(m.stub()->ListGroups(ctx.get(), {}, &out).ok());
  return out;
}

TEST(RestartTest, RestartedManagerRecoversGroupsAndResyncsTheAgent) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options(dir.path()));
  pb::Action installed;
  {
    FakeAgent agent(m.channel());
    agent.register_switch(FakeAgent::leaf0(256));
    installed = install_group(m, agent);
  }
  m.stop();

  m.start(test_options(dir.path()));
  auto g = list_groups(m);
  ASSERT_EQ(g.groups_size(), 1);
  EXPECT_EQ(g.groups(0).group_id(), installed.group_id());
  EXPECT_EQ(g.groups(0).state(), "installed");
  EXPECT_EQ(g.groups(0).grants(0).bytes(), slots(32));

  // The agent serves the group: keep it, and re-send nothing for a context that matches.
  FakeAgent agent(m.channel());
  pb::Register reg = FakeAgent::leaf0(256);
  auto* kept = reg.add_installed();
  kept->set_group_id(installed.group_id());
  *kept->mutable_context() = installed.context();
  kept->set_slots_attached(true);
  EXPECT_EQ(agent.register_switch(reg), std::vector<uint32_t>{installed.group_id()});
  EXPECT_FALSE(agent.next(300ms)) << "a matching context is not re-installed";
}

pb::InstalledGroup served(const pb::Action& install) {
  pb::InstalledGroup g;
  g.set_group_id(install.group_id());
  *g.mutable_context() = install.context();
  g.set_slots_attached(true);
  g.set_memory_bytes(install.memory_bytes());
  return g;
}

// Issue 16: a manager that recovered its store removes only what it knows to be gone — a group
// it issued and destroyed while the agent was away; a group id it never issued is kept.
TEST(RestartTest, ARecoveredManagerRemovesOnlyTheGroupsItKnowsAreGone) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options(dir.path()));
  pb::Action gone, live;
  {
    FakeAgent agent(m.channel());
    agent.register_switch(FakeAgent::leaf0(256));
    gone = install_group(m, agent, "gone");
    pb::DestroyGroupRequest d;
    d.set_group_id(gone.group_id());
    pb::DestroyGroupResponse out;
    auto ctx = deadline();
    ASSERT_TRUE(m.stub()->DestroyGroup(ctx.get(), d, &out).ok());
    auto remove = agent.next();
    ASSERT_TRUE(remove && remove->has_action());
    EXPECT_EQ(remove->action().kind(), pb::ACTION_KIND_REMOVE_CONTEXT);
    agent.ack(remove->action().action_id());
    live = install_group(m, agent, "live");
  }
  m.stop();
  m.start(test_options(dir.path()));
  FakeAgent agent(m.channel());
  pb::Register reg = FakeAgent::leaf0(256);
  *reg.add_installed() = served(gone);  // its removal was lost with the agent: still served
  *reg.add_installed() = served(live);
  pb::InstalledGroup other;  // from another manager's store
  other.set_group_id(99);
  other.mutable_context()->set_id(99);
  *reg.add_installed() = other;
  EXPECT_EQ(agent.register_switch(reg), (std::vector<uint32_t>{live.group_id(), 99}));
}

// Issue 16: a manager restarted without its state never wipes running groups. It keeps what
// the agents serve as foreign groups, issues no id or QPN that collides with them, and removes
// one only when an operator destroys it.
TEST(RestartTest, AStatelessRestartKeepsEveryRunningGroup) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options());  // no --state-dir
  pb::Action running;
  {
    FakeAgent agent(m.channel());
    agent.register_switch(FakeAgent::leaf0(256));
    running = install_group(m, agent, "job");
  }
  m.stop();
  m.start(test_options());  // everything it knew is gone
  FakeAgent agent(m.channel());
  pb::Register reg = FakeAgent::leaf0(256);
  *reg.add_installed() = served(running);
  EXPECT_EQ(agent.register_switch(reg), std::vector<uint32_t>{running.group_id()});
  EXPECT_FALSE(agent.next(300ms)) << "nothing is removed or re-installed";

  // A new group: another id, and none of the running group's switch QPNs.
  const pb::Action fresh = install_group(m, agent, "next");
  EXPECT_NE(fresh.group_id(), running.group_id());
  std::set<uint32_t> held;
  for (const auto& c : running.context().children()) held.insert(c.local().qpn());
  for (const auto& c : fresh.context().children()) {
    EXPECT_FALSE(held.count(c.local().qpn())) << "QPN " << c.local().qpn() << " reused";
  }

  // The operator removes the foreign group: the agent is told to.
  pb::DestroyGroupRequest d;
  d.set_group_id(running.group_id());
  pb::DestroyGroupResponse out;
  auto ctx = deadline();
  ASSERT_TRUE(m.stub()->DestroyGroup(ctx.get(), d, &out).ok());
  EXPECT_EQ(out.group_id(), running.group_id());
  auto remove = agent.next();
  ASSERT_TRUE(remove && remove->has_action());
  EXPECT_EQ(remove->action().kind(), pb::ACTION_KIND_REMOVE_CONTEXT);
  EXPECT_EQ(remove->action().group_id(), running.group_id());
  agent.ack(remove->action().action_id());
  // It is gone for good: a second destroy does not find it.
  auto again = deadline();
  EXPECT_EQ(m.stub()->DestroyGroup(again.get(), d, &out).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST(RestartTest, AgentWithoutTheContextGetsItReinstalled) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options(dir.path()));
  FakeAgent first(m.channel());
  first.register_switch(FakeAgent::leaf0(256));
  const pb::Action installed = install_group(m, first);
  first.close();

  FakeAgent again(m.channel());  // incd restarted: it serves nothing
  EXPECT_EQ(again.register_switch(FakeAgent::leaf0(256)),
            std::vector<uint32_t>{installed.group_id()});
  auto repair = again.next();
  ASSERT_TRUE(repair && repair->has_action());
  EXPECT_EQ(repair->action().kind(), pb::ACTION_KIND_INSTALL_CONTEXT);
  EXPECT_EQ(repair->action().memory_bytes(), slots(32));
  EXPECT_EQ(repair->action().context().SerializeAsString(),
            installed.context().SerializeAsString());
}

TEST(RestartTest, DisconnectedAgentKeepsItsGroupsDuringTheGracePeriod) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options());
  {
    FakeAgent agent(m.channel());
    agent.register_switch(FakeAgent::leaf0(256));
    install_group(m, agent);
  }
  std::this_thread::sleep_for(100ms);
  pb::ListSwitchesResponse sw;
  auto ctx = deadline();
  ASSERT_TRUE(m.stub()->ListSwitches(ctx.get(), {}, &sw).ok());
  ASSERT_EQ(sw.switches_size(), 1);
  EXPECT_FALSE(sw.switches(0).connected());
  auto g = list_groups(m);
  ASSERT_EQ(g.groups_size(), 1);
  EXPECT_EQ(g.groups(0).state(), "installed");
}

TEST(RestartTest, SwitchAwayLongerThanTheGraceIsRemovedAndItsGroupsBreak) {
  TempDir dir;
  TestManager m(dir);
  ServiceOptions o = test_options();
  o.switch_grace = Millis{200};
  m.start(o);
  {
    FakeAgent agent(m.channel());
    agent.register_switch(FakeAgent::leaf0(256));
    install_group(m, agent);
  }
  std::this_thread::sleep_for(600ms);
  pb::ListSwitchesResponse sw;
  auto ctx = deadline();
  ASSERT_TRUE(m.stub()->ListSwitches(ctx.get(), {}, &sw).ok());
  EXPECT_EQ(sw.switches_size(), 0);
  auto g = list_groups(m);
  ASSERT_EQ(g.groups_size(), 1);
  EXPECT_EQ(g.groups(0).state(), "broken");
}

TEST(RestartTest, MissingStateDirIsCreatedAndAGroupSurvivesTheRestart) {
  TempDir dir;
  const std::string state = dir.path() + "/not/there/yet";
  TestManager m(dir);
  m.start(test_options(state));
  ASSERT_TRUE(std::filesystem::exists(state + "/manager-store.jsonl"));
  {
    FakeAgent agent(m.channel());
    agent.register_switch(FakeAgent::leaf0(256));
    install_group(m, agent);
  }
  m.stop();
  m.start(test_options(state));
  EXPECT_EQ(list_groups(m).groups_size(), 1);
}

TEST(RestartTest, UnwritableStateDirStopsTheStart) {
  TempDir dir;
  const std::string file = dir.path() + "/a-file";
  { std::ofstream(file) << "x"; }
  ServerOptions o;
  o.listen = "unix:" + dir.path() + "/m.sock";
  o.service = test_options(file + "/state");
  auto s = ManagerServer::start(std::move(o), quiet_log());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("--state-dir " + file + "/state: cannot create it"),
            std::string::npos)
      << s.error().message;
}

TEST(RestartTest, DeclaredPartitionOnASwitchNotYetRegisteredAppliesWhenItRegisters) {
  TempDir dir;
  TestManager m(dir);
  ServiceOptions o = test_options();
  o.declared.tenants.push_back(Tenant{.name = "team-a", .reserved = {{"leaf0", slots(64)}}});
  m.start(o);  // leaf0 is unknown here: the partition waits for it
  FakeAgent agent(m.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  pb::GetMemoryResponse mem;
  auto ctx = deadline();
  ASSERT_TRUE(m.stub()->GetMemory(ctx.get(), {}, &mem).ok());
  ASSERT_EQ(mem.switches_size(), 1);
  EXPECT_EQ(mem.switches(0).shared_capacity_bytes(), slots(256 - 64));
  bool found = false;
  for (const auto& t : mem.switches(0).tenants()) {
    if (t.tenant() == "team-a") {
      found = true;
      EXPECT_EQ(t.reserved_bytes(), slots(64));
    }
  }
  EXPECT_TRUE(found);
}

TEST(RestartTest, AgentWithADifferentContextUnderTheIdGetsItRemovedThenReinstalled) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options(dir.path()));
  FakeAgent first(m.channel());
  first.register_switch(FakeAgent::leaf0(256));
  const pb::Action installed = install_group(m, first);
  first.close();

  FakeAgent again(m.channel());
  pb::Register reg = FakeAgent::leaf0(256);
  auto* other = reg.add_installed();
  other->set_group_id(installed.group_id());
  *other->mutable_context() = installed.context();
  other->mutable_context()->set_window(installed.context().window() * 2);
  other->set_memory_bytes(installed.memory_bytes() * 2);
  other->set_slots_attached(true);
  EXPECT_EQ(again.register_switch(reg), std::vector<uint32_t>{installed.group_id()});
  auto remove = again.next();
  ASSERT_TRUE(remove && remove->has_action());
  EXPECT_EQ(remove->action().kind(), pb::ACTION_KIND_REMOVE_CONTEXT);
  auto install = again.next();
  ASSERT_TRUE(install && install->has_action());
  EXPECT_EQ(install->action().kind(), pb::ACTION_KIND_INSTALL_CONTEXT);
  EXPECT_EQ(install->action().context().SerializeAsString(),
            installed.context().SerializeAsString());
}

TEST(RestartTest, ASecondManagerOnTheSameStateDirIsRefused) {
  TempDir dir;
  TestManager first(dir);
  first.start(test_options(dir.path()));
  ServerOptions o;
  o.listen = "unix:" + dir.path() + "/second.sock";
  o.service = test_options(dir.path());
  auto second = ManagerServer::start(std::move(o), quiet_log());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(second.error().message.find("is in use by another inc-manager"), std::string::npos)
      << second.error().message;
  first.stop();  // the lock goes with the first manager
  TestManager again(dir);
  again.start(test_options(dir.path()));
}

// A foreign group stays foreign across a restart with the store: the store keeps its id, so a
// recovered manager does not take it for one it issued and destroyed (its next_group_id has
// moved past it by then).
TEST(RestartTest, AForeignGroupSurvivesARestartWithTheStore) {
  TempDir dir;
  pb::Action running;
  {
    TestManager first(dir);
    first.start(test_options());  // the job's manager, without a state dir
    FakeAgent agent(first.channel());
    agent.register_switch(FakeAgent::leaf0(256));
    running = install_group(first, agent, "job");
  }
  TestManager m(dir);
  m.start(test_options(dir.path()));  // a new manager with an empty state dir
  pb::Action fresh;
  {
    FakeAgent agent(m.channel());
    pb::Register reg = FakeAgent::leaf0(256);
    *reg.add_installed() = served(running);
    EXPECT_EQ(agent.register_switch(reg), std::vector<uint32_t>{running.group_id()});
    fresh = install_group(m, agent, "next");  // skips the foreign id
  }
  ASSERT_GT(fresh.group_id(), running.group_id());
  m.stop();
  m.start(test_options(dir.path()));
  FakeAgent agent(m.channel());
  pb::Register reg = FakeAgent::leaf0(256);
  *reg.add_installed() = served(running);
  *reg.add_installed() = served(fresh);
  EXPECT_EQ(agent.register_switch(reg),
            (std::vector<uint32_t>{fresh.group_id(), running.group_id()}));
}

}  // namespace
}  // namespace epic::manager::service::testing
