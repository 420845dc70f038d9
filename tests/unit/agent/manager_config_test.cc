// incd's `manager:` section (daemon/config/manager_validate.h) and the command-line overrides
// --manager / --switch-id.
#include <gtest/gtest.h>

#include "daemon/config/config.h"
#include "proto/vocab/addr.h"

namespace epic::incd {
namespace {

const std::string kBase = R"(
ports:
  - { name: r0, device: net_null0 }
switch:
  inc_addresses:
    - { ipv4: 10.77.0.254, mac: "02:ec:00:00:00:fe" }
    - { ipv4: 10.78.0.254, mac: "02:ec:00:00:01:fe" }
)";

const std::string kStaticGroup = R"(
groups:
  - id: 1
    ranks: 1
    window: 64
    children:
      - { port: r0, rank: 0, remote: { mac: "02:00:00:00:00:01", ipv4: 10.77.0.1, qpn: 1 },
          local: { ipv4: 10.77.0.254, qpn: 0x1000 } }
)";

std::vector<std::string> errors_of(const LoadResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.errors) out.push_back(e.to_string());
  return out;
}

TEST(ManagerConfig, AbsentSectionMeansNoManager) {
  const LoadResult r = parse_config(kBase, false);
  ASSERT_TRUE(r.config) << errors_of(r).front();
  EXPECT_FALSE(r.config->manager);
}

TEST(ManagerConfig, MinimalSectionTakesTheDocumentedDefaults) {
  const LoadResult r =
      parse_config(kBase + "manager: { address: 'mgr:7443', switch_id: leaf0 }", false);
  ASSERT_TRUE(r.config) << errors_of(r).front();
  const ManagerConfig& m = *r.config->manager;
  EXPECT_EQ(m.address, "mgr:7443");
  EXPECT_EQ(m.switch_id, "leaf0");
  EXPECT_EQ(vocab::format_ipv4(m.inc.ipv4), "10.77.0.254");  // the first inc address
  EXPECT_EQ(m.slot_capacity, 8192u);
  EXPECT_EQ(m.max_window, 1024u);
  EXPECT_EQ(m.max_pmtu, 4096);
  EXPECT_EQ(m.heartbeat_ms, 1000u);
  EXPECT_EQ(m.reconnect_initial_ms, 200u);
  EXPECT_EQ(m.reconnect_max_ms, 10000u);
  EXPECT_DOUBLE_EQ(m.reconnect_jitter, 0.2);
  EXPECT_EQ(m.keepalive_ms, 0u);
  EXPECT_FALSE(m.tls.enabled);
}

TEST(ManagerConfig, EveryFieldIsMapped) {
  const LoadResult r = parse_config(kBase + R"(
manager:
  address: unix:/run/inc-manager.sock
  switch_id: spine-0.a_b
  inc_ipv4: 10.78.0.254
  slot_capacity: 4096
  max_window: 256
  max_pmtu: 2048
  heartbeat_ms: 250
  reconnect_initial_ms: 50
  reconnect_max_ms: 5000
  reconnect_jitter: 0.5
  keepalive_ms: 30000
  tls: { root_ca_file: /etc/epic/ca.pem, cert_file: c.pem, key_file: k.pem, server_name: mgr }
)",
                                    false);
  ASSERT_TRUE(r.config) << errors_of(r).front();
  const ManagerConfig& m = *r.config->manager;
  EXPECT_EQ(m.switch_id, "spine-0.a_b");
  EXPECT_EQ(vocab::format_mac(m.inc.mac), "02:ec:00:00:01:fe");
  EXPECT_EQ(m.slot_capacity, 4096u);
  EXPECT_EQ(m.max_window, 256u);
  EXPECT_EQ(m.max_pmtu, 2048);
  EXPECT_EQ(m.heartbeat_ms, 250u);
  EXPECT_EQ(m.reconnect_initial_ms, 50u);
  EXPECT_EQ(m.reconnect_max_ms, 5000u);
  EXPECT_DOUBLE_EQ(m.reconnect_jitter, 0.5);
  EXPECT_EQ(m.keepalive_ms, 30000u);
  EXPECT_TRUE(m.tls.enabled);  // implied by the files
  EXPECT_EQ(m.tls.root_ca_file, "/etc/epic/ca.pem");
  EXPECT_EQ(m.tls.server_name, "mgr");
}

TEST(ManagerConfig, EveryBadFieldIsReportedByPath) {
  const LoadResult r = parse_config(kBase + kStaticGroup + R"(
manager:
  switch_id: "leaf 0"
  inc_ipv4: 10.99.0.1
  slot_capacity: 100
  max_window: 100
  max_pmtu: 3000
  heartbeat_ms: 0
  reconnect_initial_ms: 500
  reconnect_max_ms: 100
  reconnect_jitter: 1.5
  tls: { cert_file: c.pem }
)",
                                    false);
  EXPECT_EQ(errors_of(r),
            (std::vector<std::string>{
                "manager.address: required (inc-manager's gRPC target: host:port, "
                "dns:///name:port or unix:/path)",
                "manager.switch_id: \"leaf 0\" is not 1..64 of [A-Za-z0-9._-] (e.g. leaf0)",
                "manager.inc_ipv4: \"10.99.0.1\" is not one of switch.inc_addresses",
                "manager.max_window: 100 is not a power of two in 1..1048576",
                "manager.max_pmtu: 3000 is not one of 256, 512, 1024, 2048, 4096",
                "manager.slot_capacity: 100 slots cannot hold the 128 slots (2*window each) of "
                "the static groups",
                "manager.heartbeat_ms: 0 is outside 1..60000",
                "manager.reconnect_max_ms: 100 is below reconnect_initial_ms 500",
                "manager.reconnect_jitter: 1.5 is outside [0, 1]",
                "manager.tls.key_file: a client certificate and its key go together (set both "
                "cert_file and key_file)",
            }));
}

TEST(ManagerConfig, CommandLineValuesReplaceTheFilesAndAreCheckedTheSameWay) {
  ConfigOverrides o;
  o.manager_address = "10.0.0.9:7443";
  o.switch_id = "leaf7";
  const LoadResult r = parse_config(kBase, false, o);  // no manager section in the file
  ASSERT_TRUE(r.config) << errors_of(r).front();
  EXPECT_EQ(r.config->manager->address, "10.0.0.9:7443");
  EXPECT_EQ(r.config->manager->switch_id, "leaf7");

  ConfigOverrides only_address;
  only_address.manager_address = "10.0.0.9:7443";
  EXPECT_EQ(errors_of(parse_config(kBase, false, only_address)),
            (std::vector<std::string>{
                "manager.switch_id: \"\" is not 1..64 of [A-Za-z0-9._-] (e.g. leaf0)"}));
}

}  // namespace
}  // namespace epic::incd
