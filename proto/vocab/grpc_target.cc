#include "proto/vocab/grpc_target.h"

namespace epic::vocab {

bool is_local_grpc_target(std::string_view target) {
  if (target.rfind("unix:", 0) == 0 || target.rfind("unix-abstract:", 0) == 0) return true;
  if (target.rfind("ipv4:", 0) == 0) target.remove_prefix(5);  // gRPC's scheme prefixes
  if (target.rfind("ipv6:", 0) == 0) target.remove_prefix(5);
  const auto colon = target.rfind(':');
  const std::string_view host = colon == std::string_view::npos ? target : target.substr(0, colon);
  return host == "localhost" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

}  // namespace epic::vocab
