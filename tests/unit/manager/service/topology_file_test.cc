// The operator's topology / tenants file: both link forms, ranks, tenants; unknown keys and
// bad values are refused with the file and the path of the bad entry.
#include "manager/service/topology_file.h"

#include <gtest/gtest.h>

namespace epic::manager::service {
namespace {

TEST(TopologyFileTest, ParsesLinksRanksAndTenants) {
  auto d = parse_declarations(R"(
links:
  - {a: spine0:d0, b: leaf0:up0}
  - [leaf1:up0, spine0:d1]
ranks:
  - {ipv4: 10.77.0.1, mac: "02:00:00:00:00:01", at: leaf0:r0}
tenants:
  - name: team-a
    max_slots_per_switch: 512
    max_groups: 8
    reserved: {leaf0: 128}
)",
                              "fabric.yaml");
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  ASSERT_EQ(d.value().links.size(), 2u);
  EXPECT_EQ(to_string(d.value().links[0]), "leaf0:up0 - spine0:d0");  // stored with a < b
  ASSERT_EQ(d.value().ranks.size(), 1u);
  EXPECT_EQ(d.value().ranks[0].at.port, "r0");
  ASSERT_EQ(d.value().tenants.size(), 1u);
  EXPECT_EQ(d.value().tenants[0].quota.max_slots_per_switch, 512u);
  EXPECT_EQ(d.value().tenants[0].quota.max_groups, 8u);
  EXPECT_FALSE(d.value().tenants[0].quota.max_slots_total.has_value());
  EXPECT_EQ(d.value().tenants[0].reserved.at("leaf0"), 128u);
}

TEST(TopologyFileTest, JsonIsAcceptedToo) {
  auto d = parse_declarations(R"({"links": [{"a": "l:p", "b": "s:q"}]})", "f.json");
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d.value().links.size(), 1u);
}

TEST(TopologyFileTest, ErrorsNameTheFileAndTheEntry) {
  const std::pair<const char*, const char*> cases[] = {
      {"links: [{a: leaf0, b: spine0:d0}]", "f.yaml: links[0]: a: 'leaf0' is not SWITCH:PORT"},
      {"ranks: [{ipv4: 10.0.0, mac: '02:00:00:00:00:01', at: l:p}]", "ranks[0]: ipv4:"},
      {"tenants: [{name: t, max_groups: -1}]", "tenants[0].max_groups: out of range"},
      {"switches: []", "(top): unknown key 'switches'"},
      {"links: [{a: l:p, b: s:q, c: x}]", "links[0]: unknown key 'c'"},
  };
  for (const auto& [text, message] : cases) {
    auto d = parse_declarations(text, "f.yaml");
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(d.error().message.find(message), std::string::npos) << d.error().message;
  }
}

TEST(TopologyFileTest, TheCheckedInExampleLoads) {
  auto d = load_declarations(std::string(EPIC_SOURCE_DIR) + "/deploy/examples/fabric.yaml");
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d.value().links.size(), 2u);
  EXPECT_EQ(d.value().ranks.size(), 4u);
  ASSERT_EQ(d.value().tenants.size(), 2u);
  EXPECT_EQ(d.value().tenants[0].reserved.at("spine0"), 1024u);
}

}  // namespace
}  // namespace epic::manager::service
