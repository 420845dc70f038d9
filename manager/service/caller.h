// Who calls inc-manager, and in which role (docs/security.md, "Roles").
//
// With mutual TLS every caller presents a certificate the manager's CA signed; its role is the
// one the certificate names:
//   admin          the operator: every RPC, every tenant's groups (no switch stream)
//   tenant:<T>     create, join, leave, destroy and read tenant T's groups only
//   agent:<S>      the IncAgent of switch S: its Connect stream, registering as S only
// named by a URI subject alternative name "epic:<role>" (e.g. URI:epic:tenant:blue), or, when
// the certificate has no epic: URI, by its subject common name (CN=tenant:blue). A certificate
// that names no role, or two different ones, is refused.
//
// Without client certificates (a unix socket, or --insecure) the transport is the only
// authorisation: every caller is the local operator (kLocal), who may do everything, including
// streaming as any switch; the socket's file mode decides who that is.
// Threading: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace epic::manager::service {

enum class Role { kLocal, kAdmin, kTenant, kAgent };

struct Caller {
  Role role = Role::kLocal;
  std::string name{};  // the tenant (kTenant) or the switch (kAgent)

  // "admin", "tenant:blue", "agent:leaf0", "the local operator (no client certificate)".
  std::string describe() const;
  bool operator==(const Caller&) const = default;
};

// "admin" | "tenant:<T>" | "agent:<S>" (T and S non-empty, [A-Za-z0-9._-], at most 64);
// nullopt for anything else.
std::optional<Caller> parse_role(std::string_view text);

// The caller a verified certificate names: its "epic:" URI SANs decide; without one, its CN.
// On failure `why` says what the certificate named and what a role looks like.
std::optional<Caller> caller_from_certificate(const std::vector<std::string>& uris,
                                              const std::vector<std::string>& common_names,
                                              std::string& why);

}  // namespace epic::manager::service
