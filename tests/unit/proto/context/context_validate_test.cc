// The value checks of a group context (proto/context/context_validate.h), one row per rule:
// a good context with one thing broken → exactly one error, with its field path and limit.
#include "proto/context/context_validate.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "proto/vocab/memory.h"

namespace epic::vocab {
namespace {

MacAddr mac(uint8_t last) { return {0x02, 0, 0, 0, 0, last}; }
constexpr uint32_t kInc = 0x0A4D00FE;  // 10.77.0.254, the switch's INC address

// A root context of group 7: ranks 0 and 1 on ports 0 and 1, rank 2..3 below a switch on port 2.
GroupContext good() {
  GroupContext g;
  g.group_id = 7;
  g.num_ranks = 4;
  g.window = 16;
  g.pmtu = 1024;
  for (uint16_t i = 0; i < 3; ++i) {
    ChildLink c;
    c.port = i;
    c.is_rank = i < 2;
    c.first_rank = i;
    c.rank_count = i < 2 ? 1 : 2;
    c.remote = {mac(static_cast<uint8_t>(i + 1)), 0x0A4D0001u + i, 0x100u + i};
    c.local = {mac(0xFE), kInc, 0x200u + i};
    g.children.push_back(c);
  }
  return g;
}

SwitchView view() {
  return SwitchView::of({{"r0", 1500}, {"r1", 9000}, {"up", 9000}}, {{kInc, mac(0xFE)}});
}

struct Row {
  const char* name;
  std::function<void(GroupContext&)> breaks;
  std::string error;  // the one error: "path: message"
  bool with_switch = false;
};

class CheckContext : public testing::TestWithParam<Row> {};

TEST_P(CheckContext, NamesTheFieldAndTheLimit) {
  const Row& row = GetParam();
  GroupContext g = good();
  row.breaks(g);
  const SwitchView sw = view();
  ContextErrors errors;
  check_context(g, "context", errors, row.with_switch ? &sw : nullptr);
  ASSERT_EQ(errors.size(), 1u) << join(errors);
  EXPECT_EQ(errors[0].to_string(), row.error);
}

const Row kRows[] = {
    {"RanksZero", [](GroupContext& g) { g.num_ranks = 0; }, "context.ranks: 0 is outside 1..65535"},
    {"InitialPsnNot24Bit", [](GroupContext& g) { g.initial_psn = 1u << 24; },
     "context.initial_psn: 0x1000000 does not fit in 24 bits (must be < 0x1000000)"},
    {"WindowNotPowerOfTwo", [](GroupContext& g) { g.window = 24; },
     "context.window: 24 is not a power of two in 1..1048576 (the engine keeps 2*window slots "
     "indexed by psn mod 2*window)"},
    {"WindowAboveLimit", [](GroupContext& g) { g.window = kMaxWindow * 2; },
     "context.window: 2097152 is not a power of two in 1..1048576 (the engine keeps 2*window "
     "slots indexed by psn mod 2*window)"},
    {"PmtuNotAChoice", [](GroupContext& g) { g.pmtu = 1500; },
     "context.pmtu: 1500 is not one of 256, 512, 1024, 2048, 4096"},
    {"ModeNeitherIINorIII", [](GroupContext& g) { g.mode = static_cast<GroupMode>(1); },
     "context.mode: 1 is not a mode (2: Mode-II, 3: Mode-III)"},
    {"HopTimeoutBelowLimit", [](GroupContext& g) { g.hop_timeout_us = kMinHopTimeoutUs - 1; },
     "context.hop_timeout_us: 9 us is outside 10..1000000 us (Mode-III's per-hop ACK timeout)"},
    {"HopTimeoutAboveLimit", [](GroupContext& g) { g.hop_timeout_us = kMaxHopTimeoutUs + 1; },
     "context.hop_timeout_us: 1000001 us is outside 10..1000000 us (Mode-III's per-hop ACK "
     "timeout)"},
    {"NoChildren", [](GroupContext& g) { g.children.clear(); },
     "context.children: a group has 1..64 children at a switch, got 0"},
    {"TooManyChildren", [](GroupContext& g) { g.children.resize(kMaxChildren + 1, g.children[0]); },
     "context.children: a group has 1..64 children at a switch, got 65"},
    {"RankChildCoversTwoRanks",
     [](GroupContext& g) {
       g.children[0].rank_count = 2;  // ranks 0 and 1: child 1 goes
       g.parent = ParentLink{{mac(9), 0x0A4D0009, 0x300}, {mac(0xFE), kInc, 0x301}, 2};
       g.children.erase(g.children.begin() + 1);
     },
     "context.children[0].rank_count: a rank child is one rank NIC; rank_count 2 must be 1"},
    {"RankOutsideGroup", [](GroupContext& g) { g.children[1].first_rank = 4; },
     "context.children[1].rank: rank 4 is outside [0, 4) (the group has 4 ranks)"},
    {"RangeOutsideGroup", [](GroupContext& g) { g.children[2].rank_count = 3; },
     "context.children[2].rank_range: ranks [2, 5) are outside [0, 4) (the group has 4 ranks)"},
    {"RankCoveredTwice",
     [](GroupContext& g) {
       g.children[1].first_rank = 0;
       g.parent = ParentLink{{mac(9), 0x0A4D0009, 0x300}, {mac(0xFE), kInc, 0x301}, 2};
     },
     "context.children[1].rank: rank 0 is already covered by context.children[0]"},
    {"RootMissesARank", [](GroupContext& g) { g.children[2].rank_count = 1; },
     "context.children: rank 3 is not covered by any child; at the root switch (no parent) the "
     "children must cover all 4 ranks"},
    {"RemoteQpnNot24Bit", [](GroupContext& g) { g.children[2].remote.qpn = 1u << 24; },
     "context.children[2].remote.qpn: 0x1000000 does not fit in 24 bits (must be < 0x1000000)"},
    {"LocalQpnNot24Bit", [](GroupContext& g) { g.children[0].local.qpn = 0xFFFFFFFF; },
     "context.children[0].local.qpn: 0xffffffff does not fit in 24 bits (must be < 0x1000000)"},
    {"RemoteMulticastMac",
     [](GroupContext& g) { g.children[1].remote.mac = {0x01, 0, 0x5e, 0, 0, 1}; },
     "context.children[1].remote.mac: \"01:00:5e:00:00:01\" is a multicast MAC (the low bit of the "
     "first byte is set); a unicast MAC is required"},
    {"ZeroMac", [](GroupContext& g) { g.children[1].local.mac = {}; },
     "context.children[1].local.mac: \"00:00:00:00:00:00\" is the all-zero MAC; a unicast MAC is "
     "required"},
    {"RemoteBroadcastIpv4", [](GroupContext& g) { g.children[0].remote.ipv4 = 0xFFFFFFFF; },
     "context.children[0].remote.ipv4: \"255.255.255.255\" is not a unicast host address"},
    {"ParentLoopbackIpv4",
     [](GroupContext& g) {
       g.parent = ParentLink{{mac(9), 0x7F000001, 0x300}, {mac(0xFE), kInc, 0x301}, 2};
     },
     "context.parent.remote.ipv4: \"127.0.0.1\" is not a unicast host address"},
    {"UnknownPortId", [](GroupContext& g) { g.children[1].port = 3; },
     "context.children[1].port: port id 3 is not below the switch's 3 ports", true},
    {"PmtuAbovePortMtu", [](GroupContext& g) { g.pmtu = 2048; },
     "context.pmtu: 2048 + 90 bytes of RoCEv2 overhead (Ethernet, IPv4, UDP, BTH, RETH/ImmDt, "
     "ICRC, with margin) exceeds mtu 1500 of port \"r0\" (ports[0])",
     true},
    {"LocalNotAnIncAddress", [](GroupContext& g) { g.children[0].local.ipv4 = 0x0A4D00FD; },
     "context.children[0].local.ipv4: \"10.77.0.253\" is not one of switch.inc_addresses "
     "(10.77.0.254)",
     true},
    {"RemoteIsTheSwitch", [](GroupContext& g) { g.children[0].remote.ipv4 = kInc; },
     "context.children[0].remote.ipv4: \"10.77.0.254\" is this switch's own inc address; remote "
     "is the other end of the edge",
     true},
};

INSTANTIATE_TEST_SUITE_P(Rules, CheckContext, testing::ValuesIn(kRows),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(CheckContext, AGoodContextPasses) {
  const SwitchView sw = view();
  ContextErrors errors;
  check_context(good(), "context", errors, &sw);
  EXPECT_EQ(join(errors), "");
}

TEST(CheckContext, ShapeIsWhatTheEngineChecks) {
  GroupContext g = good();
  g.children[0].remote.qpn = 1u << 24;  // not part of the shape
  g.initial_psn = 1u << 24;
  ContextErrors errors;
  check_shape(g, "", errors);
  EXPECT_EQ(join(errors), "");
  g.window = 3;
  check_shape(g, "", errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "window");
  // The engine refuses a mode or a hop timeout it cannot run, too.
  g.window = 16;
  g.mode = static_cast<GroupMode>(4);
  g.hop_timeout_us = 0;
  errors.clear();
  check_shape(g, "", errors);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].path, "mode");
  EXPECT_EQ(errors[1].path, "hop_timeout_us");
}

TEST(CheckContext, AModeIIIContextWithItsLimitsPasses) {
  GroupContext g = good();
  g.mode = GroupMode::kMode3;
  for (const uint32_t us : {kMinHopTimeoutUs, kDefaultHopTimeoutUs, kMaxHopTimeoutUs}) {
    g.hop_timeout_us = us;
    ContextErrors errors;
    check_context(g, "context", errors);
    EXPECT_EQ(join(errors), "") << us;
  }
  EXPECT_EQ(mode_name(GroupMode::kMode2), "Mode-II");
  EXPECT_EQ(mode_name(GroupMode::kMode3), "Mode-III");
}

// In Mode-III every hop numbers what its subtree sends and receives: a switch's children must
// cover one range of ranks (a gap between them is refused; Mode-II does not mind).
TEST(CheckContext, ModeIIIChildrenCoverOneRangeOfRanks) {
  GroupContext g = good();  // children: rank 0, rank 1, ranks 2..3
  g.num_ranks = 6;
  g.children[2].first_rank = 4;  // ranks 4..5: 2..3 lie between child 1 and child 2
  ContextErrors errors;
  check_shape(g, "g", errors);
  EXPECT_EQ(join(errors), "");
  g.mode = GroupMode::kMode3;
  check_shape(g, "g", errors);
  ASSERT_EQ(errors.size(), 1u) << join(errors);
  EXPECT_EQ(errors[0].to_string(),
            "g.children: in Mode-III the children's ranks must be one contiguous range (ranks "
            "2..3 lie between two children): each hop numbers what its subtree sends");
}

TEST(GrantError, AGrantIsExactlyTheContextsMemory) {
  const GroupContext g = good();
  EXPECT_EQ(grant_error(g, group_memory_bytes(16, 1024)), "");
  EXPECT_EQ(grant_error(g, 1000),
            "memory_bytes 1000 granted, but window 16 and pmtu 1024 need exactly 99328 "
            "(2*window slots of 3104 bytes)");
}

}  // namespace
}  // namespace epic::vocab
