#include "manager/core/topology.h"

#include <gtest/gtest.h>

#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::ip;
using testing::mac;

SwitchSpec sw(const std::string& id, const std::string& addr, std::vector<std::string> ports) {
  SwitchSpec s;
  s.id = id;
  s.inc_ipv4 = ip(addr);
  s.inc_mac = mac("02:ec:00:00:00:01");
  for (auto& p : ports) s.ports.push_back({p, 1500});
  s.capacity_bytes = 64 * vocab::slot_bytes(1024);
  return s;
}

class TopologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(t.add_switch(sw("leaf0", "10.77.0.254", {"r0", "r1", "up0", "up1"})).ok());
    ASSERT_TRUE(t.add_switch(sw("spine0", "10.78.0.254", {"d0", "d1"})).ok());
  }
  Topology t;
};

TEST_F(TopologyTest, StoresSwitchesLinksAndRanks) {
  ASSERT_TRUE(t.add_link({{"spine0", "d0"}, {"leaf0", "up0"}}).ok());
  ASSERT_TRUE(t.attach_rank({ip("10.77.0.1"), mac("02:00:00:00:00:01"), {"leaf0", "r0"}}).ok());
  EXPECT_EQ(t.find_switch("leaf0")->inc_ipv4, ip("10.77.0.254"));
  EXPECT_EQ(t.find_port({"leaf0", "up1"})->mtu, 1500);
  EXPECT_EQ(t.find_port({"leaf0", "nope"}), nullptr);
  // Links are stored with their ends ordered.
  ASSERT_EQ(t.links().size(), 1u);
  EXPECT_EQ(*t.links().begin(), (Link{{"leaf0", "up0"}, {"spine0", "d0"}}));
  EXPECT_EQ(to_string(*t.links().begin()), "leaf0:up0 - spine0:d0");
  EXPECT_EQ(*t.link_peer({"spine0", "d0"}), (SwitchPort{"leaf0", "up0"}));
  const auto nb = t.neighbours("leaf0");
  ASSERT_EQ(nb.size(), 1u);
  EXPECT_EQ(nb[0].port, "up0");
  EXPECT_EQ(nb[0].peer, (SwitchPort{"spine0", "d0"}));
  EXPECT_EQ(t.find_rank(ip("10.77.0.1"))->at, (SwitchPort{"leaf0", "r0"}));
}

TEST_F(TopologyTest, ParallelLinksBetweenTwoSwitchesAreAllowed) {
  ASSERT_TRUE(t.add_link({{"leaf0", "up0"}, {"spine0", "d0"}}).ok());
  ASSERT_TRUE(t.add_link({{"leaf0", "up1"}, {"spine0", "d1"}}).ok());
  EXPECT_EQ(t.neighbours("spine0").size(), 2u);
}

struct BadSwitch {
  const char* what;
  SwitchSpec spec;
  ErrorCode code;
  const char* message;
};

TEST_F(TopologyTest, RejectsBadSwitchesWithPreciseMessages) {
  auto with = [](auto change) {
    SwitchSpec s = sw("leaf9", "10.77.9.254", {"r0"});
    change(s);
    return s;
  };
  const BadSwitch cases[] = {
      {"duplicate id", sw("leaf0", "10.77.9.254", {"r0"}), ErrorCode::kAlreadyExists,
       "switch 'leaf0' already exists"},
      {"duplicate INC address", sw("leaf9", "10.77.0.254", {"r0"}), ErrorCode::kAlreadyExists,
       "switch 'leaf9': INC address 10.77.0.254 is already switch 'leaf0''s"},
      {"bad id", with([](SwitchSpec& s) { s.id = "leaf 9"; }), ErrorCode::kInvalidArgument,
       "switch id 'leaf 9' is not a name (1-64 of [A-Za-z0-9._/-])"},
      {"multicast address", with([](SwitchSpec& s) { s.inc_ipv4 = ip("224.0.0.1"); }),
       ErrorCode::kInvalidArgument,
       "switch 'leaf9': INC address 224.0.0.1 is not a unicast host address"},
      {"multicast MAC", with([](SwitchSpec& s) { s.inc_mac = mac("01:00:5e:00:00:01"); }),
       ErrorCode::kInvalidArgument,
       "switch 'leaf9': INC MAC 01:00:5e:00:00:01 is not a unicast MAC"},
      {"no ports", with([](SwitchSpec& s) { s.ports.clear(); }), ErrorCode::kInvalidArgument,
       "switch 'leaf9' has no ports"},
      {"port twice", with([](SwitchSpec& s) {
         s.ports.push_back({"r0", 1500});
       }),
       ErrorCode::kInvalidArgument, "switch 'leaf9': port 'r0' is listed twice"},
      {"port mtu", with([](SwitchSpec& s) { s.ports[0].mtu = 10000; }), ErrorCode::kInvalidArgument,
       "switch 'leaf9': port 'r0' mtu 10000 is outside 68..9600"},
      {"max window", with([](SwitchSpec& s) { s.max_window = 48; }), ErrorCode::kInvalidArgument,
       "switch 'leaf9': max_window 48 is not a power of two in 1..1048576"},
      {"max pmtu", with([](SwitchSpec& s) { s.max_pmtu = 1500; }), ErrorCode::kInvalidArgument,
       "switch 'leaf9': max_pmtu 1500 is not one of 256, 512, 1024, 2048, 4096"},
  };
  for (const auto& c : cases) {
    Status s = t.add_switch(c.spec);
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.error().code, c.code) << c.what;
    EXPECT_EQ(s.error().message, c.message) << c.what;
  }
  EXPECT_EQ(t.switches().size(), 2u);
}

TEST_F(TopologyTest, RejectsLinksToUnknownSwitchesOrPorts) {
  Status s = t.add_link({{"leaf0", "up0"}, {"spine9", "d0"}});
  EXPECT_EQ(s.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(s.error().message, "link leaf0:up0 - spine9:d0: unknown switch 'spine9'");
  s = t.add_link({{"leaf0", "up7"}, {"spine0", "d0"}});
  EXPECT_EQ(s.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(s.error().message, "link leaf0:up7 - spine0:d0: switch 'leaf0' has no port 'up7'");
  s = t.add_link({{"leaf0", "up0"}, {"leaf0", "up1"}});
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.error().message, "link leaf0:up0 - leaf0:up1: both ends are on switch 'leaf0'");
  EXPECT_TRUE(t.links().empty());
}

TEST_F(TopologyTest, RejectsAPortUsedTwice) {
  ASSERT_TRUE(t.add_link({{"leaf0", "up0"}, {"spine0", "d0"}}).ok());
  Status s = t.add_link({{"leaf0", "up0"}, {"spine0", "d1"}});
  EXPECT_EQ(s.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(s.error().message,
            "link leaf0:up0 - spine0:d1: port leaf0:up0 already carries link leaf0:up0 - "
            "spine0:d0");
  s = t.attach_rank({ip("10.77.0.1"), mac("02:00:00:00:00:01"), {"spine0", "d0"}});
  EXPECT_EQ(s.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(s.error().message,
            "rank address 10.77.0.1: port spine0:d0 already carries link leaf0:up0 - spine0:d0");
  ASSERT_TRUE(t.attach_rank({ip("10.77.0.2"), mac("02:00:00:00:00:02"), {"leaf0", "up1"}}).ok());
  s = t.add_link({{"leaf0", "up1"}, {"spine0", "d1"}});
  EXPECT_EQ(s.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(s.error().message,
            "link leaf0:up1 - spine0:d1: port leaf0:up1 already has rank address 10.77.0.2 "
            "behind it");
}

TEST_F(TopologyTest, RejectsBadRankAttachments) {
  ASSERT_TRUE(t.attach_rank({ip("10.77.0.1"), mac("02:00:00:00:00:01"), {"leaf0", "r0"}}).ok());
  Status s = t.attach_rank({ip("10.77.0.1"), mac("02:00:00:00:00:01"), {"leaf0", "r1"}});
  EXPECT_EQ(s.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(s.error().message, "rank address 10.77.0.1 is already attached behind leaf0:r0");
  s = t.attach_rank({ip("10.77.0.254"), mac("02:00:00:00:00:05"), {"leaf0", "r1"}});
  EXPECT_EQ(s.error().message, "rank address 10.77.0.254 is the INC address of switch 'leaf0'");
  s = t.attach_rank({ip("10.77.0.5"), mac("02:00:00:00:00:05"), {"leaf3", "r1"}});
  EXPECT_EQ(s.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(s.error().message, "rank address 10.77.0.5: unknown switch 'leaf3'");
  s = t.attach_rank({ip("10.77.0.5"), mac("02:00:00:00:00:05"), {"leaf0", "r9"}});
  EXPECT_EQ(s.error().message, "rank address 10.77.0.5: switch 'leaf0' has no port 'r9'");
  s = t.attach_rank({ip("10.77.0.5"), mac("00:00:00:00:00:00"), {"leaf0", "r1"}});
  EXPECT_EQ(s.error().message,
            "rank address 10.77.0.5: MAC 00:00:00:00:00:00 is not a unicast MAC");
  // Several addresses may sit behind one port (a host with several NICs behind a bridge).
  EXPECT_TRUE(t.attach_rank({ip("10.77.0.6"), mac("02:00:00:00:00:06"), {"leaf0", "r0"}}).ok());
}

TEST_F(TopologyTest, RemovingASwitchDropsItsLinksAndRanks) {
  ASSERT_TRUE(t.add_link({{"leaf0", "up0"}, {"spine0", "d0"}}).ok());
  ASSERT_TRUE(t.attach_rank({ip("10.77.0.1"), mac("02:00:00:00:00:01"), {"leaf0", "r0"}}).ok());
  ASSERT_TRUE(t.remove_switch("leaf0").ok());
  EXPECT_EQ(t.find_switch("leaf0"), nullptr);
  EXPECT_TRUE(t.links().empty());
  EXPECT_TRUE(t.ranks().empty());
  EXPECT_EQ(t.link_peer({"spine0", "d0"}), nullptr);
  EXPECT_EQ(t.remove_switch("leaf0").error().message, "unknown switch 'leaf0'");
}

}  // namespace
}  // namespace epic::manager
