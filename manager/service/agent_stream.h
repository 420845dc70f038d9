// One IncAgent's Connect stream on the server side: a gRPC callback reactor that keeps one
// read outstanding (each message is posted to the controller's thread) and writes the
// controller's messages one at a time, in order. AgentLink is the controller's handle on it
// (AgentChannel); it outlives the reactor and turns into a no-op when the call is over.
// Threading: reactions run on gRPC's threads; AgentLink may be called from any thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <boost/asio/io_context.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "manager/service/agent_channel.h"
#include "manager/service/controller.h"
#include "manager/service/identify.h"
#include "proto/inc/v1/agent.grpc.pb.h"

namespace epic::manager::service {

class AgentStream;

class AgentLink final : public AgentChannel {
 public:
  AgentLink(std::string peer, std::optional<Caller> caller, std::string identity_error)
      : peer_(std::move(peer)),
        caller_(std::move(caller)),
        identity_error_(std::move(identity_error)) {}
  void send(const pb::ManagerMessage& message) override;
  void close(const grpc::Status& status) override;
  std::string peer() const override { return peer_; }
  const Caller* caller() const override { return caller_ ? &*caller_ : nullptr; }
  std::string identity_error() const override { return identity_error_; }

 private:
  friend class AgentStream;
  std::mutex mu_;
  AgentStream* stream_ = nullptr;  // null once the call is done
  const std::string peer_;
  const std::optional<Caller> caller_;
  const std::string identity_error_;
};

using Clock = std::function<Millis()>;

class AgentStream final : public grpc::ServerBidiReactor<pb::AgentMessage, pb::ManagerMessage> {
 public:
  AgentStream(grpc::CallbackServerContext* context, Authentication auth,
              boost::asio::io_context& io, Controller& controller, Clock clock);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  friend class AgentLink;
  void enqueue(const pb::ManagerMessage& message);
  void finish(const grpc::Status& status);

  boost::asio::io_context& io_;
  Controller& controller_;
  Clock clock_;
  std::shared_ptr<AgentLink> link_;
  pb::AgentMessage in_;
  std::mutex mu_;                       // guards the fields below
  std::deque<pb::ManagerMessage> out_;  // out_.front() is being written while writing_
  bool writing_ = false;
  bool finished_ = false;
};

}  // namespace epic::manager::service
