// incctl's human output: the manager's answers as aligned text tables (one function per view).
// --json prints the proto messages instead (proto3 JSON mapping).
// Threading: pure functions.
#pragma once

#include <string>

#include "proto/inc/v1/manager.pb.h"

namespace epic::incctl {

namespace pb = ::epic::inc::v1;

std::string render_switches(const pb::ListSwitchesResponse& r);
std::string render_groups(const pb::ListGroupsResponse& r);
std::string render_tree(const pb::GroupInfo& g);
std::string render_memory(const pb::GetMemoryResponse& r);
std::string render_tenants(const pb::ListTenantsResponse& r);
std::string render_topology(const pb::GetTopologyResponse& r);
std::string render_telemetry(const pb::GetTelemetryResponse& r);

}  // namespace epic::incctl
