#include "manager/service/identify.h"

#include <grpc/grpc_security_constants.h>

namespace epic::manager::service {
namespace {

std::vector<std::string> values(const grpc::AuthContext& auth, const char* property) {
  std::vector<std::string> out;
  for (const grpc::string_ref& v : auth.FindPropertyValues(property)) {
    out.emplace_back(v.data(), v.size());
  }
  return out;
}

}  // namespace

std::optional<Caller> identify(const grpc::ServerContextBase& ctx, Authentication auth,
                               std::string& why) {
  if (auth == Authentication::kTransport) return Caller{Role::kLocal, ""};
  const std::shared_ptr<const grpc::AuthContext> a = ctx.auth_context();
  if (!a || !a->IsPeerAuthenticated()) {
    why = "the call carries no verified client certificate";
    return std::nullopt;
  }
  return caller_from_certificate(values(*a, GRPC_PEER_URI_PROPERTY_NAME),
                                 values(*a, GRPC_X509_CN_PROPERTY_NAME), why);
}

}  // namespace epic::manager::service
