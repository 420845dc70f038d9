// The controller's handle on one IncAgent stream: send messages in order, end the stream.
// Both are safe to call after the stream is gone (they do nothing), so the controller never
// has to know whether gRPC has already torn the call down.
// Threading: callable from any thread.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "proto/inc/v1/agent.pb.h"

namespace epic::manager::service {

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  virtual void send(const ::epic::inc::v1::ManagerMessage& message) = 0;
  virtual void close(const grpc::Status& status) = 0;
  virtual std::string peer() const = 0;
};

}  // namespace epic::manager::service
