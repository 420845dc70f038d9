// Authorisation (issue 16, docs/security.md "Roles"): with mutual TLS every caller is the role
// its certificate names. A tenant certificate cannot touch another tenant's group through any
// RPC and reads only its own rows; an agent certificate registers only its own switch and
// calls no IncManager RPC; a certificate without a role is refused. Plus the caps (pending
// joins per tenant, agent streams) and the transport rules (no caller identity outside a unix
// socket, the socket's file mode). The certificates are made by openssl at test time.
#include <sys/stat.h>

#include <future>

#include "manager/service/caller.h"
#include "tests/unit/manager/service/harness.h"
#include "tests/unit/tls_pki.h"

namespace epic::manager::service::testing {
namespace {

using epic::testing::have_openssl;
using epic::testing::make_client_cert;
using epic::testing::make_test_pki;
using epic::testing::slurp;

TEST(CallerFromCertificate, TheEpicUriDecidesElseTheCommonName) {
  std::string why;
  auto c = caller_from_certificate({"spiffe://x/y", "epic:tenant:blue"}, {"rank-host"}, why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(*c, (Caller{Role::kTenant, "blue"}));
  c = caller_from_certificate({}, {"agent:leaf-1.a_b"}, why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(*c, (Caller{Role::kAgent, "leaf-1.a_b"}));
  c = caller_from_certificate({}, {"admin"}, why);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->role, Role::kAdmin);
  // A URI that names a role wins over a CN that names another.
  c = caller_from_certificate({"epic:agent:leaf0"}, {"admin"}, why);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, (Caller{Role::kAgent, "leaf0"}));

  for (const auto& [uris, cns, message] :
       std::vector<std::tuple<std::vector<std::string>, std::vector<std::string>, std::string>>{
           {{}, {"leaf0-agent"}, "(CN=leaf0-agent) names no EPIC role"},
           {{}, {"tenant:"}, "names no EPIC role"},
           {{}, {"tenant:a b"}, "names no EPIC role"},
           {{}, {"Admin"}, "names no EPIC role"},
           {{}, {}, "names no EPIC role"},
           {{"epic:tenant:a", "epic:tenant:b"}, {"admin"}, "names two roles"},
           {{"epic:root"}, {"admin"}, "URI epic:root names no EPIC role"},
       }) {
    why.clear();
    EXPECT_FALSE(caller_from_certificate(uris, cns, why)) << message;
    EXPECT_NE(why.find(message), std::string::npos) << why;
  }
  std::string long_name(65, 'x');
  EXPECT_FALSE(parse_role("tenant:" + long_name));
  EXPECT_TRUE(parse_role("tenant:" + long_name.substr(1)));
}

// A mutual-TLS manager on a unix socket with the test PKI plus the certificates below; the
// tenants "default" and "blue" exist.
class MutualTlsManager {
 public:
  explicit MutualTlsManager(ServiceOptions service = test_options()) {
    ok_ = have_openssl() && make_test_pki(d()) &&
          make_client_cert(d(), "tenant-blue", "tenant:blue") &&
          make_client_cert(d(), "agent-leaf1", "agent:leaf1") &&
          make_client_cert(d(), "norole", "leaf0-agent");
    if (!ok_) return;
    ServerOptions o;
    o.listen = "unix:" + d() + "/m.sock";
    o.tls = {d() + "/server.pem", d() + "/server.key", d() + "/ca.pem"};
    o.service = std::move(service);
    auto s = ManagerServer::start(std::move(o), quiet_log());
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    if (!s.ok()) return;
    server_ = std::move(s.value());
    pb::SetTenantRequest blue;
    blue.mutable_tenant()->set_name("blue");
    pb::SetTenantResponse out;
    auto ctx = deadline(5s);
    const grpc::Status st = stub("client")->SetTenant(ctx.get(), blue, &out);
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
  ~MutualTlsManager() {
    if (server_) server_->stop();
  }
  bool ok() const { return ok_ && server_; }
  std::string d() const { return dir_.path(); }
  // A channel with certificate <d>/<cert>.pem.
  std::shared_ptr<grpc::Channel> channel(const std::string& cert) const {
    grpc::SslCredentialsOptions creds{slurp(d() + "/ca.pem"), slurp(d() + "/" + cert + ".key"),
                                      slurp(d() + "/" + cert + ".pem")};
    return grpc::CreateChannel("unix:" + d() + "/m.sock", grpc::SslCredentials(creds));
  }
  std::unique_ptr<pb::IncManager::Stub> stub(const std::string& cert) const {
    return pb::IncManager::NewStub(channel(cert));
  }

 private:
  TempDir dir_;
  bool ok_ = false;
  std::unique_ptr<ManagerServer> server_;
};

// Tenant "default"'s one-rank group `name`, installed by `agent`: its id.
uint32_t install_default_group(const MutualTlsManager& m, FakeAgent& agent,
                               const std::string& name) {
  auto joined = std::async(std::launch::async, [&m, name] {
    pb::JoinGroupResponse out;
    auto ctx = deadline(10s);
    const grpc::Status s =
        m.stub("tenant-default")->JoinGroup(ctx.get(), join_request(name, 1, 0), &out);
    return std::make_pair(s, out);
  });
  auto install = agent.next();
  EXPECT_TRUE(install && install->has_action());
  if (install && install->has_action()) agent.ack(install->action().action_id());
  auto [status, response] = joined.get();
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.group_id();
}

void expect_denied(const grpc::Status& s, const std::string& rpc, const std::string& words) {
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << rpc << ": " << s.error_code() << " " << s.error_message();
  EXPECT_NE(s.error_message().find(words), std::string::npos) << rpc << ": " << s.error_message();
}

TEST(Authorization, ATenantCannotTouchAnotherTenantsGroupThroughAnyRpc) {
  MutualTlsManager m;
  if (!have_openssl()) GTEST_SKIP() << "openssl is not installed: cannot make a test CA";
  ASSERT_TRUE(m.ok());
  FakeAgent agent(m.channel("agent-leaf0"));
  agent.register_switch(FakeAgent::leaf0(256));
  const uint32_t id = install_default_group(m, agent, "g");
  ASSERT_NE(id, 0u);
  pb::AgentMessage beat;
  beat.mutable_heartbeat()->add_groups()->set_group_id(id);
  ASSERT_TRUE(agent.send(beat));

  auto blue = m.stub("tenant-blue");
  const std::string who = "tenant:blue may not";
  {
    pb::JoinGroupResponse out;
    auto ctx = deadline(5s);
    expect_denied(blue->JoinGroup(ctx.get(), join_request("g", 1, 0), &out), "JoinGroup",
                  who + " call JoinGroup for tenant 'default'");
  }
  {
    pb::LeaveGroupRequest r;
    r.set_tenant("default");
    r.set_group("g");
    pb::LeaveGroupResponse out;
    auto ctx = deadline(5s);
    expect_denied(blue->LeaveGroup(ctx.get(), r, &out), "LeaveGroup", who + " call LeaveGroup");
  }
  for (const bool by_id : {true, false}) {
    pb::DestroyGroupRequest r;
    if (by_id) {
      r.set_group_id(id);
    } else {
      r.set_tenant("default");
      r.set_group("g");
    }
    pb::DestroyGroupResponse out;
    auto ctx = deadline(5s);
    expect_denied(blue->DestroyGroup(ctx.get(), r, &out), "DestroyGroup",
                  who + " destroy " +
                      (by_id ? "group " + std::to_string(id) : "a group of tenant 'default'"));
  }
  {  // Its own name with another tenant's id is no way round.
    pb::DestroyGroupRequest r;
    r.set_group_id(id);
    r.set_tenant("blue");
    pb::DestroyGroupResponse out;
    auto ctx = deadline(5s);
    expect_denied(blue->DestroyGroup(ctx.get(), r, &out), "DestroyGroup", who + " destroy group");
  }
  {
    pb::ListGroupsRequest r;
    r.set_tenant("default");
    pb::ListGroupsResponse out;
    auto ctx = deadline(5s);
    expect_denied(blue->ListGroups(ctx.get(), r, &out), "ListGroups",
                  who + " call ListGroups for tenant 'default'");
  }
  for (const uint32_t filter : {0u, id}) {  // its own view leaves the group out
    pb::ListGroupsRequest r;
    r.set_group_id(filter);
    pb::ListGroupsResponse out;
    auto ctx = deadline(5s);
    ASSERT_TRUE(blue->ListGroups(ctx.get(), r, &out).ok());
    EXPECT_EQ(out.groups_size(), 0) << out.DebugString();
  }
  {
    pb::GetMemoryResponse out;
    auto ctx = deadline(5s);
    ASSERT_TRUE(blue->GetMemory(ctx.get(), {}, &out).ok());
    for (const auto& t : out.tenants()) EXPECT_EQ(t.tenant(), "blue");
    for (const auto& s : out.switches()) {
      for (const auto& t : s.tenants()) EXPECT_EQ(t.tenant(), "blue");
    }
  }
  {
    pb::ListTenantsResponse out;
    auto ctx = deadline(5s);
    ASSERT_TRUE(blue->ListTenants(ctx.get(), {}, &out).ok());
    ASSERT_EQ(out.tenants_size(), 1);
    EXPECT_EQ(out.tenants(0).name(), "blue");
  }
  {
    pb::GetTelemetryResponse out;
    auto ctx = deadline(5s);
    ASSERT_TRUE(blue->GetTelemetry(ctx.get(), {}, &out).ok());
    for (const auto& s : out.switches()) EXPECT_EQ(s.groups_size(), 0) << out.DebugString();
  }
  {  // The operator's calls.
    auto ctx = [] { return deadline(5s); };
    pb::SetTenantRequest st;
    st.mutable_tenant()->set_name("blue");
    pb::SetTenantResponse st_out;
    expect_denied(blue->SetTenant(ctx().get(), st, &st_out), "SetTenant", who + " call SetTenant");
    pb::AddLinkResponse al_out;
    expect_denied(blue->AddLink(ctx().get(), {}, &al_out), "AddLink", who + " call AddLink");
    pb::AttachRankResponse ar_out;
    expect_denied(blue->AttachRank(ctx().get(), {}, &ar_out), "AttachRank",
                  who + " call AttachRank");
    pb::ListSwitchesResponse ls_out;
    expect_denied(blue->ListSwitches(ctx().get(), {}, &ls_out), "ListSwitches",
                  who + " call ListSwitches");
    pb::GetTopologyResponse gt_out;
    expect_denied(blue->GetTopology(ctx().get(), {}, &gt_out), "GetTopology",
                  who + " call GetTopology");
  }

  // Nothing of it changed the group; the admin sees it and its counters.
  auto admin = m.stub("client");
  {
    pb::ListGroupsResponse out;
    auto ctx = deadline(5s);
    ASSERT_TRUE(admin->ListGroups(ctx.get(), {}, &out).ok());
    ASSERT_EQ(out.groups_size(), 1);
    EXPECT_EQ(out.groups(0).state(), "installed");
    EXPECT_FALSE(out.groups(0).ranks(0).left());
    pb::GetTelemetryResponse tel;
    auto ctx2 = deadline(5s);
    ASSERT_TRUE(admin->GetTelemetry(ctx2.get(), {}, &tel).ok());
    ASSERT_EQ(tel.switches_size(), 1);
    EXPECT_EQ(tel.switches(0).groups_size(), 1);
  }
  // Its own tenant reads it and destroys it.
  auto mine = m.stub("tenant-default");
  {
    pb::ListGroupsResponse out;
    auto ctx = deadline(5s);
    ASSERT_TRUE(mine->ListGroups(ctx.get(), {}, &out).ok());
    EXPECT_EQ(out.groups_size(), 1);
    pb::DestroyGroupRequest r;
    r.set_group_id(id);
    pb::DestroyGroupResponse done;
    auto ctx2 = deadline(5s);
    const grpc::Status s = mine->DestroyGroup(ctx2.get(), r, &done);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  agent.close();
}

TEST(Authorization, AnAgentCertificateRegistersOnlyItsOwnSwitchAndCallsNoManagerRpc) {
  MutualTlsManager m;
  if (!have_openssl()) GTEST_SKIP() << "openssl is not installed: cannot make a test CA";
  ASSERT_TRUE(m.ok());
  {
    FakeAgent wrong(m.channel("agent-leaf1"));
    pb::AgentMessage reg;
    *reg.mutable_registration() = FakeAgent::leaf0(256);
    wrong.send(reg);
    EXPECT_TRUE(wrong.ended());
    expect_denied(wrong.close(), "Connect as leaf0",
                  "agent:leaf1 may not register as switch 'leaf0'");
  }
  for (const auto& [cert, words] :
       {std::pair{"client", "admin may not open an agent stream"},
        std::pair{"tenant-blue", "tenant:blue may not open an agent stream"},
        std::pair{"norole", "names no EPIC role"}}) {
    FakeAgent other(m.channel(cert));
    EXPECT_TRUE(other.ended()) << cert;
    expect_denied(other.close(), std::string("Connect with ") + cert, words);
  }
  FakeAgent leaf0(m.channel("agent-leaf0"));
  leaf0.register_switch(FakeAgent::leaf0(256));
  pb::ListSwitchesResponse out;
  auto ctx = deadline(5s);
  expect_denied(m.stub("agent-leaf0")->ListSwitches(ctx.get(), {}, &out), "ListSwitches",
                "agent:leaf0 may not call ListSwitches");
  auto ctx2 = deadline(5s);
  ASSERT_TRUE(m.stub("client")->ListSwitches(ctx2.get(), {}, &out).ok());
  ASSERT_EQ(out.switches_size(), 1);
  EXPECT_TRUE(out.switches(0).connected());
  pb::ListGroupsResponse groups;
  auto ctx3 = deadline(5s);
  expect_denied(m.stub("agent-leaf0")->ListGroups(ctx3.get(), {}, &groups), "ListGroups",
                "agent:leaf0 may not");
  leaf0.close();
}

TEST(Authorization, ACertificateWithoutARoleIsRefused) {
  MutualTlsManager m;
  if (!have_openssl()) GTEST_SKIP() << "openssl is not installed: cannot make a test CA";
  ASSERT_TRUE(m.ok());
  pb::ListGroupsResponse out;
  auto ctx = deadline(5s);
  expect_denied(m.stub("norole")->ListGroups(ctx.get(), {}, &out), "ListGroups",
                "(CN=leaf0-agent) names no EPIC role");
  pb::JoinGroupResponse joined;
  auto ctx2 = deadline(5s);
  expect_denied(m.stub("norole")->JoinGroup(ctx2.get(), join_request("g", 1, 0), &joined),
                "JoinGroup", "names no EPIC role");
}

TEST(Caps, PendingJoinsPerTenantAreCappedWithTheCapsName) {
  TempDir dir;
  TestManager m(dir);
  ServiceOptions o = test_options();
  o.max_pending_joins_per_tenant = 2;
  m.start(o);
  FakeAgent agent(m.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  AsyncJoin r0(m, join_request("big", 4, 0));
  AsyncJoin r1(m, join_request("big", 4, 1));
  // Both wait in the rendezvous; a third call of the tenant is refused at once.
  bool both_pending = false;
  for (int i = 0; i < 200 && !both_pending; ++i) {
    pb::ListGroupsResponse out;
    auto ctx = deadline(2s);
    m.stub()->ListGroups(ctx.get(), {}, &out);
    both_pending = out.pending_size() == 1 && out.pending(0).joined_size() == 2;
    if (!both_pending) std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(both_pending);
  pb::JoinGroupResponse out;
  auto ctx = deadline(5s);
  const grpc::Status s = m.stub()->JoinGroup(ctx.get(), join_request("big", 4, 2), &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("pending joins of tenant 'default': 2 JoinGroup calls wait "
                                   "already, the cap is 2 (--max-pending-joins-per-tenant)"),
            std::string::npos)
      << s.error_message();
  // Another tenant is not held back by it.
  pb::SetTenantRequest blue;
  blue.mutable_tenant()->set_name("blue");
  pb::SetTenantResponse st;
  auto ctx2 = deadline(5s);
  ASSERT_TRUE(m.stub()->SetTenant(ctx2.get(), blue, &st).ok());
  auto other = join_request("solo", 1, 0);
  other.set_tenant("blue");
  other.mutable_endpoint()->set_ipv4(rank_ipv4(3));  // rank 0 of its group, on rank 3's port
  other.mutable_endpoint()->set_qpn(0x103);
  AsyncJoin r3(m, other);
  auto install = agent.next();
  ASSERT_TRUE(install && install->has_action());
  agent.ack(install->action().action_id());
  EXPECT_TRUE(r3.get().status.ok()) << r3.get().status.error_message();
  m.stop();  // answers the waiting ranks
  EXPECT_FALSE(r0.get().status.ok());
  EXPECT_FALSE(r1.get().status.ok());
}

TEST(Caps, AgentStreamsAreCappedWithTheCapsName) {
  TempDir dir;
  TestManager m(dir);
  ServiceOptions o = test_options();
  o.max_agent_streams = 1;
  m.start(o);
  FakeAgent first(m.channel());
  first.register_switch(FakeAgent::leaf0(256));
  FakeAgent second(m.channel());
  EXPECT_TRUE(second.ended());
  const grpc::Status s = second.close();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("agent streams: 1 are open, the cap is 1 (--max-agent-streams)"),
            std::string::npos)
      << s.error_message();
  first.close();
}

TEST(Transport, WithoutClientCertificatesOnlyAUnixSocketIsServed) {
  TempDir dir;
  for (const bool tls : {false, true}) {
    if (tls && !(have_openssl() && make_test_pki(dir.path()))) continue;
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    if (tls) o.tls = {dir.path() + "/server.pem", dir.path() + "/server.key", ""};
    o.service = test_options();
    auto refused = ManagerServer::start(o, quiet_log());
    ASSERT_FALSE(refused.ok()) << (tls ? "TLS" : "plaintext");
    EXPECT_NE(refused.error().message.find(
                  "--listen 127.0.0.1:0: without client certificates every caller would be the "
                  "operator"),
              std::string::npos)
        << refused.error().message;
    o.insecure = true;  // said out loud
    auto allowed = ManagerServer::start(o, quiet_log());
    ASSERT_TRUE(allowed.ok()) << allowed.error().to_string();
    allowed.value()->stop();
  }
}

TEST(Transport, TheUnixSocketHasTheConfiguredMode) {
  TempDir dir;
  for (const uint32_t mode : {kDefaultSocketMode, 0660u}) {
    ServerOptions o;
    const std::string path = dir.path() + "/sub/m" + std::to_string(mode) + ".sock";
    o.listen = "unix:" + path;  // its directory is made
    o.socket_mode = mode;
    o.service = test_options();
    auto s = ManagerServer::start(o, quiet_log());
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, mode);
    s.value()->stop();
  }
  ServerOptions bad;
  bad.listen = "unix:" + dir.path() + "/bad.sock";
  bad.socket_mode = 01777;
  auto refused = ManagerServer::start(bad, quiet_log());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--socket-mode"), std::string::npos);
}

}  // namespace
}  // namespace epic::manager::service::testing
