// inc-manager over gRPC: a group refused for lack of INC memory falls back to host collectives
// when every rank set host_endpoint — all ranks are answered OK with the ring's members, and
// nothing is installed, granted or listed for it; otherwise the refusal stands.
#include <memory>
#include <vector>

#include "tests/unit/manager/service/harness.h"

namespace epic::manager::service::testing {
namespace {

class FallbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    manager_.start(test_options());
    agent_ = std::make_unique<FakeAgent>(manager_.channel());
    agent_->register_switch(FakeAgent::leaf0(48));  // room for one 1-rank group (32 slots)
    AsyncJoin first(manager_, join_request("a", 1, 0));
    auto install = agent_->next();
    ASSERT_TRUE(install && install->has_action());
    agent_->ack(install->action().action_id());
    ASSERT_TRUE(first.get().status.ok());
  }
  // Rank r of a group of `size` that no longer fits (ranks behind leaf0 ports 1..).
  static pb::JoinGroupRequest request(const std::string& group, uint32_t size, uint32_t r,
                                      bool host) {
    pb::JoinGroupRequest out = join_request(group, size, r);
    out.mutable_endpoint()->set_ipv4(rank_ipv4(static_cast<int>(r) + 1));
    if (host) {
      out.mutable_host_endpoint()->set_ipv4(rank_ipv4(static_cast<int>(r) + 1));
      out.mutable_host_endpoint()->set_qpn(0x200 + 2 * r);
      out.mutable_host_endpoint()->set_mac("02:00:00:00:00:0" + std::to_string(r + 2));
    }
    return out;
  }
  uint64_t granted() {
    pb::GetMemoryResponse out;
    auto ctx = deadline();
    EXPECT_TRUE(manager_.stub()->GetMemory(ctx.get(), {}, &out).ok());
    return out.switches(0).granted_bytes();
  }
  int groups() {
    pb::ListGroupsResponse out;
    auto ctx = deadline();
    EXPECT_TRUE(manager_.stub()->ListGroups(ctx.get(), {}, &out).ok());
    return out.groups_size() + out.pending_size();
  }

  TempDir dir_;
  TestManager manager_{dir_};
  std::unique_ptr<FakeAgent> agent_;
};

TEST_F(FallbackTest, EveryRankWithHostEndpointIsAnsweredWithTheRing) {
  pb::JoinGroupRequest r0 = request("b", 2, 0, true);
  pb::JoinGroupRequest r1 = request("b", 2, 1, true);
  r0.set_pmtu(512);  // every rank asks for the same (the rendezvous checks)
  r1.set_pmtu(512);
  AsyncJoin j0(manager_, r0);
  AsyncJoin j1(manager_, r1);
  uint32_t psn = 0;
  for (AsyncJoin* j : {&j0, &j1}) {
    const JoinOutcome& o = j->get();
    ASSERT_TRUE(o.status.ok()) << o.status.error_message();
    EXPECT_TRUE(o.response.host_fallback());
    EXPECT_NE(o.response.fallback_reason().find("no INC memory"), std::string::npos)
        << o.response.fallback_reason();
    EXPECT_EQ(o.response.pmtu(), 512u);
    ASSERT_EQ(o.response.members_size(), 2);
    EXPECT_EQ(o.response.members(1).qpn(), 0x202u);
    EXPECT_EQ(o.response.members(1).ipv4(), rank_ipv4(2));
    EXPECT_EQ(o.response.members(0).mac(), "02:00:00:00:00:02");
    EXPECT_FALSE(o.response.has_peer());
    if (j == &j0) psn = o.response.initial_psn();
    EXPECT_EQ(o.response.initial_psn(), psn);
  }
  EXPECT_EQ(j0.get().response.rank(), 0u);
  EXPECT_EQ(j1.get().response.rank(), 1u);
  EXPECT_EQ(granted(), slots(32));  // group "a" only
  EXPECT_EQ(groups(), 1);
  EXPECT_FALSE(agent_->next(200ms)) << "no action for a fallback group";
}

TEST_F(FallbackTest, OneRankWithoutHostEndpointKeepsResourceExhaustedForAll) {
  AsyncJoin j0(manager_, request("c", 2, 0, true));
  AsyncJoin j1(manager_, request("c", 2, 1, false));
  for (AsyncJoin* j : {&j0, &j1}) {
    EXPECT_EQ(j->get().status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << j->get().status.error_message();
    EXPECT_NE(j->get().status.error_message().find("no INC memory"), std::string::npos);
  }
  EXPECT_EQ(groups(), 1);
}

TEST_F(FallbackTest, QueuedGroupFallsBackWhenItsQueueTimeoutExpires) {
  pb::JoinGroupRequest r = request("d", 1, 0, true);
  r.set_queue_timeout_ms(150);
  pb::JoinGroupResponse out;
  auto ctx = deadline(5s);
  const grpc::Status s = manager_.stub()->JoinGroup(ctx.get(), r, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(out.host_fallback());
  EXPECT_NE(out.fallback_reason().find("queue"), std::string::npos) << out.fallback_reason();
  ASSERT_EQ(out.members_size(), 1);
  EXPECT_EQ(granted(), slots(32));
  EXPECT_EQ(groups(), 1);
}

TEST_F(FallbackTest, BadHostEndpointIsInvalidArgument) {
  pb::JoinGroupRequest r = request("e", 1, 0, true);
  r.mutable_host_endpoint()->set_qpn(0);
  pb::JoinGroupResponse out;
  auto ctx = deadline(5s);
  grpc::Status s = manager_.stub()->JoinGroup(ctx.get(), r, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("host_endpoint.qpn:"), std::string::npos) << s.error_message();
  r.mutable_host_endpoint()->set_qpn(0xFFFFFF - 1);
  r.mutable_host_endpoint()->set_gid("::ffff:1.2.3.4");
  auto ctx2 = deadline(5s);
  s = manager_.stub()->JoinGroup(ctx2.get(), r, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("host_endpoint.gid:"), std::string::npos) << s.error_message();
}

}  // namespace
}  // namespace epic::manager::service::testing
