// Checks of incd's `traffic_classes:` (docs/traffic-classes.md) and the egress each port gets
// from them and its rate_mbps: names unique, each DSCP in at most one class, at most one class
// that takes the unlisted DSCPs, levels, weights, rates and queue bounds in range.
// Threading: pure functions.
#pragma once

#include <vector>

#include "daemon/config/checks.h"
#include "datapath/switching/egress.h"
#include "proto/inc/v1/incd_config.pb.h"

namespace epic::incd {

inline constexpr uint64_t kMaxRateMbps = 400'000;

// The classes; errors under "traffic_classes[i]." for every field that is wrong.
std::vector<TrafficClassConfig> validate_traffic_classes(
    const google::protobuf::RepeatedPtrField<inc::v1::IncdConfig::TrafficClass>& classes,
    Errors& errors);

// The transmit side of port `port` of a valid configuration: its classes (one `default` class
// of every DSCP when there are none but the port has a rate), the DSCP map and its rate.
// Disabled (no classes) when neither is configured.
switching::EgressSpec egress_spec(const IncdConfig& c, size_t port);

}  // namespace epic::incd
