// The INC_MANAGER keys of libinc's CommConfig (host/inc/manager_config.h): defaults, each bad
// value named with its key, the static peer keys conflicting, INC_GROUP required, keys that
// need INC_MANAGER refused without it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "host/inc/comm_config.h"
#include "host/transport/open.h"

namespace epic::inc {
namespace {

std::map<std::string, std::string> managed_soft_rank() {
  return {{"INC_RANK", "1"},
          {"INC_RANKS", "4"},
          {"INC_TRANSPORT", "soft"},
          {"INC_IFACE", "veth0"},
          {"INC_MAC", "02:00:00:00:00:02"},
          {"INC_IP", "10.0.0.2"},
          {"INC_QPN", "18"},
          {"INC_MANAGER", "unix:/run/epic/manager.sock"},
          {"INC_GROUP", "job-1/dp"}};
}

TEST(ManagerConfig, DefaultsWithAManager) {
  const ConfigResult r = config_from_pairs(managed_soft_rank());
  ASSERT_TRUE(r.ok()) << r.error;
  const ManagerOptions& m = r.config.manager;
  EXPECT_TRUE(m.enabled());
  EXPECT_EQ(m.address, "unix:/run/epic/manager.sock");
  EXPECT_EQ(m.tenant, "default");
  EXPECT_EQ(m.group, "job-1/dp");
  EXPECT_EQ(m.queue_timeout_ms, 0u);
  EXPECT_EQ(m.join_timeout.count(), 60000);
  EXPECT_TRUE(m.host_fallback);
  EXPECT_EQ(m.host_qpn, 20u);  // INC_QPN + 2
  EXPECT_FALSE(m.window);      // the manager's default
  EXPECT_FALSE(m.pmtu);
  EXPECT_FALSE(m.mode);  // the fabric's default
}

TEST(ManagerConfig, EveryKeyIsRead) {
  auto pairs = managed_soft_rank();
  pairs["INC_MANAGER"] = "mgr.example:7700";
  pairs["INC_TENANT"] = "team-a";
  pairs["INC_QUEUE_TIMEOUT_MS"] = "5000";
  pairs["INC_JOIN_TIMEOUT_MS"] = "1500";
  pairs["INC_MANAGER_CA"] = "/etc/epic/ca.pem";
  pairs["INC_MANAGER_CERT"] = "/etc/epic/rank.pem";
  pairs["INC_MANAGER_KEY"] = "/etc/epic/rank.key";
  pairs["INC_HOST_FALLBACK"] = "0";
  pairs["INC_HOST_QPN"] = "0x300";
  pairs["INC_WINDOW"] = "64";
  pairs["INC_PMTU"] = "4096";
  pairs["INC_MODE"] = "3";
  const ConfigResult r = config_from_pairs(pairs);
  ASSERT_TRUE(r.ok()) << r.error;
  const ManagerOptions& m = r.config.manager;
  EXPECT_EQ(m.address, "mgr.example:7700");
  EXPECT_EQ(m.tenant, "team-a");
  EXPECT_EQ(m.queue_timeout_ms, 5000u);
  EXPECT_EQ(m.join_timeout.count(), 1500);
  EXPECT_EQ(m.ca_file, "/etc/epic/ca.pem");
  EXPECT_EQ(m.cert_file, "/etc/epic/rank.pem");
  EXPECT_EQ(m.key_file, "/etc/epic/rank.key");
  EXPECT_FALSE(m.host_fallback);
  EXPECT_EQ(m.host_qpn, 0x300u);
  EXPECT_EQ(m.window, 64u);
  EXPECT_EQ(m.pmtu, 4096);
  EXPECT_EQ(m.mode, 3u);
}

TEST(ManagerConfig, EachBadValueIsNamedWithItsKey) {
  const std::pair<const char*, const char*> cases[] = {{"INC_MANAGER", "nohost"},
                                                       {"INC_MANAGER", "host:0"},
                                                       {"INC_MANAGER", "unix:"},
                                                       {"INC_TENANT", "a b"},
                                                       {"INC_GROUP", ""},
                                                       {"INC_QUEUE_TIMEOUT_MS", "-1"},
                                                       {"INC_JOIN_TIMEOUT_MS", "0"},
                                                       {"INC_HOST_FALLBACK", "yes"},
                                                       {"INC_HOST_QPN", "0"},
                                                       {"INC_MODE", "1"},
                                                       {"INC_MODE", "III"},
                                                       {"INC_MANAGER_CA", ""}};
  for (const auto& [key, value] : cases) {
    auto pairs = managed_soft_rank();
    pairs[key] = value;
    const ConfigResult r = config_from_pairs(pairs);
    EXPECT_FALSE(r.ok()) << key << "=" << value;
    EXPECT_EQ(r.error.rfind(std::string(key) + "=" + value + ": ", 0), 0u) << r.error;
  }
}

TEST(ManagerConfig, StaticPeerKeysConflictWithAManager) {
  for (const char* key : {"INC_SWITCH_IP", "INC_SWITCH_QPN", "INC_PSN"}) {
    auto pairs = managed_soft_rank();
    pairs[key] = key == std::string("INC_SWITCH_IP") ? "10.0.0.254" : "5";
    const ConfigResult r = config_from_pairs(pairs);
    EXPECT_FALSE(r.ok()) << key;
    EXPECT_NE(r.error.find(std::string(key) + " conflicts with INC_MANAGER="), std::string::npos)
        << r.error;
  }
}

TEST(ManagerConfig, GroupIsRequiredAndCertificateNeedsItsKey) {
  auto pairs = managed_soft_rank();
  pairs.erase("INC_GROUP");
  ConfigResult r = config_from_pairs(pairs);
  EXPECT_NE(r.error.find("needs INC_GROUP"), std::string::npos) << r.error;
  pairs = managed_soft_rank();
  pairs["INC_MANAGER_CERT"] = "/etc/epic/rank.pem";
  r = config_from_pairs(pairs);
  EXPECT_NE(r.error.find("INC_MANAGER_CERT needs INC_MANAGER_KEY"), std::string::npos) << r.error;
}

TEST(ManagerConfig, SoftStillNeedsItsOwnIdentity) {
  auto pairs = managed_soft_rank();
  pairs.erase("INC_QPN");
  const ConfigResult r = config_from_pairs(pairs);
  EXPECT_NE(r.error.find("INC_TRANSPORT=soft needs"), std::string::npos) << r.error;
}

TEST(ManagerConfig, ManagerKeysWithoutAManagerAreRefused) {
  std::map<std::string, std::string> pairs = {
      {"INC_RANK", "0"},          {"INC_RANKS", "1"},
      {"INC_TRANSPORT", "verbs"}, {"INC_SWITCH_IP", "10.0.0.254"},
      {"INC_SWITCH_QPN", "7"},    {"INC_GROUP", "g"}};
  const ConfigResult r = config_from_pairs(pairs);
  EXPECT_EQ(r.error, "INC_GROUP needs INC_MANAGER (the inc-manager to join through)");
  pairs.erase("INC_GROUP");
  pairs["INC_MODE"] = "3";  // a static group's mode is the switch's config
  EXPECT_EQ(config_from_pairs(pairs).error,
            "INC_MODE needs INC_MANAGER (the inc-manager to join through)");
}

TEST(ManagerConfig, TheTrafficClassIsAskedOfTheManagerOnly) {
  EXPECT_FALSE(config_from_pairs(managed_soft_rank()).config.manager.dscp) << "the tenant's";
  auto pairs = managed_soft_rank();
  pairs["INC_DSCP"] = "46";
  ConfigResult r = config_from_pairs(pairs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.manager.dscp, 46);
  pairs["INC_DSCP"] = "64";
  r = config_from_pairs(pairs);
  EXPECT_NE(r.error.find("INC_DSCP"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("expected a DSCP 0..63"), std::string::npos) << r.error;
  const ConfigResult alone = config_from_pairs({{"INC_RANK", "0"},
                                                {"INC_RANKS", "1"},
                                                {"INC_TRANSPORT", "verbs"},
                                                {"INC_SWITCH_IP", "10.0.0.254"},
                                                {"INC_SWITCH_QPN", "7"},
                                                {"INC_DSCP", "46"}});
  EXPECT_EQ(alone.error, "INC_DSCP needs INC_MANAGER (the inc-manager to join through)");
}

// The manager's DSCP replaces the DSCP bits of INC_TRAFFIC_CLASS and keeps its ECN bits.
TEST(ManagerConfig, TheManagersDscpKeepsTheRanksEcnBits) {
  EXPECT_EQ(host::peer_traffic_class(0x62, std::nullopt), 0x62);  // no answer: as configured
  EXPECT_EQ(host::peer_traffic_class(0x62, uint8_t{46}), (46 << 2) | 2);  // ECT(0) kept
  EXPECT_EQ(host::peer_traffic_class(0x00, uint8_t{46}), 46 << 2);
  EXPECT_EQ(host::peer_traffic_class(0xBB, uint8_t{0}), 3);  // best effort, CE bits kept as set
}

// Plaintext only to a unix socket or loopback address, unless INC_MANAGER_INSECURE=1 says so:
// never a silent downgrade.
TEST(ManagerConfig, PlaintextToARemoteManagerNeedsToBeAskedFor) {
  auto pairs = managed_soft_rank();
  pairs["INC_MANAGER"] = "10.0.0.9:7443";
  ConfigResult r = config_from_pairs(pairs);
  EXPECT_EQ(r.error,
            "INC_MANAGER=10.0.0.9:7443 is not a unix socket or loopback address: set "
            "INC_MANAGER_CA (and INC_MANAGER_CERT/INC_MANAGER_KEY for mutual TLS), or "
            "INC_MANAGER_INSECURE=1 for plaintext");
  pairs["INC_MANAGER_INSECURE"] = "1";
  r = config_from_pairs(pairs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config.manager.insecure);
  pairs.erase("INC_MANAGER_INSECURE");
  pairs["INC_MANAGER_CA"] = "/etc/epic/ca.pem";
  EXPECT_TRUE(config_from_pairs(pairs).ok());
  pairs.erase("INC_MANAGER_CA");
  for (const char* local : {"127.0.0.1:7443", "localhost:7443", "[::1]:7443", "unix:/run/m"}) {
    pairs["INC_MANAGER"] = local;
    EXPECT_TRUE(config_from_pairs(pairs).ok()) << local;
  }
  pairs["INC_MANAGER_INSECURE"] = "yes";
  EXPECT_EQ(config_from_pairs(pairs).error.rfind("INC_MANAGER_INSECURE=yes: expected 1", 0), 0u);
}

TEST(ManagerConfig, KeysAreListedForHelp) {
  size_t found = 0;
  for (const auto& [key, meaning] : config_keys()) {
    found += key.rfind("INC_MANAGER", 0) == 0 || key == "INC_GROUP" || key == "INC_TENANT" ||
             key == "INC_QUEUE_TIMEOUT_MS" || key == "INC_JOIN_TIMEOUT_MS" ||
             key == "INC_HOST_FALLBACK" || key == "INC_HOST_QPN" || key == "INC_MODE";
  }
  EXPECT_EQ(found, 12u);
}

}  // namespace
}  // namespace epic::inc
