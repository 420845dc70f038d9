// incd's `manager:` section (daemon/config/manager_validate.h) and the command-line overrides
// --manager / --switch-id.
#include <gtest/gtest.h>

#include "daemon/config/config.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/memory.h"

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

// A `groups:` entry of one rank behind r0: rank NIC 10.77.0.<id>, the switch's QPN 0x1000 + id.
std::string group_entry(int id, const std::string& extra) {
  const std::string n = std::to_string(id);
  return "  - { id: " + n + ", ranks: 1, window: 64" + extra +
         ", children: [{ port: r0, rank: 0, remote: { mac: \"02:00:00:00:00:0" + n +
         "\", ipv4: 10.77.0." + n +
         ", qpn: 1 }, local: { ipv4: 10.77.0.254, qpn: " + std::to_string(0x1000 + id) +
         " } }] }\n";
}

const std::string kStaticGroup = "\ngroups:\n" + group_entry(1, "");

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
      parse_config(kBase + "manager: { address: '127.0.0.1:7443', switch_id: leaf0 }", false);
  ASSERT_TRUE(r.config) << errors_of(r).front();
  const ManagerConfig& m = *r.config->manager;
  EXPECT_EQ(m.address, "127.0.0.1:7443");
  EXPECT_EQ(m.switch_id, "leaf0");
  EXPECT_EQ(vocab::format_ipv4(m.inc.ipv4), "10.77.0.254");            // the first inc address
  EXPECT_EQ(m.memory_capacity_bytes, 8192 * vocab::slot_bytes(1024));  // 25427968
  EXPECT_EQ(m.max_window, 1024u);
  EXPECT_EQ(m.max_pmtu, 4096);
  EXPECT_EQ(m.heartbeat_ms, 1000u);
  EXPECT_EQ(m.reconnect_initial_ms, 200u);
  EXPECT_EQ(m.reconnect_max_ms, 10000u);
  EXPECT_DOUBLE_EQ(m.reconnect_jitter, 0.2);
  EXPECT_EQ(m.keepalive_ms, 20000u);  // keepalives on unless keepalive_ms: 0
  EXPECT_FALSE(m.tls.enabled);
}

TEST(ManagerConfig, KeepaliveZeroTurnsThePingsOff) {
  const LoadResult r = parse_config(
      kBase + "manager: { address: '127.0.0.1:7443', switch_id: leaf0, keepalive_ms: 0 }", false);
  ASSERT_TRUE(r.config) << errors_of(r).front();
  EXPECT_EQ(r.config->manager->keepalive_ms, 0u);
}

TEST(ManagerConfig, EveryFieldIsMapped) {
  const LoadResult r = parse_config(kBase + R"(
manager:
  address: unix:/run/inc-manager.sock
  switch_id: spine-0.a_b
  inc_ipv4: 10.78.0.254
  memory_capacity_bytes: 12713984
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
  EXPECT_EQ(m.memory_capacity_bytes, 12713984u);
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
  memory_capacity_bytes: 310400
  max_window: 100
  max_pmtu: 3000
  heartbeat_ms: 0
  reconnect_initial_ms: 500
  reconnect_max_ms: 100
  reconnect_jitter: 1.5
  keepalive_ms: 999
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
                "manager.memory_capacity_bytes: static group 1 needs 397312 bytes (window 64, "
                "pmtu 1024), 310400 free (capacity 310400, 0 held by the static groups before it)",
                "manager.heartbeat_ms: 0 is outside 1..60000",
                "manager.reconnect_max_ms: 100 is below reconnect_initial_ms 500",
                "manager.reconnect_jitter: 1.5 is outside [0, 1]",
                "manager.keepalive_ms: 999 is outside 1000..3600000 (0: off)",
                "manager.tls.key_file: a client certificate and its key go together (set both "
                "cert_file and key_file)",
            }));
}

TEST(ManagerConfig, StaticGroupsMustFitTheMemoryCapacityInFileOrder) {
  // Static group 1: window 64, pmtu 1024 = 128 slots of 3104 = 397312 bytes; group 2: window
  // 64, pmtu 256 = 128 slots of 800 = 102400 bytes.
  const std::string two_groups = kStaticGroup + group_entry(2, ", pmtu: 256");
  const std::string manager =
      "manager: { address: unix:/m, switch_id: leaf0, memory_capacity_bytes: ";
  const LoadResult fits = parse_config(kBase + two_groups + manager + "499712 }", false);
  ASSERT_TRUE(fits.config) << errors_of(fits).front();
  EXPECT_EQ(fits.config->manager->memory_capacity_bytes, 499712u);
  EXPECT_EQ(errors_of(parse_config(kBase + two_groups + manager + "499711 }", false)),
            (std::vector<std::string>{
                "manager.memory_capacity_bytes: static group 2 needs 102400 bytes (window 64, "
                "pmtu 256), 102399 free (capacity 499711, 397312 held by the static groups "
                "before it)"}));
  EXPECT_EQ(errors_of(parse_config(kBase + manager + "0 }", false)),
            (std::vector<std::string>{"manager.memory_capacity_bytes: must be >= 1"}));
}

TEST(ManagerConfig, TheSlotCapacityOfEarlierVersionsIsRefusedNamingItsReplacement) {
  const std::string expected =
      "manager.slot_capacity: slots are no longer counted: set manager.memory_capacity_bytes "
      "(bytes; a group with window W and pmtu P holds 2*W*(3*P + 32))";
  EXPECT_EQ(
      errors_of(parse_config(
          kBase + "manager: { address: unix:/m, switch_id: leaf0, slot_capacity: 8192 }", false)),
      (std::vector<std::string>{expected}));
  EXPECT_EQ(errors_of(parse_config(
                kBase + "manager: { address: unix:/m, switch_id: leaf0, slot_capacity: "
                        "8192, memory_capacity_bytes: 25427968 }",
                false)),
            (std::vector<std::string>{expected}));
}

TEST(ManagerConfig, CommandLineValuesReplaceTheFilesAndAreCheckedTheSameWay) {
  ConfigOverrides o;
  o.manager_address = "127.0.0.9:7443";
  o.switch_id = "leaf7";
  const LoadResult r = parse_config(kBase, false, o);  // no manager section in the file
  ASSERT_TRUE(r.config) << errors_of(r).front();
  EXPECT_EQ(r.config->manager->address, "127.0.0.9:7443");
  EXPECT_EQ(r.config->manager->switch_id, "leaf7");

  ConfigOverrides only_address;
  only_address.manager_address = "127.0.0.9:7443";
  EXPECT_EQ(errors_of(parse_config(kBase, false, only_address)),
            (std::vector<std::string>{
                "manager.switch_id: \"\" is not 1..64 of [A-Za-z0-9._-] (e.g. leaf0)"}));
}

// Plaintext only to a unix socket or loopback address, unless `insecure: true` says so: never a
// silent downgrade (issue 16). TLS files, or `tls.enabled`, make any address fine.
TEST(ManagerConfig, PlaintextToARemoteManagerNeedsToBeAskedFor) {
  const std::string remote = "manager: { address: '10.0.0.9:7443', switch_id: leaf0";
  EXPECT_EQ(errors_of(parse_config(kBase + remote + " }", false)),
            (std::vector<std::string>{
                "manager.address: \"10.0.0.9:7443\" is not a unix socket or loopback address: "
                "set manager.tls (root_ca_file, and cert_file/key_file for mutual TLS), or "
                "manager.insecure: true for plaintext"}));
  for (const char* ok : {", insecure: true }", ", tls: { enabled: true } }",
                         ", tls: { root_ca_file: /etc/epic/ca.pem } }"}) {
    const LoadResult r = parse_config(kBase + remote + ok, false);
    EXPECT_TRUE(r.config) << ok << ": " << errors_of(r).front();
  }
  ConfigOverrides o;  // the command line is checked the same way
  o.manager_address = "mgr.example:7443";
  o.switch_id = "leaf7";
  ASSERT_EQ(errors_of(parse_config(kBase, false, o)).size(), 1u);
}

}  // namespace
}  // namespace epic::incd
