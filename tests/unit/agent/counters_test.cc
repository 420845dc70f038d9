// The group counter list (proto/vocab/counters.h) is declared once: every counter is a
// uint64 field of the same name in agent.proto's GroupCounters, and the heartbeat carries
// each one's value (distinct values, so a swapped pair would show).
#include "proto/vocab/counters.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/core/heartbeat.h"

namespace epic::agent {
namespace {

const std::vector<std::string>& counter_names() {
  static const std::vector<std::string> names = {
#define EPIC_NAME(name, help) #name,
      EPIC_GROUP_COUNTERS(EPIC_NAME)
#undef EPIC_NAME
  };
  return names;
}

class OneGroup : public TelemetrySource {
 public:
  std::vector<GroupReport> groups() const override {
    GroupReport g;
    g.group_id = 7;
    uint64_t v = 1000;
#define EPIC_VALUE(name, help) g.stats.name = v++;
    EPIC_GROUP_COUNTERS(EPIC_VALUE)
#undef EPIC_VALUE
    g.children.push_back({0, true, 3, 1, 11, 12, 13, 14});
    g.children.push_back({1, false, 4, 8, 21, 22, 23, 24});
    return {g};
  }
  std::vector<HostReport> hosts() const override { return {}; }
  std::vector<PortReport> ports() const override {
    return {{"up0", 100, 2, 1, 4096}, {"r0", 7, 1, 0, 0}};
  }
};

TEST(GroupCounters, EveryCounterIsAProtoFieldOfTheSameName) {
  const auto* d = inc::v1::GroupCounters::descriptor();
  ASSERT_FALSE(counter_names().empty());
  for (const std::string& name : counter_names()) {
    const auto* f = d->FindFieldByName(name);
    ASSERT_NE(f, nullptr) << name << " has no field in agent.proto GroupCounters";
    EXPECT_EQ(f->type(), google::protobuf::FieldDescriptor::TYPE_UINT64) << name;
  }
}

TEST(GroupCounters, TheHeartbeatCarriesEachValue) {
  const inc::v1::AgentMessage m = make_heartbeat(OneGroup{});
  ASSERT_EQ(m.heartbeat().groups_size(), 1);
  const inc::v1::GroupCounters& g = m.heartbeat().groups(0);
  EXPECT_EQ(g.group_id(), 7u);
  const auto* refl = g.GetReflection();
  uint64_t want = 1000;
  for (const std::string& name : counter_names()) {
    EXPECT_EQ(refl->GetUInt64(g, g.GetDescriptor()->FindFieldByName(name)), want++) << name;
  }
}

// Straggler figures travel per child with who the child is (proto/vocab/straggler.h).
TEST(GroupCounters, TheHeartbeatCarriesEachChildsTiming) {
  const inc::v1::AgentMessage m = make_heartbeat(OneGroup{});
  const inc::v1::GroupCounters& g = m.heartbeat().groups(0);
  ASSERT_EQ(g.children_size(), 2);
  const inc::v1::ChildTiming& a = g.children(0);
  EXPECT_EQ(a.child(), 0u);
  EXPECT_TRUE(a.is_rank());
  EXPECT_EQ(a.first_rank(), 3u);
  EXPECT_EQ(a.rank_count(), 1u);
  EXPECT_EQ(a.last(), 11u);
  EXPECT_EQ(a.lag_samples(), 12u);
  EXPECT_EQ(a.lag_p50_ns(), 13u);
  EXPECT_EQ(a.lag_p99_ns(), 14u);
  const inc::v1::ChildTiming& b = g.children(1);
  EXPECT_EQ(b.child(), 1u);
  EXPECT_FALSE(b.is_rank());
  EXPECT_EQ(b.first_rank(), 4u);
  EXPECT_EQ(b.rank_count(), 8u);
  EXPECT_EQ(b.last(), 21u);
  EXPECT_EQ(b.lag_p99_ns(), 24u);
}

// Ports' transmit counters travel for load-aware placement.
TEST(GroupCounters, TheHeartbeatCarriesEachPortsTransmitCounters) {
  const inc::v1::AgentMessage m = make_heartbeat(OneGroup{});
  ASSERT_EQ(m.heartbeat().ports_size(), 2);
  EXPECT_EQ(m.heartbeat().ports(0).port(), "up0");
  EXPECT_EQ(m.heartbeat().ports(0).tx_bytes(), 100u);
  EXPECT_EQ(m.heartbeat().ports(0).tx_frames(), 2u);
  EXPECT_EQ(m.heartbeat().ports(0).tx_dropped(), 1u);
  EXPECT_EQ(m.heartbeat().ports(0).queue_bytes(), 4096u);
  EXPECT_EQ(m.heartbeat().ports(1).queue_bytes(), 0u);
  EXPECT_EQ(m.heartbeat().ports(1).port(), "r0");
}

}  // namespace
}  // namespace epic::agent
