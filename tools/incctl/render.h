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
// Every switch's per-group counters, then one line per installed group's job-wide figure.
std::string render_telemetry(const pb::GetTelemetryResponse& r);
// One group (incctl telemetry GROUP): the job-wide figure, the walk from the root, and every
// switch's local per-child figures.
std::string render_job(const pb::JobTelemetry& j);
// "12.5 MB/s"-style goodput; "-" when unknown.
std::string rate_text(bool known, double bytes_per_s);
// "850 us", "2.1 ms"; "-" for 0 (nothing timed).
std::string lag_text(uint64_t ns);

}  // namespace epic::incctl
