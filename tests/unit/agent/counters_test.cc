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
    return {g};
  }
  std::vector<HostReport> hosts() const override { return {}; }
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

}  // namespace
}  // namespace epic::agent
