// The agent's GroupSink in incd: Datapath::set_groups (an RCU-published snapshot; a group whose
// configuration is unchanged keeps its worker, slot memory and engine state), then the metrics
// collector learns the new set (it names ranks in labels).
// Threading: incd's control thread (the io_context that runs the agent).
#pragma once

#include "agent/core/group_sink.h"
#include "daemon/metrics.h"
#include "datapath/dpdk/datapath.h"

namespace epic::incd {

class DatapathSink : public agent::GroupSink {
 public:
  DatapathSink(dpdk::Datapath& dp, DatapathCollector& collector) : dp_(dp), collector_(collector) {}
  std::string set_groups(const std::vector<engine::GroupConfig>& groups) override {
    if (std::string err = dp_.set_groups(groups); !err.empty()) return err;
    collector_.set_groups(groups);
    return "";
  }

 private:
  dpdk::Datapath& dp_;
  DatapathCollector& collector_;
};

}  // namespace epic::incd
