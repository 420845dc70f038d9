// The contexts inc-manager sends pass the one context library's checks
// (manager/core/context_check.h), and a broken one is caught by field path and limit before it
// is sent.
#include "manager/core/context_check.h"

#include <gtest/gtest.h>

#include "manager/core/inc_manager.h"
#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::hosts_on;
using testing::make_request;

// The install actions of a group of 4 ranks over two leaves and a spine.
std::vector<SwitchAction> installs(IncManager& m) {
  testing::build_fabric(
      m, {.leaves = 2, .spines = 2, .ranks_per_leaf = 4, .leaf_slots = 128, .spine_slots = 64});
  auto j = m.join(make_request("g", hosts_on(2, 2)), Millis{1000});
  EXPECT_TRUE(j.ok());
  std::vector<SwitchAction> out;
  for (const SwitchAction& a : j.value().effects.actions) {
    if (a.kind == ActionKind::kInstallContext) out.push_back(a);
  }
  return out;
}

TEST(ContextCheck, EveryContextTheManagerBuildsPasses) {
  IncManager m;
  const auto actions = installs(m);
  ASSERT_EQ(actions.size(), 3u);
  for (const SwitchAction& a : actions) {
    ASSERT_TRUE(a.context);
    const SwitchSpec* sw = m.topology().find_switch(a.switch_id);
    ASSERT_NE(sw, nullptr);
    EXPECT_EQ(context_errors(*a.context, *sw), "") << a.switch_id;
  }
}

TEST(ContextCheck, ABrokenContextIsNamedByFieldAndLimit) {
  IncManager m;
  const auto actions = installs(m);
  ASSERT_FALSE(actions.empty());
  const SwitchSpec& sw = *m.topology().find_switch(actions[0].switch_id);
  SwitchContext c = *actions[0].context;
  c.children[1].remote.qpn = 1u << 24;
  EXPECT_EQ(context_errors(c, sw),
            "context.children[1].remote.qpn: 0x1000000 does not fit in 24 bits (must be < "
            "0x1000000)");
  c = *actions[0].context;
  c.memory_bytes += 1;
  EXPECT_NE(context_errors(c, sw).find("context.memory_bytes: memory_bytes "), std::string::npos);
  c = *actions[0].context;
  c.children[0].port = "nope";
  EXPECT_EQ(context_errors(c, sw),
            "context.children[0].port: no port named \"nope\" on switch \"" + sw.id + "\"");
  c = *actions[0].context;
  c.window = 12;
  EXPECT_EQ(context_errors(c, sw),
            "context.window: 12 is not a power of two in 1..1048576 (the engine keeps 2*window "
            "slots indexed by psn mod 2*window)");
  c = *actions[0].context;
  c.mode = vocab::GroupMode::kMode3;
  EXPECT_EQ(context_errors(c, sw), "");
  c.hop_timeout_us = vocab::kMaxHopTimeoutUs + 1;
  EXPECT_EQ(context_errors(c, sw),
            "context.hop_timeout_us: 1000001 us is outside 10..1000000 us (Mode-III's per-hop "
            "ACK timeout)");
}

}  // namespace
}  // namespace epic::manager
