#include "manager/service/grpc_services.h"

#include <boost/asio/post.hpp>

namespace epic::manager::service {

template <class Work>
grpc::ServerUnaryReactor* ManagerApi::run(grpc::CallbackServerContext* ctx, Work work) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  boost::asio::post(
      io_, [this, reactor, work = std::move(work)]() mutable { reactor->Finish(work(clock_())); });
  return reactor;
}

grpc::ServerUnaryReactor* ManagerApi::JoinGroup(grpc::CallbackServerContext* ctx,
                                                const pb::JoinGroupRequest* request,
                                                pb::JoinGroupResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
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
  return run(ctx, [this, request, response](Millis now) {
    return controller_.leave(*request, *response, now);
  });
}

grpc::ServerUnaryReactor* ManagerApi::DestroyGroup(grpc::CallbackServerContext* ctx,
                                                   const pb::DestroyGroupRequest* request,
                                                   pb::DestroyGroupResponse* response) {
  return run(ctx, [this, request, response](Millis now) {
    return controller_.destroy(*request, *response, now);
  });
}

grpc::ServerUnaryReactor* ManagerApi::ListSwitches(grpc::CallbackServerContext* ctx,
                                                   const pb::ListSwitchesRequest*,
                                                   pb::ListSwitchesResponse* response) {
  return run(ctx, [this, response](Millis now) {
    controller_.list_switches(*response, now);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::ListGroups(grpc::CallbackServerContext* ctx,
                                                 const pb::ListGroupsRequest* request,
                                                 pb::ListGroupsResponse* response) {
  return run(ctx, [this, request, response](Millis) {
    controller_.list_groups(*request, *response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::GetMemory(grpc::CallbackServerContext* ctx,
                                                const pb::GetMemoryRequest*,
                                                pb::GetMemoryResponse* response) {
  return run(ctx, [this, response](Millis) {
    controller_.memory(*response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::SetTenant(grpc::CallbackServerContext* ctx,
                                                const pb::SetTenantRequest* request,
                                                pb::SetTenantResponse*) {
  return run(ctx, [this, request](Millis now) { return controller_.set_tenant(*request, now); });
}

grpc::ServerUnaryReactor* ManagerApi::ListTenants(grpc::CallbackServerContext* ctx,
                                                  const pb::ListTenantsRequest*,
                                                  pb::ListTenantsResponse* response) {
  return run(ctx, [this, response](Millis) {
    controller_.list_tenants(*response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::AddLink(grpc::CallbackServerContext* ctx,
                                              const pb::AddLinkRequest* request,
                                              pb::AddLinkResponse*) {
  return run(ctx, [this, request](Millis now) { return controller_.add_link(*request, now); });
}

grpc::ServerUnaryReactor* ManagerApi::AttachRank(grpc::CallbackServerContext* ctx,
                                                 const pb::AttachRankRequest* request,
                                                 pb::AttachRankResponse*) {
  return run(ctx, [this, request](Millis now) { return controller_.attach_rank(*request, now); });
}

grpc::ServerUnaryReactor* ManagerApi::GetTopology(grpc::CallbackServerContext* ctx,
                                                  const pb::GetTopologyRequest*,
                                                  pb::GetTopologyResponse* response) {
  return run(ctx, [this, response](Millis now) {
    controller_.topology(*response, now);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ManagerApi::GetTelemetry(grpc::CallbackServerContext* ctx,
                                                   const pb::GetTelemetryRequest*,
                                                   pb::GetTelemetryResponse* response) {
  return run(ctx, [this, response](Millis now) {
    controller_.telemetry(*response, now);
    return grpc::Status::OK;
  });
}

}  // namespace epic::manager::service
