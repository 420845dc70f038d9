#include "manager/service/grpc_services.h"

#include <boost/asio/post.hpp>

#include "manager/service/authorize.h"

namespace epic::manager::service {

std::optional<Caller> ManagerApi::caller_or_deny(grpc::CallbackServerContext* ctx,
                                                 grpc::ServerUnaryReactor* reactor) const {
  std::string why;
  std::optional<Caller> who = identify(*ctx, auth_, why);
  if (!who) reactor->Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, why));
  return who;
}

template <class Work>
grpc::ServerUnaryReactor* ManagerApi::run(grpc::CallbackServerContext* ctx, Work work) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  std::optional<Caller> who = caller_or_deny(ctx, reactor);
  if (!who) return reactor;
  boost::asio::post(io_, [this, reactor, who = std::move(*who), work = std::move(work)]() mutable {
    reactor->Finish(work(who, clock_()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ManagerApi::JoinGroup(grpc::CallbackServerContext* ctx,
                                                const pb::JoinGroupRequest* request,
                                                pb::JoinGroupResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  std::optional<Caller> who = caller_or_deny(ctx, reactor);
  if (!who) return reactor;
  if (grpc::Status s = authorize_tenant(*who, "JoinGroup", request->tenant()); !s.ok()) {
    reactor->Finish(s);
    return reactor;
  }
  boost::asio::post(io_, [this, reactor, request, response] {
    controller_.join(
        *request,
        [reactor, response](const grpc::Status& status, const pb::JoinGroupResponse& answer) {
          if (status.ok()) *response = answer;
          reactor->Finish(status);
        },
        clock_());
  });
  return reactor;
}

grpc::ServerUnaryReactor* ManagerApi::LeaveGroup(grpc::CallbackServerContext* ctx,
                                                 const pb::LeaveGroupRequest* request,
                                                 pb::LeaveGroupResponse* response) {
  return run(ctx, [this, request, response](const Caller& who, Millis now) {
    if (grpc::Status s = authorize_tenant(who, "LeaveGroup", request->tenant()); !s.ok()) return s;
    return controller_.leave(*request, *response, now);
  });
}

grpc::ServerUnaryReactor* ManagerApi::DestroyGroup(grpc::CallbackServerContext* ctx,
                                                   const pb::DestroyGroupRequest* request,
                                                   pb::DestroyGroupResponse* response) {
  return run(ctx, [this, request, response](const Caller& who, Millis now) {
    if (!is_operator(who)) {
      // A tenant names its group by id or by (tenant, name): it must be its own. Another
      // tenant's group and no group at all are refused alike (ids are not disclosed).
      const bool by_id = request->group_id() != 0;
      const std::string owner =
          by_id ? controller_.tenant_of_group(request->group_id()).value_or("") : request->tenant();
      const bool own = who.role == Role::kTenant && owner == who.name &&
                       (request->tenant().empty() || request->tenant() == who.name);
      if (!own) {
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                            who.describe() + " may not destroy " +
                                (by_id ? "group " + std::to_string(request->group_id())
                                       : "a group of tenant '" + request->tenant() + "'") +
                                ": it is not one of its groups");
      }
    }
    return controller_.destroy(*request, *response, now);
  });
}

grpc::ServerUnaryReactor* ManagerApi::ListSwitches(grpc::CallbackServerContext* ctx,
                                                   const pb::ListSwitchesRequest*,
                                                   pb::ListSwitchesResponse* response) {
  return run(ctx, [this, response](const Caller& who, Millis now) {
    if (grpc::Status s = authorize_operator(who, "ListSwitches"); !s.ok()) return s;
    controller_.list_switches(*response, now);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::ListGroups(grpc::CallbackServerContext* ctx,
                                                 const pb::ListGroupsRequest* request,
                                                 pb::ListGroupsResponse* response) {
  return run(ctx, [this, request, response](const Caller& who, Millis) {
    if (grpc::Status s = authorize_reader(who, "ListGroups"); !s.ok()) return s;
    if (!is_operator(who) && !request->tenant().empty()) {
      if (grpc::Status s = authorize_tenant(who, "ListGroups", request->tenant()); !s.ok()) {
        return s;
      }
    }
    controller_.list_groups(*request, *response);
    scope_view(who, *response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::GetMemory(grpc::CallbackServerContext* ctx,
                                                const pb::GetMemoryRequest*,
                                                pb::GetMemoryResponse* response) {
  return run(ctx, [this, response](const Caller& who, Millis) {
    if (grpc::Status s = authorize_reader(who, "GetMemory"); !s.ok()) return s;
    controller_.memory(*response);
    scope_view(who, *response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::SetTenant(grpc::CallbackServerContext* ctx,
                                                const pb::SetTenantRequest* request,
                                                pb::SetTenantResponse*) {
  return run(ctx, [this, request](const Caller& who, Millis now) {
    if (grpc::Status s = authorize_operator(who, "SetTenant"); !s.ok()) return s;
    return controller_.set_tenant(*request, now);
  });
}

grpc::ServerUnaryReactor* ManagerApi::ListTenants(grpc::CallbackServerContext* ctx,
                                                  const pb::ListTenantsRequest*,
                                                  pb::ListTenantsResponse* response) {
  return run(ctx, [this, response](const Caller& who, Millis) {
    if (grpc::Status s = authorize_reader(who, "ListTenants"); !s.ok()) return s;
    controller_.list_tenants(*response);
    scope_view(who, *response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::AddLink(grpc::CallbackServerContext* ctx,
                                              const pb::AddLinkRequest* request,
                                              pb::AddLinkResponse*) {
  return run(ctx, [this, request](const Caller& who, Millis now) {
    if (grpc::Status s = authorize_operator(who, "AddLink"); !s.ok()) return s;
    return controller_.add_link(*request, now);
  });
}

grpc::ServerUnaryReactor* ManagerApi::AttachRank(grpc::CallbackServerContext* ctx,
                                                 const pb::AttachRankRequest* request,
                                                 pb::AttachRankResponse*) {
  return run(ctx, [this, request](const Caller& who, Millis now) {
    if (grpc::Status s = authorize_operator(who, "AttachRank"); !s.ok()) return s;
    return controller_.attach_rank(*request, now);
  });
}

grpc::ServerUnaryReactor* ManagerApi::GetTopology(grpc::CallbackServerContext* ctx,
                                                  const pb::GetTopologyRequest*,
                                                  pb::GetTopologyResponse* response) {
  return run(ctx, [this, response](const Caller& who, Millis now) {
    if (grpc::Status s = authorize_operator(who, "GetTopology"); !s.ok()) return s;
    controller_.topology(*response, now);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::GetTelemetry(grpc::CallbackServerContext* ctx,
                                                   const pb::GetTelemetryRequest* request,
                                                   pb::GetTelemetryResponse* response) {
  return run(ctx, [this, request, response](const Caller& who, Millis now) {
    if (grpc::Status s = authorize_reader(who, "GetTelemetry"); !s.ok()) return s;
    if (request->group_id() != 0) {
      // A tenant names only its own groups; another tenant's group reads as absent.
      const auto tenant = controller_.tenant_of_group(request->group_id());
      if (tenant && !authorize_tenant(who, "GetTelemetry", *tenant).ok()) {
        return grpc::Status(grpc::StatusCode::NOT_FOUND,
                            "no group " + std::to_string(request->group_id()));
      }
    }
    if (grpc::Status s = controller_.telemetry(*request, *response, now); !s.ok()) return s;
    scope_view(who, *response, [this](uint32_t id) { return controller_.tenant_of_group(id); });
    return grpc::Status::OK;
  });
}

}  // namespace epic::manager::service
