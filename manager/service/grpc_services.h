// The two gRPC services of inc-manager on the callback API: IncManager (ranks, incctl) and
// IncAgentControl (the agents' streams). Every handler posts its work onto the controller's
// io_context thread and finishes the call from there, so the controller is never entered
// concurrently. Each call is authorised first (manager/service/authorize.h): the caller is
// identified on gRPC's thread, the rules that need the controller's state (whose group a
// DestroyGroup names) are applied on the io thread with the work.
// Threading: handlers run on gRPC's threads; the controller only on the io_context thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <optional>

#include "manager/service/agent_stream.h"
#include "manager/service/controller.h"
#include "manager/service/identify.h"
#include "proto/inc/v1/agent.grpc.pb.h"
#include "proto/inc/v1/manager.grpc.pb.h"

namespace epic::manager::service {

class ManagerApi final : public pb::IncManager::CallbackService {
 public:
  ManagerApi(boost::asio::io_context& io, Controller& controller, Clock clock, Authentication auth)
      : io_(io), controller_(controller), clock_(std::move(clock)), auth_(auth) {}

  grpc::ServerUnaryReactor* JoinGroup(grpc::CallbackServerContext* ctx,
                                      const pb::JoinGroupRequest* request,
                                      pb::JoinGroupResponse* response) override;
  grpc::ServerUnaryReactor* LeaveGroup(grpc::CallbackServerContext* ctx,
                                       const pb::LeaveGroupRequest* request,
                                       pb::LeaveGroupResponse* response) override;
  grpc::ServerUnaryReactor* DestroyGroup(grpc::CallbackServerContext* ctx,
                                         const pb::DestroyGroupRequest* request,
                                         pb::DestroyGroupResponse* response) override;
  grpc::ServerUnaryReactor* ListSwitches(grpc::CallbackServerContext* ctx,
                                         const pb::ListSwitchesRequest* request,
                                         pb::ListSwitchesResponse* response) override;
  grpc::ServerUnaryReactor* ListGroups(grpc::CallbackServerContext* ctx,
                                       const pb::ListGroupsRequest* request,
                                       pb::ListGroupsResponse* response) override;
  grpc::ServerUnaryReactor* GetMemory(grpc::CallbackServerContext* ctx,
                                      const pb::GetMemoryRequest* request,
                                      pb::GetMemoryResponse* response) override;
  grpc::ServerUnaryReactor* SetTenant(grpc::CallbackServerContext* ctx,
                                      const pb::SetTenantRequest* request,
                                      pb::SetTenantResponse* response) override;
  grpc::ServerUnaryReactor* ListTenants(grpc::CallbackServerContext* ctx,
                                        const pb::ListTenantsRequest* request,
                                        pb::ListTenantsResponse* response) override;
  grpc::ServerUnaryReactor* AddLink(grpc::CallbackServerContext* ctx,
                                    const pb::AddLinkRequest* request,
                                    pb::AddLinkResponse* response) override;
  grpc::ServerUnaryReactor* AttachRank(grpc::CallbackServerContext* ctx,
                                       const pb::AttachRankRequest* request,
                                       pb::AttachRankResponse* response) override;
  grpc::ServerUnaryReactor* GetTopology(grpc::CallbackServerContext* ctx,
                                        const pb::GetTopologyRequest* request,
                                        pb::GetTopologyResponse* response) override;
  grpc::ServerUnaryReactor* GetTelemetry(grpc::CallbackServerContext* ctx,
                                         const pb::GetTelemetryRequest* request,
                                         pb::GetTelemetryResponse* response) override;

 private:
  // The caller of `ctx`; nullopt after finishing `reactor` PERMISSION_DENIED (no role).
  std::optional<Caller> caller_or_deny(grpc::CallbackServerContext* ctx,
                                       grpc::ServerUnaryReactor* reactor) const;
  // Identifies the caller, then runs `work(caller, now) -> grpc::Status` on the controller's
  // thread and finishes the call with it (PERMISSION_DENIED at once for an unknown caller).
  template <class Work>
  grpc::ServerUnaryReactor* run(grpc::CallbackServerContext* ctx, Work work);

  boost::asio::io_context& io_;
  Controller& controller_;
  Clock clock_;
  Authentication auth_;
};

class AgentApi final : public pb::IncAgentControl::CallbackService {
 public:
  AgentApi(boost::asio::io_context& io, Controller& controller, Clock clock, Authentication auth)
      : io_(io), controller_(controller), clock_(std::move(clock)), auth_(auth) {}

  // The controller authorises the stream (agent_opened) and its Register (the switch id).
  grpc::ServerBidiReactor<pb::AgentMessage, pb::ManagerMessage>* Connect(
      grpc::CallbackServerContext* ctx) override {
    return new AgentStream(ctx, auth_, io_, controller_, clock_);  // deletes itself in OnDone
  }

 private:
  boost::asio::io_context& io_;
  Controller& controller_;
  Clock clock_;
  Authentication auth_;
};

}  // namespace epic::manager::service
