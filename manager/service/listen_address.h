// The address inc-manager listens on (--listen), checked before gRPC binds it, so that a bad or
// busy address is refused at start with a message naming it — never silently rebound: gRPC
// would unlink a unix socket another manager is serving (taking it over), share a TCP port with
// another manager (SO_REUSEPORT: split brain), or truncate a port above 65535 to 16 bits.
// Thread-safety: pure functions, except that check_listen_address connects to a unix socket
// path to see whether something serves it.
#pragma once

#include <string>

namespace epic::manager::service {

// "" when `listen` may be bound: unix:/path (a path no process is serving: a stale socket file
// is fine, gRPC replaces it) or host:port / [v6]:port with a port in 0..65535 (0: any free
// port). Otherwise what is wrong, naming the address.
std::string check_listen_address(const std::string& listen);

}  // namespace epic::manager::service
