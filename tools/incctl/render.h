// incctl's human output: the manager's answers as aligned text tables (one function per view).
// --json prints the proto messages instead (proto3 JSON mapping).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/inc/v1/manager.pb.h"

namespace epic::incctl {

namespace pb = ::epic::inc::v1;

// Switch memory for people: "794624 (776 KiB)", "25427968 (24.3 MiB)", "512" below 1 KiB.
std::string bytes_text(uint64_t bytes);
// An operator's byte count: digits with an optional binary suffix K/KiB, M/MiB, G/GiB
// ("512KiB", "24MiB", "1600"); nullopt when malformed or above 2^64-1.
std::optional<uint64_t> parse_bytes(std::string_view text);

std::string render_switches(const pb::ListSwitchesResponse& r);
std::string render_groups(const pb::ListGroupsResponse& r);
// Mode-II vs Mode-III: each group's window and bytes per switch as the manager would size them
// in either mode on the group's tree (GroupInfo.mode_costs).
std::string render_mode_costs(const pb::ListGroupsResponse& r);
std::string render_tree(const pb::GroupInfo& g);
std::string render_memory(const pb::GetMemoryResponse& r);
std::string render_tenants(const pb::ListTenantsResponse& r);
std::string render_topology(const pb::GetTopologyResponse& r);
std::string render_telemetry(const pb::GetTelemetryResponse& r);

}  // namespace epic::incctl
