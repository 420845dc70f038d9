// The controller's handle on one IncAgent stream: send messages in order, end the stream.
// Both are safe to call after the stream is gone (they do nothing), so the controller never
// has to know whether gRPC has already torn the call down.
// caller() is who opened the stream (manager/service/identify.h); null when the certificate
// named no role, identity_error() then says why.
// Threading: callable from any thread.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "manager/service/caller.h"
#include "proto/inc/v1/agent.pb.h"

namespace epic::manager::service {

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  virtual void send(const ::epic::inc::v1::ManagerMessage& message) = 0;
  virtual void close(const grpc::Status& status) = 0;
  virtual std::string peer() const = 0;
  virtual const Caller* caller() const = 0;
  virtual std::string identity_error() const = 0;
};

}  // namespace epic::manager::service
