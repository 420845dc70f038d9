// Window sizing from the path bandwidth-delay product (manager/core/window_sizing.h): the
// arithmetic, the tree's slowest link and longest rank-to-root RTT, clamping, a requested window
// winning, and the window reaching the contexts, the grants and the ranks' answers.
#include "manager/core/window_sizing.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::hosts_on;
using testing::make_request;

TEST(WindowSizing, BdpIsBandwidthTimesRttInBytes) {
  EXPECT_EQ(bdp_bytes(100, 10), 125'000u);  // 100 Gb/s x 10 us = 10^6 bit
  EXPECT_EQ(bdp_bytes(400, 4), 200'000u);
  EXPECT_EQ(bdp_bytes(25, 10), 31'250u);
  EXPECT_EQ(bdp_bytes(10, 0.5), 625u);
  EXPECT_EQ(bdp_bytes(1, 0.001), 1u);  // 0.125 bytes, rounded up
}

TEST(WindowSizing, SmallestPowerOfTwoCoveringTheBdp) {
  EXPECT_EQ(window_for_bdp(125'000, 1024, kMaxWindow), 128u);  // 122.07 packets
  EXPECT_EQ(window_for_bdp(125'000, 4096, kMaxWindow), 32u);   // 30.5
  EXPECT_EQ(window_for_bdp(131'072, 1024, kMaxWindow), 128u);  // exactly 128 packets
  EXPECT_EQ(window_for_bdp(131'073, 1024, kMaxWindow), 256u);
  EXPECT_EQ(window_for_bdp(0, 1024, kMaxWindow), 1u);
  EXPECT_EQ(window_for_bdp(1, 256, kMaxWindow), 1u);
  // Clamped to the largest window allowed.
  EXPECT_EQ(window_for_bdp(125'000, 1024, 64), 64u);
  EXPECT_EQ(window_for_bdp(uint64_t{1} << 40, 256, kMaxWindow), kMaxWindow);
}

class BdpWindowTest : public ::testing::Test {
 protected:
  // Two leaves under one spine, 4 ranks per leaf; plenty of memory.
  void build(Policy p, uint32_t max_window = 1024) {
    m = IncManager(p);
    testing::build_fabric(m, {.leaves = 2,
                              .spines = 1,
                              .ranks_per_leaf = 4,
                              .leaf_slots = 8192,
                              .spine_slots = 8192,
                              .max_window = max_window});
  }
  // Installs a group (window 0: sized by the manager) and returns it.
  const Group& install(const std::string& name, int leaves, uint32_t window, uint32_t pmtu,
                       uint32_t qpn_base) {
    GroupRequest r = make_request(name, hosts_on(leaves, 2), window, qpn_base);
    r.pmtu = pmtu;
    const uint32_t id = testing::install(m, r, Millis{1000});
    return *m.find_group(id);
  }
  IncManager m;
};

TEST_F(BdpWindowTest, OneSwitchAtTheDefaultSpeedsGetsTheEpicWindow) {
  build({});
  const Group& g = install("g", 1, 0, 1024, 0x100);
  EXPECT_EQ(g.request.window, 128u);  // 125000 bytes / 1024 per packet -> 128
  ASSERT_EQ(g.grants.size(), 1u);
  EXPECT_EQ(g.grants[0].bytes, vocab::group_memory_bytes(128, 1024));
  const Group& big = install("big", 1, 0, 4096, 0x200);  // other ranks of leaf0? same ports
  EXPECT_EQ(big.request.window, 32u);
}

TEST_F(BdpWindowTest, TwoLevelsDoubleTheRoundTrip) {
  build({});
  const Group& g = install("g", 2, 0, 1024, 0x100);
  EXPECT_EQ(g.tree.nodes.size(), 3u);
  EXPECT_EQ(g.request.window, 256u);  // 100 Gb/s x (10 + 10) us = 250000 bytes
  for (const MemoryGrant& grant : g.grants) {
    EXPECT_EQ(grant.bytes, vocab::group_memory_bytes(256, 1024)) << grant.switch_id;
  }
}

TEST_F(BdpWindowTest, TheSlowestLinkAndTheLongestRankToRootPathSizeIt) {
  Policy p;
  // leaf0-spine0 is slow and far, leaf1-spine0 fast; rank 1 of leaf1 has a long cable.
  p.link_speeds.links[{{"leaf0", "up0"}, {"spine0", "d0"}}] = {.bandwidth_gbps = 10, .rtt_us = 50};
  p.link_speeds.links[{{"leaf1", "up0"}, {"spine0", "d1"}}] = {.bandwidth_gbps = 400, .rtt_us = 2};
  p.link_speeds.ranks[testing::rank_ip(1, 1)] = {.bandwidth_gbps = 200, .rtt_us = 100};
  build(p);
  const IncTree tree = [&] {
    const Group& g = install("g", 2, 16, 1024, 0x100);
    return g.tree;
  }();
  std::vector<uint32_t> ips;
  for (auto [l, r] : hosts_on(2, 2)) ips.push_back(testing::rank_ip(l, r));
  const PathBdp b = tree_bdp(tree, p.link_speeds, ips);
  EXPECT_EQ(b.bandwidth_gbps, 10);  // leaf0-spine0
  EXPECT_EQ(b.rtt_us, 102);         // rank 1 of leaf1: 100 + 2; leaf0's ranks: 10 + 50
  EXPECT_EQ(b.bytes, bdp_bytes(10, 102));
  EXPECT_EQ(bdp_window(tree, m.topology(), p.link_speeds, ips, 1024), 128u);  // 127500 bytes
  EXPECT_EQ(bdp_window(tree, m.topology(), p.link_speeds, ips, 256), 512u);
  // Mode-III: one hop, the largest link RTT (rank 1 of leaf1's cable), at the slowest speed.
  EXPECT_EQ(b.hop_rtt_us, 100);
  EXPECT_EQ(b.hop_bytes, bdp_bytes(10, 100));
  EXPECT_EQ(b.bytes_for(vocab::GroupMode::kMode3), b.hop_bytes);
  EXPECT_EQ(b.bytes_for(vocab::GroupMode::kMode2), b.bytes);
  EXPECT_EQ(bdp_window(tree, m.topology(), p.link_speeds, ips, 1024, vocab::GroupMode::kMode3),
            128u);  // 125000 bytes
  EXPECT_EQ(bdp_window(tree, m.topology(), p.link_speeds, ips, 4096, vocab::GroupMode::kMode3),
            32u);
  // Without declarations: 100 Gb/s, 20 us.
  const PathBdp d = tree_bdp(tree, LinkSpeeds{}, ips);
  EXPECT_EQ(d.bandwidth_gbps, 100);
  EXPECT_EQ(d.rtt_us, 20);
  EXPECT_EQ(d.hop_rtt_us, 10);
}

TEST(HopTimeout, AFewRoundTripsPlusTwoSendWindowsOfTheSlowestLinkClampedToTheLimits) {
  EXPECT_EQ(kHopTimeoutRtts, 4u);
  EXPECT_EQ(kHopTimeoutSendWindows, 2u);
  // 128 results of 1024 bytes at 100 Gb/s: 1048576 bits / 100000 bit/us = 10.48576 us.
  EXPECT_DOUBLE_EQ(send_window_us(100, 128, 1024), 10.48576);
  EXPECT_EQ(send_window_us(0, 128, 1024), 0);
  EXPECT_EQ(send_window_us(-1, 128, 1024), 0);
  EXPECT_EQ(hop_timeout_for(10, 100, 128, 1024), 61u);  // 40 + 20.97152, rounded up
  EXPECT_EQ(hop_timeout_for(3.1, 100, 1, 256), 13u);    // 12.4 + 0.04096
  // A slow link with a deep window: 64 results of 4096 bytes at 10 Gb/s take 209.7152 us, so a
  // timeout of a few round trips (8 us) would fire long before the last result's ACK is back.
  EXPECT_EQ(hop_timeout_for(2, 10, 64, 4096), 428u);                    // 8 + 419.4304
  EXPECT_EQ(hop_timeout_for(2, 100, 1, 256), vocab::kMinHopTimeoutUs);  // 8.04 us
  EXPECT_EQ(hop_timeout_for(0, 0, 1, 256), vocab::kMinHopTimeoutUs);
  EXPECT_EQ(hop_timeout_for(250'000, 100, 1, 256), vocab::kMaxHopTimeoutUs);
  EXPECT_EQ(hop_timeout_for(1'000'000, 100, 1, 256), vocab::kMaxHopTimeoutUs);
  EXPECT_EQ(hop_timeout_for(10, 0.001, 1u << 20, 4096), vocab::kMaxHopTimeoutUs);
}

TEST_F(BdpWindowTest, ModeIIICoversOneHopWhateverTheTreeDepth) {
  Policy p;
  p.link_speeds.links[{{"leaf0", "up0"}, {"spine0", "d0"}}] = {.bandwidth_gbps = 100, .rtt_us = 5};
  build(p);
  GroupRequest r = make_request("g", hosts_on(2, 2), 0, 0x100);
  r.mode = vocab::GroupMode::kMode3;
  auto j = m.join(r, Millis{1000});
  ASSERT_TRUE(j.ok()) << j.error().to_string();
  const Group& g = *m.find_group(j.value().group_id);
  EXPECT_EQ(g.tree.nodes.size(), 3u);
  // One hop of 10 us at 100 Gb/s: 125000 bytes, window 128 — Mode-II's path (20 us) needs 256.
  EXPECT_EQ(g.request.window, 128u);
  EXPECT_EQ(g.hop_timeout_us,
            61u);  // 4 x the largest link RTT (10 us) + 2 x 10.49 us (128 x 1 KiB)
  ASSERT_EQ(j.value().effects.actions.size(), 3u);
  for (const SwitchAction& a : j.value().effects.actions) {
    ASSERT_TRUE(a.context.has_value());
    EXPECT_EQ(a.context->mode, vocab::GroupMode::kMode3) << a.switch_id;
    EXPECT_EQ(a.context->hop_timeout_us, 61u) << a.switch_id;
    EXPECT_EQ(a.context->window, 128u) << a.switch_id;
    EXPECT_EQ(a.memory_bytes, vocab::group_memory_bytes(128, 1024)) << a.switch_id;
  }
  // Mode-II vs Mode-III for this tree, as incctl shows them.
  EXPECT_EQ(m.mode_costs(g),
            (std::vector<ModeCost>{
                {vocab::GroupMode::kMode2, 256, vocab::group_memory_bytes(256, 1024)},
                {vocab::GroupMode::kMode3, 128, vocab::group_memory_bytes(128, 1024)}}));
  testing::ack_all(m, g.id, Millis{1001});
  auto answers = m.answers(g.id);
  ASSERT_TRUE(answers.ok());
  for (const RankAnswer& a : answers.value()) EXPECT_EQ(a.mode, vocab::GroupMode::kMode3);
}

TEST_F(BdpWindowTest, AGroupWithoutAModeTakesTheFabricsDefault) {
  Policy p;
  p.default_mode = vocab::GroupMode::kMode3;
  build(p);
  const Group& dflt = install("dflt", 2, 0, 1024, 0x100);
  EXPECT_EQ(dflt.request.mode, vocab::GroupMode::kMode3);
  EXPECT_EQ(dflt.request.window, 128u);
  GroupRequest r = make_request("two", hosts_on(2, 2), 0, 0x200);
  r.mode = vocab::GroupMode::kMode2;  // asked for: wins over the default
  r.ranks[0].ipv4 = testing::rank_ip(0, 2);
  r.ranks[1].ipv4 = testing::rank_ip(0, 3);
  r.ranks[2].ipv4 = testing::rank_ip(1, 2);
  r.ranks[3].ipv4 = testing::rank_ip(1, 3);
  const uint32_t id = testing::install(m, r, Millis{1000});
  EXPECT_EQ(m.find_group(id)->request.mode, vocab::GroupMode::kMode2);
  EXPECT_EQ(m.find_group(id)->request.window, 256u);
  // Side by side on the same switches.
  EXPECT_EQ(m.find_group(id)->tree.nodes.size(), 3u);
}

TEST_F(BdpWindowTest, ARequestedWindowWins) {
  build({});
  const Group& g = install("g", 2, 16, 1024, 0x100);
  EXPECT_EQ(g.request.window, 16u);
  EXPECT_EQ(g.request.mode, vocab::GroupMode::kMode2);  // the default fabric's default
  EXPECT_EQ(g.grants[0].bytes, vocab::group_memory_bytes(16, 1024));
  // The comparison still shows what sizing would give each mode.
  const std::vector<ModeCost> costs = m.mode_costs(g);
  ASSERT_EQ(costs.size(), 2u);
  EXPECT_EQ(costs[0].window, 256u);
  EXPECT_EQ(costs[1].window, 128u);
}

TEST_F(BdpWindowTest, ClampedToTheSwitchesMaxWindow) {
  build({}, 64);
  const Group& g = install("g", 2, 0, 1024, 0x100);
  EXPECT_EQ(g.request.window, 64u);  // 256 wanted
  // A requested window above max_window is still refused, naming the limit.
  auto r = m.join(make_request("h", {{0, 2}, {0, 3}}, 128, 0x200), Millis{1000});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "window 128 exceeds the max_window 64 of switch 'leaf0'");
}

TEST_F(BdpWindowTest, ClampedToWhatTheSwitchesCouldEverHold) {
  m = IncManager(Policy{});
  // Leaves hold 100 slots of pmtu 1024: window 32 (64 slots) fits, the BDP's 128 never would.
  testing::build_fabric(m, {.leaves = 1, .spines = 1, .ranks_per_leaf = 4, .leaf_slots = 100});
  const Group& g = install("g", 1, 0, 1024, 0x100);
  EXPECT_EQ(g.request.window, 32u);
  EXPECT_EQ(g.grants[0].bytes, vocab::group_memory_bytes(32, 1024));
  // The next such group does not fit now (36 slots left): no INC memory, not "never fits".
  auto r = m.join(make_request("h", {{0, 2}, {0, 3}}, 0, 0x200), Millis{1000});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted) << r.error().message;
}

TEST_F(BdpWindowTest, TheChosenWindowReachesContextsAndRanks) {
  build({});
  GroupRequest r = make_request("g", hosts_on(2, 2), 0, 0x100);
  auto j = m.join(r, Millis{1000});
  ASSERT_TRUE(j.ok()) << j.error().to_string();
  for (const SwitchAction& a : j.value().effects.actions) {
    ASSERT_TRUE(a.context.has_value());
    EXPECT_EQ(a.context->window, 256u);
    EXPECT_EQ(a.memory_bytes, vocab::group_memory_bytes(256, 1024));
    EXPECT_EQ(a.context->memory_bytes, a.memory_bytes);
  }
  testing::ack_all(m, j.value().group_id, Millis{1001});
  auto answers = m.answers(j.value().group_id);
  ASSERT_TRUE(answers.ok());
  ASSERT_EQ(answers.value().size(), 4u);
  for (const RankAnswer& a : answers.value()) EXPECT_EQ(a.window, 256u);
}

// docs/architecture.md "Switch memory per job": the figure next to EPIC's 250 KB per job at
// 100 Gb/s and 10 us RTT (one switch, H = 2), computed here and checked against the page.
TEST(EpicFigure, MemoryPerJobAt100GbpsAnd10usRtt) {
  std::ifstream page(std::string(EPIC_SOURCE_DIR) + "/docs/architecture.md");
  std::stringstream doc;
  doc << page.rdbuf();
  const uint64_t bdp = bdp_bytes(100, 10);
  EXPECT_EQ(bdp, 125'000u);
  const double epic = 2.0 * static_cast<double>(bdp);  // 4(H-1)BL = 2 x B x RTT: 250 KB
  for (uint32_t pmtu : {1024u, 4096u}) {
    const uint32_t w = window_for_bdp(bdp, pmtu, kMaxWindow);
    const uint64_t payload = 2ull * w * pmtu;  // EPIC's count: 2 MW payload buffers
    const uint64_t bytes = vocab::group_memory_bytes(w, pmtu);
    std::printf(
        "pmtu %u: window %u, payload 2*W*pmtu = %llu bytes, switch memory %llu bytes "
        "(%.2f x EPIC's 250 KB)\n",
        pmtu, w, static_cast<unsigned long long>(payload), static_cast<unsigned long long>(bytes),
        static_cast<double>(bytes) / epic);
    // Rounding the window up to a power of two adds at most 2x, here 4.9%.
    EXPECT_GE(static_cast<double>(payload), epic);
    EXPECT_LT(static_cast<double>(payload), 2 * epic);
    // The slot holds 3 payloads (a 2x-wide accumulator and the result copy) and 32 bytes of
    // bookkeeping.
    EXPECT_EQ(bytes, 3 * payload + 2ull * w * vocab::kSlotMetaBytes);
    EXPECT_NE(doc.str().find(std::to_string(bytes)), std::string::npos)
        << "docs/architecture.md does not quote " << bytes << " bytes for pmtu " << pmtu;
  }
  // Two levels (H = 3): the path RTT doubles, and so does the window.
  const uint32_t w2 = window_for_bdp(bdp_bytes(100, 2 * 10), 1024, kMaxWindow);
  EXPECT_EQ(w2, 2 * window_for_bdp(bdp, 1024, kMaxWindow));
  const uint64_t two_levels = vocab::group_memory_bytes(w2, 1024);
  std::printf("two levels, pmtu 1024: window %u, switch memory %llu bytes per switch\n", w2,
              static_cast<unsigned long long>(two_levels));
  EXPECT_NE(doc.str().find(std::to_string(two_levels)), std::string::npos)
      << "docs/architecture.md does not quote " << two_levels << " bytes for two levels";
}

}  // namespace
}  // namespace epic::manager
