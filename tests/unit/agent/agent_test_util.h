// Shared pieces of the agent's unit tests: a switch (ports r0, r1, up; INC address
// 10.77.0.254), contexts written in protobuf text format, and a fake datapath that records
// every group set the agent publishes.
#pragma once

#include <google/protobuf/text_format.h>

#include <mutex>
#include <string>
#include <vector>

#include "agent/core/group_sink.h"
#include "proto/context/context_proto.h"
#include "proto/inc/v1/agent.pb.h"
#include "proto/inc/v1/incd_config.pb.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/memory.h"

namespace epic::agent::test {

inline vocab::SwitchView test_switch() {
  return vocab::SwitchView::of(
      {{"r0", 1500}, {"r1", 1500}, {"up", 9000}},
      {{*vocab::parse_ipv4("10.77.0.254"), *vocab::parse_mac("02:ec:00:00:00:fe")}});
}

template <typename M>
M parse(const std::string& text) {
  M m;
  if (!google::protobuf::TextFormat::ParseFromString(text, &m)) throw std::runtime_error(text);
  return m;
}

// A root context of group `id` with two rank children; `qpn_base` keeps groups' QPNs apart.
inline std::string group_text(uint32_t id, uint32_t qpn_base, uint32_t window = 16) {
  const std::string b = std::to_string(qpn_base);
  return "id: " + std::to_string(id) + " ranks: 2 window: " + std::to_string(window) +
         " pmtu: 1024"
         " children { port: 'r0' rank: 0 remote { mac: '02:00:00:00:00:01' ipv4: '10.77.0.1'"
         " qpn: " +
         b + " } local { ipv4: '10.77.0.254' qpn: " + b +
         " } }"
         " children { port: 'r1' rank: 1 remote { mac: '02:00:00:00:00:02' ipv4: '10.77.0.2'"
         " qpn: " +
         b + " } local { ipv4: '10.77.0.254' qpn: " + std::to_string(qpn_base + 1) + " } }";
}

inline inc::v1::GroupContext group(uint32_t id, uint32_t qpn_base, uint32_t window = 16) {
  return parse<inc::v1::GroupContext>(group_text(id, qpn_base, window));
}

// The same group as inc-manager sends it: the GroupContext of a groups[] entry, with the local
// MACs written out.
inline inc::v1::GroupContext switch_context(uint32_t id, uint32_t qpn_base, uint32_t window = 16) {
  const std::string b = std::to_string(qpn_base);
  return parse<inc::v1::GroupContext>(
      "id: " + std::to_string(id) + " ranks: 2 window: " + std::to_string(window) +
      " pmtu: 1024"
      " children { port: 'r0' rank: 0"
      " remote { mac: '02:00:00:00:00:01' ipv4: '10.77.0.1' qpn: " +
      b + " } local { mac: '02:ec:00:00:00:fe' ipv4: '10.77.0.254' qpn: " + b +
      " } }"
      " children { port: 'r1' rank: 1"
      " remote { mac: '02:00:00:00:00:02' ipv4: '10.77.0.2' qpn: " +
      b + " } local { mac: '02:ec:00:00:00:fe' ipv4: '10.77.0.254' qpn: " +
      std::to_string(qpn_base + 1) + " } }");
}

class FakeSink : public GroupSink {
 public:
  std::string set_groups(const std::vector<vocab::GroupContext>& groups) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!refuse_.empty()) return refuse_;
    sets_.push_back(groups);
    return "";
  }
  void refuse(std::string why) {
    std::lock_guard<std::mutex> lock(mu_);
    refuse_ = std::move(why);
  }
  std::vector<std::vector<vocab::GroupContext>> sets() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sets_;
  }
  std::vector<uint32_t> last_ids() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<uint32_t> ids;
    if (!sets_.empty()) {
      for (const auto& g : sets_.back()) ids.push_back(g.group_id);
    }
    return ids;
  }

 private:
  mutable std::mutex mu_;
  std::string refuse_;
  std::vector<std::vector<vocab::GroupContext>> sets_;
};

}  // namespace epic::agent::test
