#include "manager/service/authorize.h"

namespace epic::manager::service {
namespace {

grpc::Status denied(const Caller& who, std::string_view what) {
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      who.describe() + " may not " + std::string(what));
}

template <class Repeated, class Keep>
void keep_only(Repeated& rows, Keep keep) {
  Repeated kept;
  for (auto& row : rows) {
    if (keep(row)) *kept.Add() = std::move(row);
  }
  rows.Swap(&kept);
}

}  // namespace

bool is_operator(const Caller& who) { return who.role == Role::kLocal || who.role == Role::kAdmin; }

grpc::Status authorize_operator(const Caller& who, std::string_view rpc) {
  if (is_operator(who)) return grpc::Status::OK;
  return denied(who, "call " + std::string(rpc) + ": it is an operator's (admin) call");
}

grpc::Status authorize_tenant(const Caller& who, std::string_view rpc, const std::string& tenant) {
  if (is_operator(who)) return grpc::Status::OK;
  if (who.role == Role::kTenant && who.name == tenant) return grpc::Status::OK;
  if (grpc::Status s = authorize_reader(who, rpc); !s.ok()) return s;  // an agent
  return denied(who, "call " + std::string(rpc) + " for tenant '" + tenant + "'");
}

grpc::Status authorize_reader(const Caller& who, std::string_view rpc) {
  if (who.role != Role::kAgent) return grpc::Status::OK;
  return denied(who,
                "call " + std::string(rpc) + ": an agent certificate only streams as its switch");
}

grpc::Status authorize_agent_stream(const Caller& who) {
  if (who.role == Role::kLocal || who.role == Role::kAgent) return grpc::Status::OK;
  return denied(who, "open an agent stream: only a certificate agent:<switch> may");
}

grpc::Status authorize_switch(const Caller& who, const std::string& switch_id) {
  if (who.role == Role::kLocal) return grpc::Status::OK;
  if (who.role == Role::kAgent && who.name == switch_id) return grpc::Status::OK;
  return denied(who, "register as switch '" + switch_id + "'");
}

void scope_view(const Caller& who, pb::ListGroupsResponse& view) {
  if (is_operator(who)) return;
  keep_only(*view.mutable_groups(), [&](const pb::GroupInfo& g) { return g.tenant() == who.name; });
  keep_only(*view.mutable_pending(),
            [&](const pb::PendingGroup& p) { return p.tenant() == who.name; });
}

void scope_view(const Caller& who, pb::ListTenantsResponse& view) {
  if (is_operator(who)) return;
  keep_only(*view.mutable_tenants(), [&](const pb::Tenant& t) { return t.name() == who.name; });
}

void scope_view(const Caller& who, pb::GetMemoryResponse& view) {
  if (is_operator(who)) return;
  for (auto& s : *view.mutable_switches()) {
    keep_only(*s.mutable_tenants(),
              [&](const pb::TenantMemory& t) { return t.tenant() == who.name; });
  }
  keep_only(*view.mutable_tenants(),
            [&](const pb::TenantTotal& t) { return t.tenant() == who.name; });
}

void scope_view(const Caller& who, pb::GetTelemetryResponse& view, const TenantOfGroup& tenant_of) {
  if (is_operator(who)) return;
  for (auto& s : *view.mutable_switches()) {
    keep_only(*s.mutable_groups(),
              [&](const pb::GroupCounters& g) { return tenant_of(g.group_id()) == who.name; });
    s.set_learned_hosts(0);  // the fabric's hosts are not a tenant's business
  }
  keep_only(*view.mutable_jobs(),
            [&](const pb::JobTelemetry& j) { return tenant_of(j.group_id()) == who.name; });
}

}  // namespace epic::manager::service
