// The path MTU a group left to the manager (GroupRequest::pmtu 0): the largest that every
// switch of its IncTree (max_pmtu) and every port the tree uses (IP MTU >= pmtu + 90) carry,
// chosen at admission, stored in the group and sent to the switches and the ranks; a pmtu the
// ranks asked for is kept as it is (and refused where it does not fit).
#include <gtest/gtest.h>

#include "manager/core/inc_manager.h"
#include "proto/vocab/memory.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::hosts_on;
using testing::make_request;

struct PmtuCase {
  uint16_t port_mtu;
  uint16_t max_pmtu;
  uint32_t expected;
};

class PmtuChoiceTest : public ::testing::TestWithParam<PmtuCase> {};

TEST_P(PmtuChoiceTest, TheLargestTheTreeCarries) {
  const PmtuCase c = GetParam();
  IncManager m;
  testing::build_fabric(m, {.leaves = 2,
                            .spines = 1,
                            .ranks_per_leaf = 2,
                            .leaf_slots = 8192,
                            .spine_slots = 8192,
                            .port_mtu = c.port_mtu,
                            .max_pmtu = c.max_pmtu});
  GroupRequest r = make_request("g", hosts_on(2, 2), 16, 0x100);
  r.pmtu = 0;
  const uint32_t id = testing::install(m, r, Millis{1000});
  ASSERT_NE(id, 0u);
  const Group& g = *m.find_group(id);
  EXPECT_EQ(g.request.pmtu, c.expected);
  // The grant is sized for it, every switch context and every rank's answer carry it.
  ASSERT_FALSE(g.grants.empty());
  EXPECT_EQ(g.grants[0].bytes, vocab::group_memory_bytes(16, c.expected));
  const auto answers = m.answers(id);
  ASSERT_TRUE(answers.ok());
  ASSERT_EQ(answers.value().size(), 4u);
  for (const RankAnswer& a : answers.value()) EXPECT_EQ(a.pmtu, c.expected);
}

INSTANTIATE_TEST_SUITE_P(PortsAndSwitches, PmtuChoiceTest,
                         ::testing::Values(PmtuCase{9000, 4096, 4096},  // jumbo frames
                                           PmtuCase{4186, 4096, 4096},  // exactly 4096 + 90
                                           PmtuCase{4185, 4096, 2048},  // one byte short
                                           PmtuCase{1500, 4096, 1024},  // Ethernet's default
                                           PmtuCase{9000, 2048, 2048},  // the switches' limit
                                           PmtuCase{602, 4096, 512}));  // 512 + 90

TEST(PmtuChoice, AnAskedPmtuIsKeptOrRefused) {
  IncManager m;
  testing::build_fabric(m, {.leaves = 1, .ranks_per_leaf = 2, .port_mtu = 1500});
  GroupRequest r = make_request("small", hosts_on(1, 2), 16, 0x100);
  r.pmtu = 512;
  const uint32_t id = testing::install(m, r, Millis{1000});
  ASSERT_NE(id, 0u);
  EXPECT_EQ(m.find_group(id)->request.pmtu, 512u);
  GroupRequest big = make_request("big", hosts_on(1, 2), 16, 0x200);
  big.pmtu = 4096;
  auto j = m.join(big, Millis{1000});
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message.find("pmtu 4096 needs an IP MTU of 4186"), std::string::npos)
      << j.error().message;
}

TEST(PmtuChoice, NothingFitsTheRefusalNamesTheSmallest) {
  IncManager m;
  testing::build_fabric(m, {.leaves = 1, .ranks_per_leaf = 2, .port_mtu = 300});
  GroupRequest r = make_request("g", hosts_on(1, 2), 16, 0x100);
  r.pmtu = 0;
  auto j = m.join(r, Millis{1000});
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message.find("pmtu 256 needs an IP MTU of 346"), std::string::npos)
      << j.error().message;
}

}  // namespace
}  // namespace epic::manager
