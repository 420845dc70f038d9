// The caller of one gRPC call (manager/service/caller.h): from the peer's verified client
// certificate when the server authenticates callers by certificate (mutual TLS), else the
// local operator.
// Threading: reads the call's context; call on the call's own thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>

#include "manager/service/caller.h"

namespace epic::manager::service {

enum class Authentication {
  kTransport,     // no client certificates: a unix socket (its file mode), or --insecure
  kCertificates,  // mutual TLS: every caller's certificate names its role
};

// The caller, or nullopt with `why` (PERMISSION_DENIED's message).
std::optional<Caller> identify(const grpc::ServerContextBase& ctx, Authentication auth,
                               std::string& why);

}  // namespace epic::manager::service
