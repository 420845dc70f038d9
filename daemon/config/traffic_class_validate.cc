#include "daemon/config/traffic_class_validate.h"

#include <map>
#include <optional>
#include <string>

#include "proto/vocab/dscp.h"

namespace epic::incd {
namespace {

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (const char ch : s) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
      return false;
  }
  return true;
}

}  // namespace

std::vector<TrafficClassConfig> validate_traffic_classes(
    const google::protobuf::RepeatedPtrField<inc::v1::IncdConfig::TrafficClass>& classes,
    Errors& errors) {
  const auto fail = [&](std::string path, std::string why) {
    errors.push_back({std::move(path), std::move(why)});
  };
  std::vector<TrafficClassConfig> out;
  if (static_cast<size_t>(classes.size()) > switching::kMaxClasses) {
    fail("traffic_classes", std::to_string(classes.size()) + " classes; at most " +
                                std::to_string(switching::kMaxClasses));
  }
  std::map<std::string, size_t> names;
  std::map<uint32_t, size_t> dscp_owner;
  std::optional<size_t> catch_all;
  for (int i = 0; i < classes.size(); ++i) {
    const auto& m = classes.Get(i);
    const std::string path = index("traffic_classes", static_cast<size_t>(i));
    TrafficClassConfig c;
    c.name = m.name();
    if (!valid_name(c.name)) {
      fail(path + ".name", quote(c.name) + " is not a class name ([a-z0-9_-], 1..32 characters)");
    } else if (const auto [it, fresh] = names.emplace(c.name, i); !fresh) {
      fail(path + ".name",
           quote(c.name) + " is already the name of " + index("traffic_classes", it->second));
    }
    for (const uint32_t d : m.dscp()) {
      if (const std::string why = vocab::dscp_error(d); !why.empty()) {
        fail(path + ".dscp", why);
        continue;
      }
      if (const auto [it, fresh] = dscp_owner.emplace(d, i); !fresh) {
        fail(path + ".dscp",
             "DSCP " + std::to_string(d) + " is already in " +
                 (it->second == static_cast<size_t>(i) ? std::string("this class")
                                                       : index("traffic_classes", it->second)));
        continue;
      }
      c.dscp.push_back(static_cast<uint8_t>(d));
    }
    if (m.dscp().empty()) {
      if (catch_all) {
        fail(path + ".dscp", "empty, like " + index("traffic_classes", *catch_all) +
                                 "'s: only one class may take the unlisted DSCPs");
      }
      catch_all = i;
    }
    c.priority = m.priority();
    if (c.priority >= switching::kMaxPriorityLevels) {
      fail(path + ".priority", std::to_string(c.priority) + " is outside 0.." +
                                   std::to_string(switching::kMaxPriorityLevels - 1));
    }
    if (m.has_weight()) c.weight = m.weight();
    if (c.weight == 0 || c.weight > 1000) {
      fail(path + ".weight", std::to_string(c.weight) + " is outside 1..1000");
    }
    c.max_rate_mbps = m.max_rate_mbps();
    if (c.max_rate_mbps > kMaxRateMbps) {
      fail(path + ".max_rate_mbps", std::to_string(c.max_rate_mbps) + " is above " +
                                        std::to_string(kMaxRateMbps) + " (400 Gbit/s)");
    }
    if (m.has_queue_kb()) c.queue_kb = m.queue_kb();
    if (c.queue_kb < 4 || c.queue_kb > 65536) {
      fail(path + ".queue_kb", std::to_string(c.queue_kb) + " is outside 4..65536 (KiB)");
    }
    c.ecn_threshold_kb = m.ecn_threshold_kb();
    if (c.ecn_threshold_kb != 0 && c.ecn_threshold_kb >= c.queue_kb) {
      fail(path + ".ecn_threshold_kb", std::to_string(c.ecn_threshold_kb) +
                                           " is not below queue_kb " + std::to_string(c.queue_kb) +
                                           ": the queue would drop before it marks");
    }
    out.push_back(std::move(c));
  }
  return out;
}

switching::EgressSpec egress_spec(const IncdConfig& c, size_t port) {
  switching::EgressSpec s;
  s.port_rate_bps = c.ports[port].rate_mbps * 1'000'000;
  if (c.traffic_classes.empty()) {
    if (s.port_rate_bps != 0) s.classes.emplace_back();  // `default`: every DSCP, one FIFO
    return s;
  }
  size_t rest = 0;  // the class of unlisted DSCPs: the one that lists none, else the first
  for (size_t i = 0; i < c.traffic_classes.size(); ++i) {
    if (c.traffic_classes[i].dscp.empty()) rest = i;
  }
  s.class_of_dscp.fill(static_cast<uint8_t>(rest));
  for (size_t i = 0; i < c.traffic_classes.size(); ++i) {
    const TrafficClassConfig& t = c.traffic_classes[i];
    switching::ClassSpec cs;
    cs.priority = t.priority;
    cs.weight = t.weight;
    cs.max_rate_bps = t.max_rate_mbps * 1'000'000;
    cs.queue_bytes = uint64_t{t.queue_kb} * 1024;
    cs.ecn_threshold_bytes = uint64_t{t.ecn_threshold_kb} * 1024;
    s.classes.push_back(cs);
    for (const uint8_t d : t.dscp) s.class_of_dscp[d] = static_cast<uint8_t>(i);
  }
  return s;
}

}  // namespace epic::incd
