// inc-manager's gRPC address (its --listen, and the target the IncAgent, libinc and incctl dial)
// and the one rule every process applies to it: plaintext only where nobody else can listen in —
// a unix socket (unix:/path, unix-abstract:name) or a loopback host (localhost, 127.*, [::1]).
// Anywhere else the server needs its certificate and the clients TLS, unless the operator says
// plaintext out loud (--insecure, INC_MANAGER_INSECURE=1, manager.insecure): never a silent
// downgrade.
// Thread-safe: a pure function.
#pragma once

#include <string_view>

namespace epic::vocab {

// True for unix:…, unix-abstract:…, and host:port with host localhost, 127.* or [::1].
bool is_local_grpc_target(std::string_view target);

}  // namespace epic::vocab
