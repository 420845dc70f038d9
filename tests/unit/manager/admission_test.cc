// Admission: every malformed or inconsistent join is refused with its own message and code, and
// a refused join leaves nothing behind (no group, grant or QPN).
#include <gtest/gtest.h>

#include <functional>

#include "manager/core/inc_manager.h"
#include "proto/vocab/memory.h"
#include "proto/vocab/partial.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::hosts_on;
using testing::ip;
using testing::make_request;
using testing::slots;

const Millis t0{1000};

struct BadJoin {
  const char* what;
  std::function<void(GroupRequest&)> change;
  ErrorCode code;
  const char* message;
};

class AdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::build_fabric(m, {.leaves = 2,
                              .spines = 1,
                              .ranks_per_leaf = 4,
                              .leaf_slots = 256,
                              .spine_slots = 64,
                              .port_mtu = 1500,
                              .max_window = 256,
                              .max_pmtu = 4096});
  }
  void expect_nothing_held() {
    EXPECT_TRUE(m.groups().empty());
    EXPECT_TRUE(m.qpns().used().empty());
    for (const auto& [id, b] : m.ledger().books()) EXPECT_TRUE(b.held.empty()) << id;
  }
  IncManager m;
};

TEST_F(AdmissionTest, MalformedAndInconsistentJoinsAreRefusedPrecisely) {
  const BadJoin cases[] = {
      {"unknown tenant", [](GroupRequest& r) { r.tenant = "nobody"; }, ErrorCode::kNotFound,
       "unknown tenant 'nobody'"},
      {"empty name", [](GroupRequest& r) { r.name = ""; }, ErrorCode::kInvalidArgument,
       "group name '' must be 1-128 printable characters without spaces"},
      {"window", [](GroupRequest& r) { r.window = 12; }, ErrorCode::kInvalidArgument,
       "window 12 is not a power of two in 1..1048576 (or unset: sized by the manager)"},
      {"pmtu", [](GroupRequest& r) { r.pmtu = 1500; }, ErrorCode::kInvalidArgument,
       "pmtu 1500 is not one of 256, 512, 1024, 2048, 4096 (or unset: chosen by the manager)"},
      {"no ranks", [](GroupRequest& r) { r.ranks.clear(); }, ErrorCode::kInvalidArgument,
       "a group has 1..65535 ranks; this one has 0"},
      {"rank out of range", [](GroupRequest& r) { r.ranks[3].rank = 4; },
       ErrorCode::kInvalidArgument, "rank 4 is out of range: the group has 4 ranks (0..3)"},
      {"duplicate rank", [](GroupRequest& r) { r.ranks[3].rank = 1; }, ErrorCode::kInvalidArgument,
       "rank 1 is listed twice"},
      {"duplicate endpoint",
       [](GroupRequest& r) {
         r.ranks[3].ipv4 = r.ranks[1].ipv4;
         r.ranks[3].qpn = r.ranks[1].qpn;
       },
       ErrorCode::kInvalidArgument, "ranks 1 and 3 both use endpoint 10.77.0.2 qpn 0x000012"},
      {"QPN too large", [](GroupRequest& r) { r.ranks[2].qpn = 1u << 24; },
       ErrorCode::kInvalidArgument, "rank 2: QPN 0x1000000 is not 24-bit"},
      {"QP1", [](GroupRequest& r) { r.ranks[2].qpn = 1; }, ErrorCode::kInvalidArgument,
       "rank 2: QPN 1 is reserved (QP0 and QP1 are the management QPs)"},
      {"broadcast address", [](GroupRequest& r) { r.ranks[0].ipv4 = 0xFFFFFFFFu; },
       ErrorCode::kInvalidArgument, "rank 0: 255.255.255.255 is not a unicast host address"},
      {"rank behind no known switch", [](GroupRequest& r) { r.ranks[2].ipv4 = ip("10.99.0.9"); },
       ErrorCode::kNotFound, "rank 2 (10.99.0.9): no switch port is known for this address"},
      {"MAC disagrees with the topology",
       [](GroupRequest& r) { r.ranks[1].mac = testing::mac("02:00:00:00:00:99"); },
       ErrorCode::kInvalidArgument,
       "rank 1 (10.77.0.2): MAC 02:00:00:00:00:99 differs from 02:00:00:00:00:02 known behind "
       "leaf0:r1"},
      {"pmtu larger than a port's MTU allows", [](GroupRequest& r) { r.pmtu = 2048; },
       ErrorCode::kFailedPrecondition,
       "pmtu 2048 needs an IP MTU of 2138 but port leaf0:r0 (rank 0) has mtu 1500"},
      {"window larger than a switch accepts", [](GroupRequest& r) { r.window = 512; },
       ErrorCode::kFailedPrecondition, "window 512 exceeds the max_window 256 of switch 'leaf0'"},
      {"more memory than a switch has", [](GroupRequest& r) { r.window = 256; },
       ErrorCode::kFailedPrecondition,
       "the group needs 1589248 bytes on switch 'leaf0', which can never give tenant 't' more "
       "than 794624 (its partition 0 + the shared pool 794624; capacity 794624)"},
  };
  for (const auto& c : cases) {
    GroupRequest r = make_request("g", hosts_on(1, 4));
    c.change(r);
    auto j = m.join(r, t0);
    ASSERT_FALSE(j.ok()) << c.what;
    EXPECT_EQ(j.error().code, c.code) << c.what;
    EXPECT_EQ(j.error().message, c.message) << c.what;
    expect_nothing_held();
  }
}

TEST_F(AdmissionTest, ASwitchThatCannotCarryThePmtuIsNamed) {
  IncManager small;
  testing::build_fabric(small, {.leaves = 1, .spines = 0, .ranks_per_leaf = 2, .max_pmtu = 1024});
  GroupRequest r = make_request("g", hosts_on(1, 2));
  r.pmtu = 2048;
  auto j = small.join(r, t0);
  EXPECT_EQ(j.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(j.error().message, "pmtu 2048 exceeds the max_pmtu 1024 of switch 'leaf0'");
}

TEST_F(AdmissionTest, ALinkPortTooSmallForThePmtuIsNamed) {
  IncManager mixed;
  testing::FabricShape f{.leaves = 2, .spines = 1, .ranks_per_leaf = 1};
  SwitchSpec spine = testing::spine_spec(f, 0);
  spine.ports[1].mtu = 1500;
  ASSERT_TRUE(mixed.add_switch(testing::leaf_spec(f, 0)).ok());
  ASSERT_TRUE(mixed.add_switch(testing::leaf_spec(f, 1)).ok());
  ASSERT_TRUE(mixed.add_switch(spine).ok());
  ASSERT_TRUE(mixed.add_link({{"leaf0", "up0"}, {"spine0", "d0"}}).ok());
  ASSERT_TRUE(mixed.add_link({{"leaf1", "up0"}, {"spine0", "d1"}}).ok());
  for (int l = 0; l < 2; ++l) {
    ASSERT_TRUE(
        mixed
            .attach_rank(
                {testing::rank_ip(l, 0), testing::rank_mac(l, 0), {testing::leaf_name(l), "r0"}})
            .ok());
  }
  ASSERT_TRUE(mixed.set_tenant({.name = "t", .quota = {}, .reserved = {}}).ok());
  GroupRequest r = make_request("g", {{0, 0}, {1, 0}});
  r.pmtu = 4096;
  auto j = mixed.join(r, t0);
  ASSERT_FALSE(j.ok());
  // Every candidate crosses spine0:d1 (the spine, or the path between the leaves).
  EXPECT_EQ(j.error().message,
            "pmtu 4096 needs an IP MTU of 4186 but port spine0:d1 (link to 'leaf1') has mtu 1500");
}

// An exact group's switches send each other exact partials, larger than the ranks' packets: a
// tree whose switch-to-switch links cannot carry them is refused as exact, with the width, the
// memory and the port; ranks behind one switch, or a partial that fits, are admitted.
TEST_F(AdmissionTest, AnExactGroupWhoseLinksCannotCarryItsPartialsIsRefusedAsExact) {
  GroupRequest r = make_request("exact", {{0, 0}, {1, 0}}, 4);
  r.arith = {vocab::AccumProfile::kKulischFixed, vocab::DType::kFp32};
  auto j = m.join(r, t0);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code, ErrorCode::kFailedPrecondition);
  const uint32_t partial = vocab::max_group_partial_bytes(1024, r.arith, 2);
  EXPECT_GT(partial + 90, 1500u);
  EXPECT_EQ(j.error().message,
            "exact fp32 sum over 2 contributors needs W = 279 bits (73 bytes per element, " +
                std::to_string(vocab::group_memory_bytes(4, 1024, r.arith, 2)) +
                " bytes on each switch at window 4, pmtu 1024): an exact partial of up to " +
                std::to_string(partial) + " bytes (docs/arithmetic.md) needs an IP MTU of " +
                std::to_string(partial + 90) +
                " but port spine0:d0 (link to 'leaf0') has mtu 1500: give the switch-to-switch "
                "links jumbo frames, or the group a smaller pmtu");
  expect_nothing_held();

  // The same sum over ranks behind one leaf crosses no link.
  GroupRequest one = make_request("one", {{0, 0}, {0, 1}}, 4);
  one.arith = r.arith;
  EXPECT_TRUE(m.join(one, t0).ok());
  // fp8 E4M3 at pmtu 256: its partials fit a 1500-byte link.
  GroupRequest small = make_request("small", {{0, 2}, {1, 2}}, 4);
  small.arith = {vocab::AccumProfile::kKulischFixed, vocab::DType::kFp8E4M3};
  small.pmtu = 256;
  ASSERT_LE(vocab::max_group_partial_bytes(256, small.arith, 2) + 90, 1500u);
  EXPECT_TRUE(m.join(small, t0).ok());
}

TEST_F(AdmissionTest, NameAndEndpointsMustNotClashWithALiveGroup) {
  const uint32_t g1 = testing::install(m, make_request("g", hosts_on(1, 2)), t0);
  auto j = m.join(make_request("g", hosts_on(1, 2), 16, 0x500), t0);
  EXPECT_EQ(j.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(j.error().message,
            "group 'g' of tenant 't' already exists: group 1 ('g' of tenant 't', installed)");
  j = m.join(make_request("h", hosts_on(1, 2)), t0);
  EXPECT_EQ(j.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(j.error().message,
            "rank 0's endpoint 10.77.0.1 qpn 0x000011 is already rank 0 of group 1 ('g' of "
            "tenant 't', installed)");
  EXPECT_EQ(m.groups().size(), 1u);
  EXPECT_EQ(g1, 1u);
}

TEST_F(AdmissionTest, NoMemoryNowIsResourceExhausted) {
  testing::install(m, make_request("g1", hosts_on(2, 2), 32), t0);  // spine0 64 of 64
  const MemoryLedger before = m.ledger();
  auto j = m.join(make_request("g2", hosts_on(2, 2), 1, 0x100), t0);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(j.error().message,
            "no INC memory: the group needs 6208 bytes on switch 'spine0', 0 free for tenant 't' "
            "(partition 0 + shared 0; capacity 198656)");
  EXPECT_EQ(m.ledger(), before);
  EXPECT_EQ(m.groups().size(), 1u);
}

TEST_F(AdmissionTest, AnAdmittedJoinInstallsAContextWithSlotsOnEverySwitch) {
  GroupRequest r = make_request("g", hosts_on(2, 2));
  std::swap(r.ranks[0], r.ranks[3]);  // any order
  auto j = m.join(r, t0);
  ASSERT_TRUE(j.ok()) << j.error().to_string();
  EXPECT_EQ(j.value().group_id, 1u);
  EXPECT_EQ(j.value().state, GroupState::kInstalling);
  const Effects& fx = j.value().effects;
  ASSERT_EQ(fx.events.size(), 1u);
  EXPECT_EQ(fx.events[0], (GroupEvent{1, GroupEventKind::kInstalling, std::nullopt}));
  EXPECT_EQ(testing::action_list(fx),
            (std::vector<std::pair<ActionKind, SwitchId>>{{ActionKind::kInstallContext, "spine0"},
                                                          {ActionKind::kInstallContext, "leaf0"},
                                                          {ActionKind::kInstallContext, "leaf1"}}));
  const Group& g = *m.find_group(1);
  const uint32_t psn = initial_psn_for(1);
  for (const SwitchAction& a : fx.actions) {
    ASSERT_TRUE(a.context.has_value());
    EXPECT_EQ(a.memory_bytes, slots(32));
    EXPECT_EQ(a.context->memory_bytes, slots(32));
    EXPECT_EQ(a.context->group_id, 1u);
    EXPECT_EQ(a.context->num_ranks, 4u);
    EXPECT_EQ(a.context->window, 16u);
    EXPECT_EQ(a.context->pmtu, 1024u);
    EXPECT_EQ(a.context->initial_psn, psn);
    EXPECT_EQ(a.context->children, g.tree.node(a.switch_id)->children);
  }
  // Virtual QPNs: lowest free per switch; the two ends of a switch link point at each other.
  const TreeNode& spine = *g.tree.node("spine0");
  const TreeNode& leaf1 = *g.tree.node("leaf1");
  EXPECT_EQ(spine.children[0].local,
            (Endpoint{ip("10.78.0.254"), testing::spine_spec({}, 0).inc_mac, 0x100}));
  EXPECT_EQ(spine.children[1].local.qpn, 0x101u);
  EXPECT_EQ(leaf1.children[0].local.qpn, 0x100u);
  EXPECT_EQ(leaf1.children[1].local.qpn, 0x101u);
  EXPECT_EQ(leaf1.parent->local.qpn, 0x102u);
  EXPECT_EQ(leaf1.parent->remote, spine.children[1].local);
  EXPECT_EQ(spine.children[1].remote, leaf1.parent->local);
  EXPECT_EQ(leaf1.children[1].remote,
            (Endpoint{testing::rank_ip(1, 1), testing::rank_mac(1, 1), 0x14}));
  EXPECT_EQ(m.ledger().held_total("t"), slots(96));
  EXPECT_LT(psn, 1u << 24);
  EXPECT_NE(initial_psn_for(1), initial_psn_for(2));
}

}  // namespace
}  // namespace epic::manager
