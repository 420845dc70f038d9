// Which caller may call which RPC, and what a tenant may read (docs/security.md, "Roles").
//
//   operator (admin certificate, or the local operator):  every RPC of IncManager
//   tenant:T   JoinGroup, LeaveGroup, DestroyGroup of T's groups; ListGroups, ListTenants,
//              GetMemory, GetTelemetry scoped to T (other tenants' rows are left out);
//              never SetTenant, AddLink, AttachRank, ListSwitches, GetTopology
//   agent:S    no IncManager RPC; IncAgentControl.Connect, registering as S only
//   the local operator may also stream as any switch (the labs' agents have no certificate);
//   an admin certificate may not (only S's own certificate registers S).
// Every refusal is PERMISSION_DENIED naming the caller and what it tried.
// Threading: pure functions.
#pragma once

#include <grpcpp/support/status.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "manager/service/caller.h"
#include "proto/inc/v1/manager.pb.h"

namespace epic::manager::service {

namespace pb = ::epic::inc::v1;

bool is_operator(const Caller& who);

// OK for an operator; PERMISSION_DENIED for anyone else.
grpc::Status authorize_operator(const Caller& who, std::string_view rpc);
// OK for an operator and for tenant:`tenant`.
grpc::Status authorize_tenant(const Caller& who, std::string_view rpc, const std::string& tenant);
// OK for an operator and for any tenant (the view is then scoped: scope_view).
grpc::Status authorize_reader(const Caller& who, std::string_view rpc);
// OK for the local operator and for any agent certificate (which switch: authorize_switch).
grpc::Status authorize_agent_stream(const Caller& who);
// OK for the local operator and for agent:`switch_id`.
grpc::Status authorize_switch(const Caller& who, const std::string& switch_id);

// Leaves out of a view what tenant `who` may not read; nothing for an operator.
using TenantOfGroup = std::function<std::optional<std::string>(uint32_t group_id)>;
void scope_view(const Caller& who, pb::ListGroupsResponse& view);
void scope_view(const Caller& who, pb::ListTenantsResponse& view);
void scope_view(const Caller& who, pb::GetMemoryResponse& view);
void scope_view(const Caller& who, pb::GetTelemetryResponse& view, const TenantOfGroup& tenant_of);

}  // namespace epic::manager::service
