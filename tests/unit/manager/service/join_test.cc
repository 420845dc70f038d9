// inc-manager over gRPC: agents register, ranks rendezvous, installs are acknowledged, ranks
// are answered; refusals carry the precise status codes and leave nothing installed.
#include <set>
#include <vector>

#include "tests/unit/manager/service/harness.h"

namespace epic::manager::service::testing {
namespace {

class JoinTest : public ::testing::Test {
 protected:
  void SetUp() override { manager_.start(test_options()); }
  pb::GetMemoryResponse memory() {
    pb::GetMemoryResponse out;
    auto ctx = deadline();
    EXPECT_TRUE(manager_.stub()->GetMemory(ctx.get(), {}, &out).ok());
    return out;
  }
  pb::ListGroupsResponse groups() {
    pb::ListGroupsResponse out;
    auto ctx = deadline();
    EXPECT_TRUE(manager_.stub()->ListGroups(ctx.get(), {}, &out).ok());
    return out;
  }
  grpc::Status join_now(const pb::JoinGroupRequest& r) {
    pb::JoinGroupResponse out;
    auto ctx = deadline(5s);
    return manager_.stub()->JoinGroup(ctx.get(), r, &out);
  }
  // True once one rendezvous is forming (a rank waits in it), within 4 s.
  bool one_pending() {
    for (int i = 0; i < 200; ++i) {
      if (groups().pending_size() == 1) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  TempDir dir_;
  TestManager manager_{dir_};
};

TEST_F(JoinTest, RegisteredAgentIsListedAsConnectedWithItsCapacity) {
  FakeAgent agent(manager_.channel());
  EXPECT_TRUE(agent.register_switch(FakeAgent::leaf0(256)).empty());
  pb::ListSwitchesResponse sw;
  auto ctx = deadline();
  ASSERT_TRUE(manager_.stub()->ListSwitches(ctx.get(), {}, &sw).ok());
  ASSERT_EQ(sw.switches_size(), 1);
  EXPECT_EQ(sw.switches(0).switch_id(), "leaf0");
  EXPECT_TRUE(sw.switches(0).connected());
  EXPECT_EQ(sw.switches(0).capacity_bytes(), slots(256));
  EXPECT_EQ(sw.switches(0).agent_version(), "fake-agent");
  EXPECT_EQ(sw.switches(0).ports_size(), 8);
}

TEST_F(JoinTest, ConcurrentRanksAreAnsweredOnceTheAgentAcksTheInstall) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  std::vector<std::unique_ptr<AsyncJoin>> ranks;
  for (uint32_t r = 0; r < 4; ++r) {
    ranks.push_back(std::make_unique<AsyncJoin>(manager_, join_request("job-1", 4, r)));
  }
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  const pb::Action& a = install->action();
  EXPECT_EQ(a.kind(), pb::ACTION_KIND_INSTALL_CONTEXT);
  EXPECT_EQ(a.memory_bytes(), slots(32));  // 2 * window slots of pmtu 1024
  EXPECT_EQ(a.context().id(), a.group_id());
  EXPECT_EQ(a.context().ranks(), 4u);
  EXPECT_EQ(a.context().window(), 16u);
  EXPECT_FALSE(a.context().has_parent());  // leaf0 is the root
  ASSERT_EQ(a.context().children_size(), 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(a.context().children(r).has_rank());
    EXPECT_EQ(a.context().children(r).rank(), static_cast<uint32_t>(r));
    EXPECT_EQ(a.context().children(r).port(), rank_port(r));
    EXPECT_EQ(a.context().children(r).remote().ipv4(), rank_ipv4(r));
    EXPECT_EQ(a.context().children(r).remote().qpn(), 0x100u + r);
    EXPECT_EQ(a.context().children(r).local().ipv4(), "10.77.0.254");
  }
  agent.ack(a.action_id());
  std::set<uint32_t> qpns;
  for (uint32_t r = 0; r < 4; ++r) {
    const JoinOutcome& o = ranks[r]->get();
    ASSERT_TRUE(o.status.ok()) << o.status.error_message();
    EXPECT_EQ(o.response.group_id(), a.group_id());
    EXPECT_EQ(o.response.rank(), r);
    EXPECT_EQ(o.response.switch_id(), "leaf0");
    EXPECT_EQ(o.response.peer().ipv4(), "10.77.0.254");
    EXPECT_EQ(o.response.peer().mac(), "02:ec:00:00:00:fe");
    EXPECT_EQ(o.response.peer().gid(), "::ffff:10.77.0.254");
    EXPECT_EQ(o.response.peer().qpn(), a.context().children(r).local().qpn());
    EXPECT_EQ(o.response.initial_psn(), a.context().initial_psn());
    EXPECT_EQ(o.response.window(), 16u);
    EXPECT_EQ(o.response.pmtu(), 1024u);
    qpns.insert(o.response.peer().qpn());
  }
  EXPECT_EQ(qpns.size(), 4u);  // one virtual QP per rank edge
  auto g = groups();
  ASSERT_EQ(g.groups_size(), 1);
  EXPECT_EQ(g.groups(0).state(), "installed");
  EXPECT_EQ(g.groups(0).tree().root(), "leaf0");
  EXPECT_EQ(memory().switches(0).granted_bytes(), slots(32));
}

// Ranks that leave the pmtu to the manager get the largest the tree carries: 4096 behind
// jumbo-frame ports, 1024 behind 1500-byte ones; the context, its memory and every answer
// agree, and a rank that calls again without a pmtu is a retry, not a conflict.
TEST_F(JoinTest, APmtuLeftToTheManagerIsTheLargestThePortsCarry) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256, 8, 9000));
  std::vector<std::unique_ptr<AsyncJoin>> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    pb::JoinGroupRequest q = join_request("jumbo", 2, r);
    q.clear_pmtu();
    ranks.push_back(std::make_unique<AsyncJoin>(manager_, q));
  }
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  const pb::Action& a = install->action();
  EXPECT_EQ(a.context().pmtu(), 4096u);
  EXPECT_EQ(a.memory_bytes(), vocab::group_memory_bytes(16, 4096));
  agent.ack(a.action_id());
  for (auto& rank : ranks) {
    const JoinOutcome& o = rank->get();
    ASSERT_TRUE(o.status.ok()) << o.status.error_message();
    EXPECT_EQ(o.response.pmtu(), 4096u);
  }
  pb::JoinGroupRequest again = join_request("jumbo", 2, 0);
  again.clear_pmtu();
  const JoinOutcome retry = AsyncJoin(manager_, again).get();
  ASSERT_TRUE(retry.status.ok()) << retry.status.error_message();
  EXPECT_EQ(retry.response.pmtu(), 4096u);
}

TEST_F(JoinTest, APmtuLeftToTheManagerBehindEthernetPortsIs1024) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256, 8, 1500));
  pb::JoinGroupRequest q = join_request("plain", 1, 0);
  q.clear_pmtu();
  AsyncJoin rank(manager_, q);
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  EXPECT_EQ(install->action().context().pmtu(), 1024u);
  agent.ack(install->action().action_id());
  const JoinOutcome& o = rank.get();
  ASSERT_TRUE(o.status.ok()) << o.status.error_message();
  EXPECT_EQ(o.response.pmtu(), 1024u);
}

TEST_F(JoinTest, NoMemoryIsResourceExhaustedAndLeavesNothingBehind) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(48));
  AsyncJoin first(manager_, join_request("a", 1, 0));
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  agent.ack(install->action().action_id());
  ASSERT_TRUE(first.get().status.ok());
  pb::JoinGroupRequest second = join_request("b", 1, 0);
  second.mutable_endpoint()->set_ipv4(rank_ipv4(1));  // another NIC behind leaf0
  const grpc::Status s = join_now(second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("no INC memory"), std::string::npos) << s.error_message();
  EXPECT_EQ(memory().switches(0).granted_bytes(), slots(32));
  EXPECT_EQ(groups().groups_size(), 1);
  EXPECT_FALSE(agent.next(200ms)) << "no action for a refused group";
}

TEST_F(JoinTest, AgentFailureRollsTheInstallBackAndRanksGetUnavailable) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  AsyncJoin r0(manager_, join_request("g", 2, 0));
  AsyncJoin r1(manager_, join_request("g", 2, 1));
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  agent.fail(install->action().action_id(), "slot memory exhausted on the switch");
  for (AsyncJoin* j : {&r0, &r1}) {
    EXPECT_EQ(j->get().status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_NE(j->get().status.error_message().find("slot memory exhausted"), std::string::npos)
        << j->get().status.error_message();
  }
  EXPECT_EQ(memory().switches(0).granted_bytes(), 0u);
  EXPECT_EQ(groups().groups_size(), 0);
}

struct BadJoin {
  const char* what;
  std::function<void(pb::JoinGroupRequest&)> edit;
  grpc::StatusCode code;
  const char* message;  // a substring of the status message
};

TEST_F(JoinTest, MalformedOrImpossibleJoinsGetPreciseStatuses) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  const std::vector<BadJoin> cases = {
      {"no endpoint", [](auto& r) { r.clear_endpoint(); }, grpc::StatusCode::INVALID_ARGUMENT,
       "endpoint: required"},
      {"bad ipv4", [](auto& r) { r.mutable_endpoint()->set_ipv4("10.77.0"); },
       grpc::StatusCode::INVALID_ARGUMENT, "endpoint.ipv4:"},
      {"qpn 0", [](auto& r) { r.mutable_endpoint()->set_qpn(0); },
       grpc::StatusCode::INVALID_ARGUMENT, "endpoint.qpn:"},
      {"gid of another address", [](auto& r) { r.mutable_endpoint()->set_gid("::ffff:1.2.3.4"); },
       grpc::StatusCode::INVALID_ARGUMENT, "endpoint.gid:"},
      {"window 3", [](auto& r) { r.set_window(3); }, grpc::StatusCode::INVALID_ARGUMENT, "window:"},
      {"mode 1", [](auto& r) { r.set_mode(static_cast<pb::GroupMode>(1)); },
       grpc::StatusCode::INVALID_ARGUMENT,
       "mode: 1 is not a mode (2: Mode-II, 3: Mode-III; unset: Mode-II)"},
      {"pmtu 1000", [](auto& r) { r.set_pmtu(1000); }, grpc::StatusCode::INVALID_ARGUMENT, "pmtu:"},
      {"rank out of range", [](auto& r) { r.set_rank(1); }, grpc::StatusCode::INVALID_ARGUMENT,
       "rank:"},
      {"size 0", [](auto& r) { r.set_size(0); }, grpc::StatusCode::INVALID_ARGUMENT, "size:"},
      {"bad tenant name", [](auto& r) { r.set_tenant("a b"); }, grpc::StatusCode::INVALID_ARGUMENT,
       "tenant:"},
      {"unknown tenant", [](auto& r) { r.set_tenant("nobody"); }, grpc::StatusCode::NOT_FOUND,
       "unknown tenant"},
      {"rank behind no switch", [](auto& r) { r.mutable_endpoint()->set_ipv4("10.99.0.1"); },
       grpc::StatusCode::NOT_FOUND, "no switch port is known"},
      {"pmtu above the switch's",
       [](auto& r) {
         r.set_pmtu(4096);
         r.set_window(2048);
       },
       grpc::StatusCode::FAILED_PRECONDITION, "window"},
  };
  for (const BadJoin& c : cases) {
    pb::JoinGroupRequest r = join_request("bad", 1, 0);
    c.edit(r);
    const grpc::Status s = join_now(r);
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.message), std::string::npos)
        << c.what << ": " << s.error_message();
  }
  EXPECT_EQ(memory().switches(0).granted_bytes(), 0u);
  EXPECT_EQ(groups().groups_size(), 0);
}

TEST_F(JoinTest, PortMtuTooSmallForThePmtuIsRefused) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256, 8, 1500));
  pb::JoinGroupRequest r = join_request("big", 1, 0);
  r.set_pmtu(4096);
  const grpc::Status s = join_now(r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("MTU"), std::string::npos) << s.error_message();
}

TEST_F(JoinTest, GroupLargerThanTheTenantQuotaIsRefused) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  pb::SetTenantRequest t;
  t.mutable_tenant()->set_name("small");
  t.mutable_tenant()->mutable_quota()->set_max_ranks_per_group(1);
  pb::SetTenantResponse set;
  auto ctx = deadline();
  ASSERT_TRUE(manager_.stub()->SetTenant(ctx.get(), t, &set).ok());
  AsyncJoin r0(manager_, [] {
    auto r = join_request("q", 2, 0);
    r.set_tenant("small");
    return r;
  }());
  pb::JoinGroupRequest r1 = join_request("q", 2, 1);
  r1.set_tenant("small");
  const grpc::Status s = join_now(r1);
  EXPECT_NE(s.error_code(), grpc::StatusCode::OK);
  EXPECT_NE(s.error_message().find("2"), std::string::npos) << s.error_message();
  EXPECT_EQ(r0.get().status.error_code(), s.error_code());
  EXPECT_EQ(groups().groups_size(), 0);
}

TEST_F(JoinTest, SecondEndpointForAJoinedRankIsAlreadyExistsAndLeaveCancels) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  AsyncJoin r0(manager_, join_request("dup", 2, 0));
  std::this_thread::sleep_for(100ms);  // r0 is waiting in the rendezvous
  pb::JoinGroupRequest again = join_request("dup", 2, 0);
  again.mutable_endpoint()->set_qpn(0x999);
  const grpc::Status s = join_now(again);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  pb::ListGroupsResponse g = groups();
  ASSERT_EQ(g.pending_size(), 1);
  EXPECT_EQ(g.pending(0).size(), 2u);
  pb::LeaveGroupRequest leave;
  leave.set_tenant("default");
  leave.set_group("dup");
  pb::LeaveGroupResponse left;
  auto ctx = deadline();
  ASSERT_TRUE(manager_.stub()->LeaveGroup(ctx.get(), leave, &left).ok());
  EXPECT_TRUE(left.torn_down());
  EXPECT_EQ(r0.get().status.error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(JoinTest, LastRankLeavingTearsTheGroupDownOnTheSwitch) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  const pb::Action install = install_group(manager_, agent, "bye");
  ASSERT_TRUE(install.has_context());
  for (uint32_t r = 0; r < 2; ++r) {
    pb::LeaveGroupRequest leave;
    leave.set_tenant("default");
    leave.set_group("bye");
    leave.set_rank(r);
    pb::LeaveGroupResponse left;
    auto ctx = deadline();
    ASSERT_TRUE(manager_.stub()->LeaveGroup(ctx.get(), leave, &left).ok());
    EXPECT_EQ(left.torn_down(), r == 1);
  }
  auto remove = agent.next();
  ASSERT_TRUE(remove && remove->has_action());
  EXPECT_EQ(remove->action().kind(), pb::ACTION_KIND_REMOVE_CONTEXT);
  EXPECT_EQ(remove->action().group_id(), install.group_id());
  EXPECT_EQ(memory().switches(0).granted_bytes(), 0u);
}

TEST_F(JoinTest, AgentFirstMessageMustBeRegister) {
  FakeAgent agent(manager_.channel());
  pb::AgentMessage m;
  m.mutable_heartbeat();
  agent.send(m);
  EXPECT_TRUE(agent.ended());
  const grpc::Status s = agent.close();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
}

TEST_F(JoinTest, InvalidRegistrationNamesTheField) {
  FakeAgent agent(manager_.channel());
  pb::Register reg = FakeAgent::leaf0(256);
  reg.set_inc_ipv4("300.1.1.1");
  pb::AgentMessage m;
  *m.mutable_registration() = reg;
  agent.send(m);
  EXPECT_TRUE(agent.ended());
  const grpc::Status s = agent.close();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("registration.inc_ipv4"), std::string::npos)
      << s.error_message();
}

TEST_F(JoinTest, RegistrationsCountingSlotsOrTooLittleMemoryAreRefusedNamingTheField) {
  const std::pair<std::function<void(pb::Register&)>, std::string> cases[] = {
      {[](pb::Register& r) { r.set_slot_capacity(8192); },
       "registration.slot_capacity: slots are no longer counted: set registration.capacity_bytes"},
      {[](pb::Register& r) { r.set_capacity_bytes(1599); },
       "registration.capacity_bytes: 1599 bytes is less than the smallest group context (1600 "
       "bytes: window 1, pmtu 256)"},
  };
  for (const auto& [edit, message] : cases) {
    FakeAgent agent(manager_.channel());
    pb::Register reg = FakeAgent::leaf0(256);
    edit(reg);
    pb::AgentMessage m;
    *m.mutable_registration() = reg;
    agent.send(m);
    EXPECT_TRUE(agent.ended());
    const grpc::Status s = agent.close();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find(message), std::string::npos) << s.error_message();
  }
}

TEST_F(JoinTest, AJoinWithoutAWindowGetsThePathBdpWindowAndItsRanksUseIt) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(256));  // exactly one window-128 group at pmtu 1024
  std::vector<std::unique_ptr<AsyncJoin>> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    pb::JoinGroupRequest j = join_request("bdp", 2, r);
    j.clear_window();
    ranks.push_back(std::make_unique<AsyncJoin>(manager_, j));
  }
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  // One switch, default link speeds: 100 Gb/s x 10 us = 125000 bytes -> 128 packets of 1024.
  EXPECT_EQ(install->action().context().window(), 128u);
  EXPECT_EQ(install->action().memory_bytes(), vocab::group_memory_bytes(128, 1024));
  EXPECT_EQ(install->action().memory_bytes(), slots(256));
  agent.ack(install->action().action_id());
  for (auto& r : ranks) {
    ASSERT_TRUE(r->get().status.ok()) << r->get().status.error_message();
    EXPECT_EQ(r->get().response.window(), 128u);
  }
  EXPECT_EQ(groups().groups(0).window(), 128u);
  // A rank calling again (its answer was lost) without a window gets the same answer.
  pb::JoinGroupRequest again = join_request("bdp", 2, 1);
  again.clear_window();
  AsyncJoin retry(manager_, again);
  ASSERT_TRUE(retry.get().status.ok()) << retry.get().status.error_message();
  EXPECT_EQ(retry.get().response.window(), 128u);
  EXPECT_EQ(retry.get().response.group_id(), install->action().group_id());
  // The switch is full: a second group is refused and the running one is not disturbed.
  pb::JoinGroupRequest other = join_request("other", 1, 0);
  other.mutable_endpoint()->set_ipv4(rank_ipv4(2));
  const grpc::Status s = join_now(other);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("needs 99328 bytes on switch 'leaf0', 0 free"),
            std::string::npos)
      << s.error_message();
  EXPECT_EQ(groups().groups(0).state(), "installed");
  EXPECT_FALSE(agent.next(200ms)) << "nothing sent for the refused group";
}

// A group bound to a RoCE partition: every rank asks for the same P_Key, and every switch
// context carries it (the switches then check it on every packet); ranks that disagree, or an
// invalid key, are refused.
TEST_F(JoinTest, APartitionKeyReachesEverySwitchContextAndRanksMustAgreeOnIt) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(1024));
  std::vector<std::unique_ptr<AsyncJoin>> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    pb::JoinGroupRequest j = join_request("part", 2, r);
    j.set_pkey(0x8012);
    ranks.push_back(std::make_unique<AsyncJoin>(manager_, j));
  }
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  ASSERT_TRUE(install->action().context().has_pkey());
  EXPECT_EQ(install->action().context().pkey(), 0x8012u);
  agent.ack(install->action().action_id());
  for (auto& r : ranks) ASSERT_TRUE(r->get().status.ok()) << r->get().status.error_message();
  EXPECT_EQ(groups().groups(0).pkey(), 0x8012u);

  pb::JoinGroupRequest first = join_request("split", 2, 0);
  first.set_pkey(0x8012);
  first.mutable_endpoint()->set_ipv4(rank_ipv4(2));
  AsyncJoin waits(manager_, first);
  ASSERT_TRUE(one_pending());  // rank 0 is in the rendezvous before rank 1 disagrees with it
  pb::JoinGroupRequest second = join_request("split", 2, 1);
  second.set_pkey(0x8013);
  second.mutable_endpoint()->set_ipv4(rank_ipv4(3));
  const grpc::Status s = join_now(second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("asks for P_Key 32787; rank 0 asked for P_Key 32786"),
            std::string::npos)
      << s.error_message();
  pb::JoinGroupRequest invalid = join_request("bad", 1, 0);
  invalid.set_pkey(0x8000);
  invalid.mutable_endpoint()->set_ipv4(rank_ipv4(4));
  const grpc::Status b = join_now(invalid);
  EXPECT_EQ(b.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(b.error_message().find("pkey: 32768 is not a P_Key"), std::string::npos)
      << b.error_message();
  manager_.stop();  // answers the rank still waiting
}

// A group's traffic class: asked by every rank alike (or left to the tenant's default), it
// reaches every switch context and every rank's answer; ranks that disagree, or a DSCP above 63,
// are refused.
TEST_F(JoinTest, ATrafficClassReachesEverySwitchContextAndEveryRank) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(1024));
  pb::SetTenantRequest t;
  t.mutable_tenant()->set_name("latency");
  t.mutable_tenant()->set_default_dscp(34);
  pb::SetTenantResponse set;
  auto ctx = deadline();
  ASSERT_TRUE(manager_.stub()->SetTenant(ctx.get(), t, &set).ok());
  // Asked for: DSCP 46.
  std::vector<std::unique_ptr<AsyncJoin>> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    pb::JoinGroupRequest j = join_request("ef", 2, r);
    j.set_dscp(46);
    ranks.push_back(std::make_unique<AsyncJoin>(manager_, j));
  }
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  EXPECT_EQ(install->action().context().dscp(), 46u);
  agent.ack(install->action().action_id());
  for (auto& r : ranks) {
    ASSERT_TRUE(r->get().status.ok()) << r->get().status.error_message();
    EXPECT_EQ(r->get().response.dscp(), 46u);
  }
  EXPECT_EQ(groups().groups(0).dscp(), 46u);
  // Left to the tenant: its default_dscp.
  pb::JoinGroupRequest dflt = join_request("by-tenant", 1, 0);
  dflt.set_tenant("latency");
  dflt.mutable_endpoint()->set_ipv4(rank_ipv4(2));
  AsyncJoin by_tenant(manager_, dflt);
  auto second = agent.next();
  ASSERT_TRUE(second && second->has_action());
  EXPECT_EQ(second->action().context().dscp(), 34u);
  agent.ack(second->action().action_id());
  ASSERT_TRUE(by_tenant.get().status.ok()) << by_tenant.get().status.error_message();
  EXPECT_EQ(by_tenant.get().response.dscp(), 34u);
  // Ranks that disagree.
  pb::JoinGroupRequest first = join_request("split", 2, 0);
  first.set_dscp(46);
  first.mutable_endpoint()->set_ipv4(rank_ipv4(3));
  AsyncJoin waits(manager_, first);
  ASSERT_TRUE(one_pending());  // rank 0 is in the rendezvous before rank 1 disagrees with it
  pb::JoinGroupRequest other = join_request("split", 2, 1);
  other.mutable_endpoint()->set_ipv4(rank_ipv4(4));
  const grpc::Status s = join_now(other);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("asks for the tenant's default DSCP; rank 0 asked for DSCP 46"),
            std::string::npos)
      << s.error_message();
  pb::JoinGroupRequest bad = join_request("bad", 1, 0);
  bad.set_dscp(64);
  bad.mutable_endpoint()->set_ipv4(rank_ipv4(5));
  const grpc::Status b = join_now(bad);
  EXPECT_EQ(b.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(b.error_message().find("dscp: 64 is not a DSCP"), std::string::npos)
      << b.error_message();
  pb::SetTenantRequest wrong;
  wrong.mutable_tenant()->set_name("wrong");
  wrong.mutable_tenant()->set_default_dscp(99);
  auto ctx2 = deadline();
  const grpc::Status w = manager_.stub()->SetTenant(ctx2.get(), wrong, &set);
  EXPECT_EQ(w.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(w.error_message().find("default_dscp: 99 is not a DSCP"), std::string::npos)
      << w.error_message();
  manager_.stop();  // answers the rank still waiting
}

// An exact group: every switch context carries its accumulator profile and dtype, its grant is
// the exact layout's memory, GroupInfo shows PRISM's width; ranks must agree on the arithmetic,
// an exact group names its dtype, and one that can never fit is refused as exact with both
// figures (never run in arrival order instead).
TEST_F(JoinTest, AnExactGroupIsGrantedItsKulischMemoryAndRefusedAsExactWhenItCannotFit) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(1024));  // 1024 slots of the default arithmetic
  std::vector<std::unique_ptr<AsyncJoin>> ranks;
  for (uint32_t r = 0; r < 2; ++r) {
    ranks.push_back(std::make_unique<AsyncJoin>(
        manager_, exact_join_request("exact", 2, r, pb::ELEMENT_FP16, 4, static_cast<int>(r))));
  }
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  EXPECT_EQ(install->action().context().accumulator(), pb::ACCUM_KULISCH_FIXED);
  EXPECT_EQ(install->action().context().dtype(), pb::ELEMENT_FP16);
  const vocab::GroupArith exact{vocab::AccumProfile::kKulischFixed, vocab::DType::kFp16};
  EXPECT_EQ(install->action().memory_bytes(), vocab::group_memory_bytes(4, 1024, exact, 2));
  EXPECT_EQ(vocab::group_memory_bytes(4, 1024, exact, 2), 8u * (32 + 512 * 9 + 1024));
  agent.ack(install->action().action_id());
  for (auto& r : ranks) {
    ASSERT_TRUE(r->get().status.ok()) << r->get().status.error_message();
    EXPECT_EQ(r->get().response.accumulator(), pb::ACCUM_KULISCH_FIXED);
  }
  const pb::ListGroupsResponse listed = groups();
  const pb::GroupInfo& info = listed.groups(0);
  EXPECT_EQ(info.accumulator(), pb::ACCUM_KULISCH_FIXED);
  EXPECT_EQ(info.dtype(), pb::ELEMENT_FP16);
  EXPECT_EQ(info.exact_width_bits(), 42u);  // fp16: 15 + 14 + 11 magnitude bits, 1 carry, sign
  EXPECT_EQ(info.accum_bytes_per_element(), 9u);

  // bf16 exact at window 1024 needs 2048 slots of 32 + 37376 + 1024 bytes: more than the switch.
  pb::JoinGroupRequest huge = join_request("huge", 1, 0);
  huge.set_accumulator(pb::ACCUM_KULISCH_FIXED);
  huge.set_dtype(pb::ELEMENT_BF16);
  huge.set_window(1024);
  huge.mutable_endpoint()->set_ipv4(rank_ipv4(5));
  const grpc::Status never = join_now(huge);
  EXPECT_EQ(never.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << never.error_message();
  EXPECT_NE(never.error_message().find("exact bf16 sum over 1 contributors needs W = 262 bits (73 "
                                       "bytes per element, 78708736 bytes on each switch at "
                                       "window 1024, pmtu 1024)"),
            std::string::npos)
      << never.error_message();
  EXPECT_NE(never.error_message().find("leaf0"), std::string::npos) << never.error_message();

  pb::JoinGroupRequest nodtype = join_request("nodtype", 1, 0);
  nodtype.set_accumulator(pb::ACCUM_KULISCH_FIXED);
  nodtype.mutable_endpoint()->set_ipv4(rank_ipv4(6));
  const grpc::Status missing = join_now(nodtype);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(missing.error_message().find("dtype: required with accumulator kulisch_fixed"),
            std::string::npos)
      << missing.error_message();

  pb::JoinGroupRequest first = exact_join_request("split", 2, 0, pb::ELEMENT_FP32, 16, 2);
  AsyncJoin waits(manager_, first);
  ASSERT_TRUE(one_pending());  // rank 0 is in the rendezvous before rank 1 disagrees with it
  pb::JoinGroupRequest second = join_request("split", 2, 1);
  second.mutable_endpoint()->set_ipv4(rank_ipv4(3));
  const grpc::Status s = join_now(second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find(
                "asks for accumulator fp32_arrival; rank 0 asked for kulisch_fixed fp32"),
            std::string::npos)
      << s.error_message();
  manager_.stop();
}

TEST_F(JoinTest, AModeIIIGroupRunsBesideAModeIIGroupAndEverySwitchContextSaysWhichIsWhich) {
  FakeAgent agent(manager_.channel());
  agent.register_switch(FakeAgent::leaf0(1024));
  const struct {
    const char* name;
    std::optional<pb::GroupMode> mode;
  } groups_[] = {{"two", std::nullopt}, {"three", pb::GROUP_MODE_3}};
  uint32_t rank_base = 0;
  for (const auto& g : groups_) {
    std::vector<std::unique_ptr<AsyncJoin>> ranks;
    for (uint32_t r = 0; r < 2; ++r) {
      pb::JoinGroupRequest j = join_request(g.name, 2, r);
      j.clear_window();
      j.mutable_endpoint()->set_ipv4(rank_ipv4(static_cast<int>(rank_base + r)));
      if (g.mode) j.set_mode(*g.mode);
      ranks.push_back(std::make_unique<AsyncJoin>(manager_, j));
    }
    rank_base += 2;
    auto install = agent.next();
    ASSERT_TRUE(install && install->has_action()) << g.name;
    const pb::GroupContext& c = install->action().context();
    // One switch, default link speeds: one hop is the whole path, both modes size window 128.
    EXPECT_EQ(c.window(), 128u);
    if (g.mode) {
      EXPECT_EQ(c.mode(), pb::GROUP_MODE_3);
      EXPECT_TRUE(c.has_hop_timeout_us());
      EXPECT_EQ(c.hop_timeout_us(), 61u);  // 4 x 10 us + 2 x 128 x 1 KiB at 100 Gb/s
    } else {  // Mode-II: the fields stay unset, the context is what older managers sent
      EXPECT_EQ(c.mode(), pb::GROUP_MODE_UNSPECIFIED);
      EXPECT_FALSE(c.has_hop_timeout_us());
    }
    agent.ack(install->action().action_id());
    for (auto& r : ranks) {
      ASSERT_TRUE(r->get().status.ok()) << r->get().status.error_message();
      EXPECT_EQ(r->get().response.mode(), g.mode ? pb::GROUP_MODE_3 : pb::GROUP_MODE_2);
    }
  }
  const pb::ListGroupsResponse list = groups();
  ASSERT_EQ(list.groups_size(), 2);
  for (const pb::GroupInfo& info : list.groups()) {
    const bool three = info.name() == "three";
    EXPECT_EQ(info.mode(), three ? pb::GROUP_MODE_3 : pb::GROUP_MODE_2) << info.name();
    EXPECT_EQ(info.hop_timeout_us(), 61u);
    ASSERT_EQ(info.mode_costs_size(), 2) << info.name();
    EXPECT_EQ(info.mode_costs(0).mode(), pb::GROUP_MODE_2);
    EXPECT_EQ(info.mode_costs(1).mode(), pb::GROUP_MODE_3);
    for (const pb::ModeCost& cost : info.mode_costs()) {
      EXPECT_EQ(cost.window(), 128u);
      EXPECT_EQ(cost.bytes_per_switch(), vocab::group_memory_bytes(128, 1024));
    }
  }
  // A rank retrying with another mode than its group's is a clash.
  pb::JoinGroupRequest again = join_request("three", 2, 1);
  again.clear_window();
  again.mutable_endpoint()->set_ipv4(rank_ipv4(3));
  again.set_mode(pb::GROUP_MODE_2);
  EXPECT_EQ(join_now(again).error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(JoinTest, TenantsCountingSlotsAreRefusedNamingTheByteField) {
  const std::pair<std::function<void(pb::Tenant&)>, std::string> cases[] = {
      {[](pb::Tenant& t) { t.mutable_quota()->set_max_slots_per_switch(64); },
       "tenant.quota.max_slots_per_switch: slots are no longer counted: set "
       "quota.max_bytes_per_switch (bytes)"},
      {[](pb::Tenant& t) { t.mutable_quota()->set_max_slots_total(64); },
       "tenant.quota.max_slots_total: slots are no longer counted: set quota.max_bytes_total "
       "(bytes)"},
      {[](pb::Tenant& t) { (*t.mutable_reserved())["leaf0"] = 64; },
       "tenant.reserved: slots are no longer counted: set reserved_bytes (switch -> bytes)"},
  };
  for (const auto& [edit, message] : cases) {
    pb::SetTenantRequest req;
    req.mutable_tenant()->set_name("old");
    req.mutable_tenant()->mutable_quota()->set_max_bytes_per_switch(1 << 20);
    edit(*req.mutable_tenant());
    pb::SetTenantResponse out;
    auto ctx = deadline();
    const grpc::Status s = manager_.stub()->SetTenant(ctx.get(), req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), message);
  }
}

}  // namespace
}  // namespace epic::manager::service::testing
