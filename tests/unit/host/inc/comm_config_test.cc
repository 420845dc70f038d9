// Peer parameters of libinc (host/inc/comm_config.h): required keys, every
// bad value named with its key, files with comments, unknown keys refused.
#include "host/inc/comm_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <tuple>

#include "host/inc/communicator.h"
#include "host/inc/inc.h"

namespace epic::inc {
namespace {

std::map<std::string, std::string> soft_rank() {
  return {{"INC_RANK", "1"},
          {"INC_RANKS", "4"},
          {"INC_TRANSPORT", "soft"},
          {"INC_SWITCH_IP", "10.0.0.254"},
          {"INC_SWITCH_QPN", "0x1001"},
          {"INC_PSN", "256"},
          {"INC_IFACE", "veth0"},
          {"INC_MAC", "02:00:00:00:00:02"},
          {"INC_IP", "10.0.0.2"},
          {"INC_QPN", "18"}};
}

TEST(CommConfig, ACompleteSoftRank) {
  const ConfigResult r = config_from_pairs(soft_rank());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.rank, 1);
  EXPECT_EQ(r.config.ranks, 4);
  EXPECT_EQ(r.config.transport.kind, "soft");
  EXPECT_EQ(r.config.transport.switch_ip, 0x0A0000FEu);
  EXPECT_EQ(r.config.transport.switch_qpn, 0x1001u);
  EXPECT_EQ(r.config.transport.initial_psn, 256u);
  EXPECT_EQ(r.config.transport.qpn, 18u);
  EXPECT_EQ(r.config.transport.pmtu, 1024);                     // defaults
  EXPECT_EQ(r.config.transport.window, vocab::kDefaultWindow);  // 16, as incd and inc-manager
  EXPECT_EQ(r.config.timeout.count(), 30000);
}

TEST(CommConfig, EachBadValueIsNamedWithItsKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"INC_RANK", "x"},           {"INC_RANKS", "0"},         {"INC_TRANSPORT", "tcp"},
      {"INC_SWITCH_IP", "10.0.0"}, {"INC_SWITCH_QPN", "0"},    {"INC_SWITCH_QPN", "0x1000000"},
      {"INC_PSN", "16777216"},     {"INC_PMTU", "1500"},       {"INC_WINDOW", "0"},
      {"INC_MAC", "02:00"},        {"INC_GID_INDEX", "-2"},    {"INC_TIMEOUT_MS", "0"},
      {"INC_RETRY_COUNT", "8"},    {"INC_TIMEOUT_CODE", "32"}, {"INC_MAX_COLLECTIVE_BYTES", "10"},
      {"INC_PKEY", "0"},           {"INC_PKEY", "0x8000"},     {"INC_PKEY", "0x10000"},
      {"INC_TRAFFIC_CLASS", "256"}};
  for (const auto& [key, value] : cases) {
    auto pairs = soft_rank();
    pairs[key] = value;
    const ConfigResult r = config_from_pairs(pairs);
    EXPECT_FALSE(r.ok()) << key << "=" << value;
    EXPECT_EQ(r.error.rfind(std::string(key) + "=" + value + ": ", 0), 0u) << r.error;
  }
}

TEST(CommConfig, TheTrafficClassGoesToTheTransport) {
  ConfigResult r = config_from_pairs(soft_rank());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.transport.traffic_class, 0) << "not ECN-capable unless asked";
  auto pairs = soft_rank();
  pairs["INC_TRAFFIC_CLASS"] = "0x62";  // DSCP 24, ECT(0)
  r = config_from_pairs(pairs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.transport.traffic_class, 0x62);
}

TEST(CommConfig, APartitionKeyIsSentByTheQpAndAskedOfTheManager) {
  ConfigResult r = config_from_pairs(soft_rank());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.transport.pkey, 0xFFFF) << "the default partition";
  EXPECT_FALSE(r.config.manager.pkey);
  auto pairs = soft_rank();
  pairs["INC_PKEY"] = "0x8012";
  r = config_from_pairs(pairs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.transport.pkey, 0x8012);
  EXPECT_EQ(r.config.manager.pkey, 0x8012);
}

TEST(CommConfig, TheGroupsArithmeticIsReadAndAskedOfTheManager) {
  ConfigResult r = config_from_pairs(soft_rank());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.arith, vocab::GroupArith{});
  auto pairs = soft_rank();
  pairs["INC_ACCUMULATOR"] = "kulisch_fixed";
  pairs["INC_DTYPE"] = "fp8_e5m2";
  r = config_from_pairs(pairs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.arith.profile, vocab::AccumProfile::kKulischFixed);
  EXPECT_EQ(r.config.arith.dtype, vocab::DType::kFp8E5M2);
  EXPECT_EQ(r.config.manager.arith, r.config.arith);
  for (const auto& [key, value, why] :
       {std::tuple{"INC_ACCUMULATOR", "exact", "expected fp32_arrival or kulisch_fixed"},
        std::tuple{"INC_DTYPE", "float32", "expected int32, fp32, fp16, bf16, int8, fp8_e4m3"}}) {
    auto bad = soft_rank();
    bad[key] = value;
    const ConfigResult e = config_from_pairs(bad);
    EXPECT_FALSE(e.ok());
    EXPECT_NE(e.error.find(why), std::string::npos) << e.error;
  }
  auto nodtype = soft_rank();
  nodtype["INC_ACCUMULATOR"] = "kulisch_fixed";
  const ConfigResult e = config_from_pairs(nodtype);
  EXPECT_FALSE(e.ok());
  EXPECT_NE(e.error.find("INC_ACCUMULATOR=kulisch_fixed needs INC_DTYPE"), std::string::npos)
      << e.error;
}

TEST(CommConfig, TheLargestCollectiveIsTheProtocolsCap) {
  auto pairs = soft_rank();
  pairs["INC_MAX_COLLECTIVE_BYTES"] = "536870912";  // 2^29 = 2^21 packets of 256 bytes
  const ConfigResult r = config_from_pairs(pairs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.max_collective_bytes, size_t{1} << 29);
  pairs["INC_MAX_COLLECTIVE_BYTES"] = "536870913";
  const ConfigResult too = config_from_pairs(pairs);
  EXPECT_EQ(
      too.error.rfind("INC_MAX_COLLECTIVE_BYTES=536870913: expected bytes in 4096..536870912", 0),
      0u)
      << too.error;
}

TEST(CommConfig, MissingAndInconsistentKeys) {
  auto p = soft_rank();
  p.erase("INC_RANK");
  EXPECT_NE(config_from_pairs(p).error.find("missing INC_RANK"), std::string::npos);
  p = soft_rank();
  p["INC_RANK"] = "4";
  EXPECT_NE(config_from_pairs(p).error.find("INC_RANK=4 is not below INC_RANKS=4"),
            std::string::npos);
  p = soft_rank();
  p.erase("INC_SWITCH_QPN");
  EXPECT_NE(config_from_pairs(p).error.find("missing INC_SWITCH_QPN"), std::string::npos);
  p = soft_rank();
  p.erase("INC_IFACE");
  EXPECT_NE(config_from_pairs(p).error.find("needs an interface"), std::string::npos);
  // verbs needs no interface, MAC or QPN: the device assigns the QPN
  p = soft_rank();
  p["INC_TRANSPORT"] = "verbs";
  p.erase("INC_IFACE");
  p.erase("INC_MAC");
  p.erase("INC_QPN");
  EXPECT_TRUE(config_from_pairs(p).ok()) << config_from_pairs(p).error;
}

TEST(CommConfig, UnknownKeysAreRefusedWithTheKnownOnes) {
  auto p = soft_rank();
  p["INC_SWTICH_IP"] = "10.0.0.1";
  const std::string e = config_from_pairs(p).error;
  EXPECT_EQ(e.rfind("unknown key INC_SWTICH_IP (known: INC_RANK, INC_RANKS", 0), 0u) << e;
}

TEST(CommConfig, FileWithCommentsExportAndLineErrors) {
  const std::string path = ::testing::TempDir() + "/inc_comm_config_test.env";
  {
    std::ofstream f(path);
    f << "# a rank\n\nexport INC_RANK=1\nINC_RANKS = 4  # four\n";
    for (const auto& [k, v] : soft_rank()) {
      if (k != "INC_RANK" && k != "INC_RANKS") f << k << "=" << v << "\n";
    }
  }
  ConfigResult r = config_from_file(path, false);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.rank, 1);
  EXPECT_EQ(r.config.ranks, 4);
  {
    std::ofstream f(path, std::ios::app);
    f << "INC_PMTU\n";
  }
  r = config_from_file(path, false);
  EXPECT_NE(r.error.find(":13: expected KEY=VALUE, got 'INC_PMTU'"), std::string::npos) << r.error;
  r = config_from_file(path + ".absent", false);
  EXPECT_NE(r.error.find("cannot read"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Communicator, CreateFailsClearlyWithoutTheInterface) {
  auto p = soft_rank();
  p["INC_IFACE"] = "epic-nonexistent0";
  const ConfigResult r = config_from_pairs(p);
  ASSERT_TRUE(r.ok());
  const auto c = Communicator::create(r.config);
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.error.find("soft transport on epic-nonexistent0"), std::string::npos) << c.error;
}

TEST(CApi, NullsAndBadConfigurationAreErrorsWithMessages) {
  EXPECT_EQ(inc_allreduce(nullptr, nullptr, nullptr, 1, INC_INT32, INC_SUM), INC_ERR_INVALID);
  EXPECT_STREQ(inc_last_error(), "communicator is NULL");
  inc_comm_t* c = reinterpret_cast<inc_comm_t*>(0x1);
  EXPECT_EQ(inc_comm_create_from_file("/nonexistent/inc.env", &c), INC_ERR_INVALID);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(inc_last_error()).find("cannot read /nonexistent/inc.env"),
            std::string::npos);
  EXPECT_EQ(inc_comm_create_from_file(nullptr, &c), INC_ERR_INVALID);
  EXPECT_EQ(inc_comm_rank(nullptr), -1);
  EXPECT_EQ(inc_comm_accumulator(nullptr), -1);
  EXPECT_EQ(inc_comm_group_dtype(nullptr), -1);
  inc_comm_destroy(nullptr);  // ignored
}

}  // namespace
}  // namespace epic::inc
