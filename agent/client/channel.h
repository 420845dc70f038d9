// The gRPC channel to inc-manager: plain or TLS (root CA, optional client certificate for
// mutual TLS), a private subchannel pool and reconnect bounds matching the agent's own backoff
// (gRPC's default reconnect backoff grows to 120 s and is shared between channels to the
// same address, which would hide the agent's bounds), optional keepalive.
// Threading: call from the agent's thread.
#pragma once

#include <grpcpp/channel.h>

#include <memory>
#include <string>

#include "agent/client/agent_options.h"

namespace epic::agent {

struct ChannelResult {
  std::shared_ptr<grpc::Channel> channel;  // null on error
  std::string error;                       // e.g. which TLS file cannot be read
};

ChannelResult make_channel(const AgentOptions& o);

}  // namespace epic::agent
