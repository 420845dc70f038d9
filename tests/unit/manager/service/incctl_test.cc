// incctl against a real manager: tables and --json, a write, and exit code 2 with the address
// when the manager cannot be reached.
#include <array>
#include <cstdio>
#include <memory>
#include <vector>

#include "tests/unit/manager/service/harness.h"

namespace epic::manager::service::testing {
namespace {

struct CliRun {
  int rc = -1;
  std::string out;
};

CliRun incctl(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(INCCTL_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(IncctlTest, ShowsSwitchesGroupsTreeAndMemory) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options());
  FakeAgent agent(m.channel());
  agent.register_switch(FakeAgent::leaf0(256));
  const pb::Action install = install_group(m, agent, "job");
  ASSERT_TRUE(install.has_context());
  const std::string mgr = "--manager " + m.address() + " ";

  CliRun sw = incctl(mgr + "switches");
  EXPECT_EQ(sw.rc, 0) << sw.out;
  EXPECT_NE(sw.out.find("leaf0"), std::string::npos) << sw.out;
  EXPECT_NE(sw.out.find("connected"), std::string::npos) << sw.out;

  CliRun g = incctl(mgr + "groups");
  EXPECT_EQ(g.rc, 0) << g.out;
  EXPECT_NE(g.out.find("installed"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("MODE"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("installed  Mode-II"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("99328 (97 KiB)"), std::string::npos) << g.out;  // bytes per switch
  // Mode-II vs Mode-III: one switch at the default speeds, both modes size window 128.
  CliRun modes = incctl(mgr + "groups --modes");
  EXPECT_EQ(modes.rc, 0) << modes.out;
  EXPECT_NE(modes.out.find("MODE-III BYTES/SWITCH"), std::string::npos) << modes.out;
  EXPECT_NE(
      modes.out.find("128             794624 (776 KiB)      128              794624 (776 KiB)"),
      std::string::npos)
      << modes.out;

  const std::string id = std::to_string(install.group_id());
  CliRun t = incctl(mgr + "tree " + id);
  EXPECT_EQ(t.rc, 0) << t.out;
  EXPECT_NE(t.out.find("r1: rank 1"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("installed, Mode-II, 2 ranks"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("switch memory: 99328 (97 KiB) bytes per switch; Mode-II would size window "
                       "128, 794624 (776 KiB); Mode-III would size window 128, 794624 (776 KiB)"),
            std::string::npos)
      << t.out;

  CliRun mem = incctl(mgr + "--json memory");
  EXPECT_EQ(mem.rc, 0) << mem.out;
  // uint64 fields are strings in proto3 JSON.
  EXPECT_NE(mem.out.find("\"granted_bytes\": \"99328\""), std::string::npos) << mem.out;
  CliRun table = incctl(mgr + "memory");
  EXPECT_NE(table.out.find("99328 (97 KiB)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("794624 (776 KiB)"), std::string::npos) << table.out;  // capacity

  CliRun ct = incctl(mgr +
                     "create-tenant team-a --max-groups 2 --reserve leaf0=64KiB "
                     "--max-bytes-per-switch 200000 --max-bytes-total 1MiB");
  EXPECT_EQ(ct.rc, 0) << ct.out;
  CliRun tn = incctl(mgr + "tenants");
  EXPECT_NE(tn.out.find("leaf0=65536 (64 KiB)"), std::string::npos) << tn.out;
  EXPECT_NE(tn.out.find("200000 (195.3 KiB)"), std::string::npos) << tn.out;
  EXPECT_NE(tn.out.find("1048576 (1 MiB)"), std::string::npos) << tn.out;

  CliRun missing = incctl(mgr + "tree 999");
  EXPECT_EQ(missing.rc, 1) << missing.out;
  EXPECT_NE(missing.out.find("unknown group 999"), std::string::npos) << missing.out;

  CliRun d = incctl(mgr + "destroy " + id);
  EXPECT_EQ(d.rc, 0) << d.out;
}

// An exact group shows its profile, dtype and PRISM width in the table, the tree view and --json;
// an arrival-order group shows fp32_arrival.
TEST(IncctlTest, ShowsEachGroupsAccumulatorProfile) {
  TempDir dir;
  TestManager m(dir);
  m.start(test_options());
  FakeAgent agent(m.channel());
  agent.register_switch(FakeAgent::leaf0(1024));
  const pb::Action plain = install_group(m, agent, "plain");
  ASSERT_TRUE(plain.has_context());
  pb::Action exact;
  {
    std::vector<std::unique_ptr<AsyncJoin>> ranks;
    for (uint32_t r = 0; r < 2; ++r) {
      ranks.push_back(std::make_unique<AsyncJoin>(
          m, exact_join_request("exact", 2, r, pb::ELEMENT_FP16, 4, static_cast<int>(r) + 2)));
    }
    auto install = agent.next();
    ASSERT_TRUE(install && install->has_action());
    exact = install->action();
    agent.ack(exact.action_id());
    for (auto& r : ranks) ASSERT_TRUE(r->get().status.ok()) << r->get().status.error_message();
  }
  const std::string mgr = "--manager " + m.address() + " ";

  CliRun g = incctl(mgr + "groups");
  EXPECT_EQ(g.rc, 0) << g.out;
  EXPECT_NE(g.out.find("ACCUM"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("Mode-II  kulisch_fixed fp16 W=42"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("Mode-II  fp32_arrival "), std::string::npos) << g.out;

  CliRun t = incctl(mgr + "tree " + std::to_string(exact.group_id()));
  EXPECT_EQ(t.rc, 0) << t.out;
  EXPECT_NE(t.out.find("accumulator: kulisch_fixed fp16 W=42 (9 bytes of accumulator per "
                       "element)"),
            std::string::npos)
      << t.out;
  CliRun p = incctl(mgr + "tree " + std::to_string(plain.group_id()));
  EXPECT_NE(p.out.find("accumulator: fp32_arrival\n"), std::string::npos) << p.out;

  CliRun j = incctl(mgr + "--json groups");
  EXPECT_EQ(j.rc, 0) << j.out;
  EXPECT_NE(j.out.find("\"accumulator\": \"ACCUM_KULISCH_FIXED\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"dtype\": \"ELEMENT_FP16\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"exact_width_bits\": 42"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"accum_bytes_per_element\": 9"), std::string::npos) << j.out;
}

TEST(IncctlTest, UnreachableManagerExitsTwoNamingTheAddress) {
  TempDir dir;
  const std::string address = "unix:" + dir.path() + "/nobody.sock";
  CliRun r = incctl("--manager " + address + " --timeout-ms 500 switches");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("cannot reach inc-manager at " + address), std::string::npos) << r.out;
}

TEST(IncctlTest, BadUsageExitsThreeWithTheReason) {
  TempDir dir;
  const std::string m = "--manager unix:" + dir.path() + "/nobody.sock ";
  const std::pair<std::string, std::string> cases[] = {
      {"--tls-cert c.pem switches", "--tls-cert and --tls-key go together"},
      {"--tls-ca " + dir.path() + "/missing.pem switches", "cannot read " + dir.path()},
      {"create-tenant t --reserve leaf0=lots", "--reserve leaf0=lots: expected SWITCH=BYTES"},
      {"create-tenant t --reserve leaf0=99999999999999999999", "expected SWITCH=BYTES"},
      {"create-tenant t --reserve leaf0=99999999999GiB", "expected SWITCH=BYTES"},
      {"create-tenant t --reserve leaf0=5kb", "expected SWITCH=BYTES"},
      {"create-tenant t --reserve =5", "expected SWITCH=BYTES"},
      {"create-tenant t --max-bytes-per-switch -1", "--max-bytes-per-switch -1: expected BYTES"},
      {"create-tenant t --max-bytes-total 1TB", "--max-bytes-total 1TB: expected BYTES"},
      {"no-such-command", ""},
  };
  for (const auto& [args, message] : cases) {
    CliRun r = incctl(m + args);
    EXPECT_EQ(r.rc, 3) << args << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << ": " << r.out;
  }
}

}  // namespace
}  // namespace epic::manager::service::testing
