// The boundary of inc-manager: every proto message a rank, an operator or an IncAgent sends is
// checked here, field by field, and turned into the core's plain types. A bad field gives
// INVALID_ARGUMENT whose message starts with the field's path ("endpoint.ipv4: ..."), so the
// caller knows what to fix; the core then checks the request against the state.
// Threading: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "manager/core/error.h"
#include "manager/core/rendezvous.h"
#include "manager/core/tenant.h"
#include "manager/core/topology.h"
#include "proto/inc/v1/agent.pb.h"
#include "proto/inc/v1/manager.pb.h"

namespace epic::manager::service {

namespace pb = ::epic::inc::v1;

using vocab::kDefaultPmtu;
using vocab::kDefaultWindow;

Error invalid(std::string_view field, std::string_view why);

// Names of switches, ports and tenants: 1..64 of [A-Za-z0-9._-].
bool valid_name(std::string_view name);

Result<uint32_t> parse_ipv4_field(std::string_view field, const std::string& text);
Result<vocab::MacAddr> parse_mac_field(std::string_view field, const std::string& text);
// "leaf0:up0"
Result<SwitchPort> parse_switch_port(std::string_view field, const std::string& text);

// A RankEndpoint at `field` ("endpoint", "host_endpoint"); RankRequest::rank is left 0.
Result<RankRequest> rank_endpoint_from(std::string_view field, const pb::RankEndpoint& endpoint);
Result<RankJoin> rank_join_from(const pb::JoinGroupRequest& request);
Result<SwitchSpec> switch_spec_from(const pb::Register& registration);
Result<Link> link_from(std::string_view field, const pb::Link& link);
Result<RankAttachment> attachment_from(std::string_view field, const pb::RankAttachment& rank);
Result<Tenant> tenant_from(std::string_view field, const pb::Tenant& tenant);

}  // namespace epic::manager::service
