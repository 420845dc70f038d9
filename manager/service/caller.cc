#include "manager/service/caller.h"

namespace epic::manager::service {
namespace {

constexpr std::string_view kUriScheme = "epic:";
constexpr size_t kMaxNameChars = 64;

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameChars) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string Caller::describe() const {
  switch (role) {
    case Role::kLocal:
      return "the local operator (no client certificate)";
    case Role::kAdmin:
      return "admin";
    case Role::kTenant:
      return "tenant:" + name;
    case Role::kAgent:
      return "agent:" + name;
  }
  return "?";
}

std::optional<Caller> parse_role(std::string_view text) {
  if (text == "admin") return Caller{Role::kAdmin, ""};
  for (auto [prefix, role] : {std::pair{std::string_view("tenant:"), Role::kTenant},
                              std::pair{std::string_view("agent:"), Role::kAgent}}) {
    if (text.substr(0, prefix.size()) != prefix) continue;
    std::string_view name = text.substr(prefix.size());
    if (!valid_name(name)) return std::nullopt;
    return Caller{role, std::string(name)};
  }
  return std::nullopt;
}

std::optional<Caller> caller_from_certificate(const std::vector<std::string>& uris,
                                              const std::vector<std::string>& common_names,
                                              std::string& why) {
  std::vector<std::string> epic_uris;
  for (const auto& u : uris) {
    if (u.substr(0, kUriScheme.size()) == kUriScheme) epic_uris.push_back(u);
  }
  const std::string shape = "a role is admin, tenant:<T> or agent:<S> (docs/security.md)";
  if (!epic_uris.empty()) {
    std::optional<Caller> found;
    for (const auto& u : epic_uris) {
      auto c = parse_role(std::string_view(u).substr(kUriScheme.size()));
      if (!c) {
        why = "the client certificate's URI " + u + " names no EPIC role; " + shape;
        return std::nullopt;
      }
      if (found && !(*found == *c)) {
        why = "the client certificate names two roles (" + joined(epic_uris) + "); it may name one";
        return std::nullopt;
      }
      found = c;
    }
    return found;
  }
  if (common_names.size() == 1) {
    if (auto c = parse_role(common_names.front())) return c;
  }
  why = "the client certificate (CN=" + joined(common_names) +
        ") names no EPIC role: give it a CN or a URI SAN epic:<role>; " + shape;
  return std::nullopt;
}

}  // namespace epic::manager::service
