// The operator's topology / tenants file: both link forms, ranks, tenants, link speeds; unknown
// keys and bad values are refused with the file and the path of the bad entry.
#include "manager/service/topology_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "proto/context/context_validate.h"
#include "proto/vocab/memory.h"

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
    max_bytes_per_switch: 1589248
    max_groups: 8
    reserved_bytes: {leaf0: 397312}
)",
                              "fabric.yaml");
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  ASSERT_EQ(d.value().links.size(), 2u);
  EXPECT_EQ(to_string(d.value().links[0]), "leaf0:up0 - spine0:d0");  // stored with a < b
  ASSERT_EQ(d.value().ranks.size(), 1u);
  EXPECT_EQ(d.value().ranks[0].at.port, "r0");
  ASSERT_EQ(d.value().tenants.size(), 1u);
  EXPECT_EQ(d.value().tenants[0].quota.max_bytes_per_switch, 1589248u);
  EXPECT_EQ(d.value().tenants[0].quota.max_groups, 8u);
  EXPECT_FALSE(d.value().tenants[0].quota.max_bytes_total.has_value());
  EXPECT_EQ(d.value().tenants[0].reserved.at("leaf0"), 397312u);
  // No speeds declared: every link has the defaults.
  EXPECT_TRUE(d.value().speeds.links.empty());
  EXPECT_TRUE(d.value().speeds.ranks.empty());
}

TEST(TopologyFileTest, LinksAndRanksMayDeclareTheirSpeed) {
  auto d = parse_declarations(R"(
links:
  - {a: spine0:d0, b: leaf0:up0, bandwidth_gbps: 400, rtt_us: 2.5}
  - {a: spine0:d1, b: leaf1:up0, rtt_us: 20}
  - [leaf2:up0, spine0:d2]
ranks:
  - {ipv4: 10.77.0.1, mac: "02:00:00:00:00:01", at: leaf0:r0, bandwidth_gbps: 25}
  - {ipv4: 10.77.0.2, mac: "02:00:00:00:00:02", at: leaf0:r1}
)",
                              "fabric.yaml");
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  const LinkSpeeds& s = d.value().speeds;
  ASSERT_EQ(s.links.size(), 2u);
  const Link l0{{"leaf0", "up0"}, {"spine0", "d0"}};
  const Link l1{{"leaf1", "up0"}, {"spine0", "d1"}};
  const Link l2{{"leaf2", "up0"}, {"spine0", "d2"}};
  EXPECT_EQ(s.of(l0), (LinkSpeed{.bandwidth_gbps = 400, .rtt_us = 2.5}));
  EXPECT_EQ(s.of(l1), (LinkSpeed{.bandwidth_gbps = 100, .rtt_us = 20}));  // default bandwidth
  EXPECT_EQ(s.of(l2), kDefaultLinkSpeed);
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.of_rank(d.value().ranks[0].ipv4), (LinkSpeed{.bandwidth_gbps = 25, .rtt_us = 10}));
  EXPECT_EQ(s.of_rank(d.value().ranks[1].ipv4), kDefaultLinkSpeed);
}

// Each file text of `cases` is refused with exactly its message.
template <size_t N>
void expect_refused(const std::pair<const char*, const char*> (&cases)[N]) {
  for (const auto& [text, message] : cases) {
    auto d = parse_declarations(text, "f.yaml");
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(d.error().message, message) << text;
  }
}

TEST(TopologyFileTest, BadLinkSpeedsAreRefusedNamingTheFieldAndTheLimit) {
  const std::pair<const char*, const char*> cases[] = {
      {"links: [{a: l:p, b: s:q, bandwidth_gbps: 0}]",
       "f.yaml: links[0].bandwidth_gbps: must be > 0 (Gb/s), not 0"},
      {"links: [{a: l:p, b: s:q, bandwidth_gbps: -100}]",
       "f.yaml: links[0].bandwidth_gbps: must be > 0 (Gb/s), not -100"},
      {"links: [{a: l:p, b: s:q, bandwidth_gbps: fast}]",
       "f.yaml: links[0].bandwidth_gbps: expected a number of Gb/s > 0"},
      {"links: [{a: l:p, b: s:q, bandwidth_gbps: [1]}]",
       "f.yaml: links[0].bandwidth_gbps: expected a number of Gb/s > 0"},
      {"links: [{a: l:p, b: s:q, bandwidth_gbps: .nan}]",
       "f.yaml: links[0].bandwidth_gbps: must be > 0 (Gb/s), not .nan"},
      {"links: [{a: l:p, b: s:q, bandwidth_gbps: 20000}]",
       "f.yaml: links[0].bandwidth_gbps: 20000 Gb/s is out of range (at most 10000)"},
      {"links: [{a: l:p, b: s:q, rtt_us: 0}]", "f.yaml: links[0].rtt_us: must be > 0 (µs), not 0"},
      {"links: [{a: l:p, b: s:q, rtt_us: -1.5}]",
       "f.yaml: links[0].rtt_us: must be > 0 (µs), not -1.5"},
      {"links: [{a: l:p, b: s:q, rtt_us: 10us}]",
       "f.yaml: links[0].rtt_us: expected a number of µs > 0"},
      {"links: [{a: l:p, b: s:q, rtt_us: 2000000}]",
       "f.yaml: links[0].rtt_us: 2000000 µs is out of range (at most 1000000)"},
      {"ranks: [{ipv4: 10.0.0.1, mac: '02:00:00:00:00:01', at: l:p, rtt_us: 0}]",
       "f.yaml: ranks[0].rtt_us: must be > 0 (µs), not 0"},
      {"ranks: [{ipv4: 10.0.0.1, mac: '02:00:00:00:00:01', at: l:p, bandwidth_gbps: x}]",
       "f.yaml: ranks[0].bandwidth_gbps: expected a number of Gb/s > 0"},
  };
  expect_refused(cases);
}

TEST(TopologyFileTest, SlotQuotasOfEarlierVersionsAreRefusedNamingTheByteField) {
  const std::pair<const char*, const char*> cases[] = {
      {"tenants: [{name: t, max_slots_per_switch: 512}]",
       "f.yaml: tenants[0].max_slots_per_switch: slots are no longer counted: use "
       "max_bytes_per_switch (bytes of switch memory)"},
      {"tenants: [{name: t, max_slots_total: 512}]",
       "f.yaml: tenants[0].max_slots_total: slots are no longer counted: use max_bytes_total "
       "(bytes of switch memory)"},
      {"tenants: [{name: t, reserved: {leaf0: 64}, reserved_bytes: {leaf0: 1}}]",
       "f.yaml: tenants[0].reserved: slots are no longer counted: use reserved_bytes (bytes of "
       "switch memory)"},
      {"tenants: [{name: t, max_bytes_total: -5}]",
       "f.yaml: tenants[0].max_bytes_total: out of range"},
  };
  expect_refused(cases);
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
      {"tenants: [{name: t, max_groups: 0}]",
       "tenants[0]: quota.max_groups: must be >= 1 when set (leave it out for no limit)"},
      {"tenants: [{name: t, max_ranks_per_group: 0}]", "quota.max_ranks_per_group: must be >= 1"},
      {"tenants: [{name: a}, {name: t, max_groups: 2}, {name: t, max_groups: 9}]",
       "f.yaml: tenants[2].name: 't' is declared twice (also tenants[1])"},
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
  EXPECT_EQ(d.value().tenants[0].reserved.at("spine0"), 1024 * vocab::slot_bytes(1024));
  EXPECT_EQ(d.value().speeds.links.size(), 1u);
  EXPECT_EQ(d.value().speeds.ranks.size(), 1u);
  EXPECT_EQ(d.value().default_mode, vocab::GroupMode::kMode2);
}

TEST(TopologyFileTest, DefaultsModeIsTheModeOfGroupsThatAskForNone) {
  auto none = parse_declarations("links: []\n", "fabric.yaml");
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  EXPECT_EQ(none.value().default_mode, std::nullopt);
  auto three = parse_declarations("defaults: {mode: 3}\n", "fabric.yaml");
  ASSERT_TRUE(three.ok()) << three.error().to_string();
  EXPECT_EQ(three.value().default_mode, vocab::GroupMode::kMode3);
  auto two = parse_declarations("defaults:\n  mode: 2\n", "fabric.yaml");
  ASSERT_TRUE(two.ok()) << two.error().to_string();
  EXPECT_EQ(two.value().default_mode, vocab::GroupMode::kMode2);
  const std::pair<const char*, const char*> bad[] = {
      {"defaults: {mode: 4}",
       "fabric.yaml: defaults.mode: expected 2 (Mode-II) or 3 (Mode-III), not '4'"},
      {"defaults: {mode: III}",
       "fabric.yaml: defaults.mode: expected 2 (Mode-II) or 3 (Mode-III), not 'III'"},
      {"defaults: {mode: [3]}",
       "fabric.yaml: defaults.mode: expected 2 (Mode-II) or 3 (Mode-III), not '(not a number)'"},
      {"defaults: {window: 16}", "fabric.yaml: defaults: unknown key 'window'"},
      {"defaults: 3", "fabric.yaml: defaults: expected a mapping"},
  };
  for (const auto& [text, message] : bad) {
    auto d = parse_declarations(text, "fabric.yaml");
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.error().message, message) << text;
  }
}

// docs/manager.md "Mode-III: one hop's BDP": the Mode-II vs Mode-III table for the example
// fabric, computed by the manager's sizing from the checked-in file and checked against the page.
TEST(ModeCostTest, TheExampleFabricsModeIIAndModeIIIBytes) {
  auto d = load_declarations(std::string(EPIC_SOURCE_DIR) + "/deploy/examples/fabric.yaml");
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  IncManager m(Policy{.link_speeds = d.value().speeds});
  const auto mac = [](uint8_t a, uint8_t b) { return vocab::MacAddr{0x02, 0xec, 0, a, b, 0xfe}; };
  const uint64_t plenty = uint64_t{64} << 20;
  ASSERT_TRUE(
      m.add_switch(
           {"leaf0", 0x0A4D00FE, mac(0, 0), {{"r0", 9000}, {"r1", 9000}, {"up", 9000}}, plenty})
          .ok());
  ASSERT_TRUE(
      m.add_switch(
           {"leaf1", 0x0A4D01FE, mac(0, 1), {{"r0", 9000}, {"r1", 9000}, {"up", 9000}}, plenty})
          .ok());
  ASSERT_TRUE(
      m.add_switch({"spine0", 0x0A4E00FE, mac(1, 0), {{"leaf0", 9000}, {"leaf1", 9000}}, plenty})
          .ok());
  ASSERT_TRUE(m.set_tenant({.name = "default"}).ok());
  for (const Link& l : d.value().links) ASSERT_TRUE(m.add_link(l).ok());
  for (const RankAttachment& r : d.value().ranks) ASSERT_TRUE(m.attach_rank(r).ok());
  GroupRequest r{.tenant = "default", .name = "both-leaves", .window = 0, .pmtu = 1024};
  for (uint32_t i = 0; i < d.value().ranks.size(); ++i) {
    r.ranks.push_back({i, d.value().ranks[i].ipv4, 0x11 + i, std::nullopt});
  }
  auto j = m.join(r, Millis{1});
  ASSERT_TRUE(j.ok()) << j.error().to_string();
  const Group& g = *m.find_group(j.value().group_id);
  ASSERT_EQ(g.tree.nodes.size(), 3u);
  const std::vector<ModeCost> costs = m.mode_costs(g);
  ASSERT_EQ(costs.size(), 2u);
  EXPECT_EQ(costs[0].window, 256u);  // 100 Gb/s x (10 + 10) us
  EXPECT_EQ(costs[1].window, 128u);  // 100 Gb/s x 10 us
  std::ifstream page(std::string(EPIC_SOURCE_DIR) + "/docs/manager.md");
  std::stringstream doc;
  doc << page.rdbuf();
  for (const ModeCost& c : costs) {
    const std::string row = std::string("| ") + std::string(vocab::mode_name(c.mode)) + " |";
    const size_t at = doc.str().find(row);
    ASSERT_NE(at, std::string::npos) << row;
    const std::string line = doc.str().substr(at, doc.str().find('\n', at) - at);
    EXPECT_NE(line.find("| " + std::to_string(c.window) + " |"), std::string::npos) << line;
    EXPECT_NE(line.find("| " + std::to_string(c.bytes_per_switch) + " |"), std::string::npos)
        << line;
    EXPECT_NE(line.find("| " + std::to_string(3 * c.bytes_per_switch) + " |"), std::string::npos)
        << line;
  }
}

}  // namespace
}  // namespace epic::manager::service
