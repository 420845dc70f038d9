// Load-aware placement through the service: an agent's heartbeats carry its ports' transmit
// byte counters; the manager turns two of them into a rate, the link behind that port into a
// load, and GetTopology shows it (hot past --hot-link-load).
#include <gtest/gtest.h>

#include <thread>

#include "tests/unit/manager/service/harness.h"

namespace epic::manager::service::testing {
namespace {

pb::AgentMessage port_beat(const std::string& port, uint64_t tx_bytes) {
  pb::AgentMessage m;
  pb::PortLoad* p = m.mutable_heartbeat()->add_ports();
  p->set_port(port);
  p->set_tx_bytes(tx_bytes);
  return m;
}

TEST(LinkLoadService, HeartbeatsMakeALinkHotInTheTopology) {
  TempDir dir;
  TestManager mgr(dir);
  ServiceOptions o = test_options();
  // leaf0's port r9 (ranks sit behind r0-r7) is cabled to spine0's port d0, declared at
  // 1 Gb/s (125 MB/s).
  const Link link{{"leaf0", "r9"}, {"spine0", "d0"}};
  o.declared.links = {link};
  o.declared.speeds.links[link] = {.bandwidth_gbps = 1, .rtt_us = 10};
  mgr.start(o);
  FakeAgent leaf(mgr.channel());
  leaf.register_switch(FakeAgent::leaf0(64, 10));
  FakeAgent spine(mgr.channel());
  pb::Register s = FakeAgent::leaf0(64);
  s.set_switch_id("spine0");
  s.set_inc_ipv4("10.77.0.253");
  s.set_inc_mac("02:ec:00:00:00:fd");
  s.mutable_ports(0)->set_name("d0");
  spine.register_switch(s);

  auto topology = [&] {
    grpc::ClientContext ctx;
    pb::GetTopologyResponse out;
    EXPECT_TRUE(mgr.stub()->GetTopology(&ctx, {}, &out).ok());
    return out;
  };
  auto load_of_link = [&](const pb::GetTopologyResponse& t) -> const pb::LinkLoad* {
    for (const auto& l : t.link_loads()) {
      if (l.link().b().switch_id() == "spine0" || l.link().a().switch_id() == "spine0") return &l;
    }
    return nullptr;
  };
  pb::GetTopologyResponse t;
  for (int k = 0; k < 250 && !load_of_link(t); ++k) {  // applied once both have registered
    t = topology();
    if (!load_of_link(t)) std::this_thread::sleep_for(20ms);
  }
  ASSERT_NE(load_of_link(t), nullptr) << "the declared link is in the view";
  EXPECT_FALSE(load_of_link(t)->measured());

  // Two beats 300 ms apart, 60 MB more: about 200 MB/s, above the link's 125 MB/s.
  ASSERT_TRUE(spine.send(port_beat("d0", 1'000'000)));
  std::this_thread::sleep_for(300ms);
  ASSERT_TRUE(spine.send(port_beat("d0", 61'000'000)));
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    t = topology();
    if (load_of_link(t) && load_of_link(t)->measured()) break;
    std::this_thread::sleep_for(20ms);
  }
  const pb::LinkLoad* x = load_of_link(t);
  ASSERT_NE(x, nullptr);
  ASSERT_TRUE(x->measured());
  const double spine_tx =
      x->link().a().switch_id() == "spine0" ? x->a_to_b_bytes_per_s() : x->b_to_a_bytes_per_s();
  EXPECT_GT(spine_tx, 100e6);  // 60 MB over the beats' 300+ ms as the manager saw them
  EXPECT_LT(spine_tx, 210e6);
  EXPECT_GT(x->load(), 0.5);
  EXPECT_TRUE(x->hot());
}

}  // namespace
}  // namespace epic::manager::service::testing
