#include "host/torch/pg_config.h"

#include <charconv>
#include <cstring>

extern char** environ;

namespace epic::torch_backend {

namespace {

constexpr uint32_t kMaxQpn = (1u << 24) - 1;

// The backend decides these per process group; a value in the environment is set aside.
constexpr const char* kPerGroupKeys[] = {"INC_RANK", "INC_RANKS", "INC_GROUP", "INC_HOST_QPN"};

}  // namespace

std::map<std::string, std::string> inc_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr || std::strncmp(*e, "INC_", 4) != 0) continue;
    env.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return env;
}

PgConfig pg_config(std::map<std::string, std::string> env, const PgIdentity& id) {
  PgConfig r;
  if (env.count("INC_MANAGER") == 0 || env["INC_MANAGER"].empty()) {
    r.error =
        "INC_MANAGER is not set: the epic backend joins every process group through "
        "inc-manager (INC_MANAGER=unix:/path or host:port; docs/pytorch.md)";
    return r;
  }
  for (const char* key : kPerGroupKeys) {
    if (env.erase(key) != 0 && std::strcmp(key, "INC_GROUP") != 0) {
      r.notes += std::string(r.notes.empty() ? "" : "; ") + key + " ignored (set per group)";
    }
  }
  auto fallback = env.find("INC_HOST_FALLBACK");
  if (fallback != env.end() && fallback->second != "0") {
    r.notes += std::string(r.notes.empty() ? "" : "; ") + "INC_HOST_FALLBACK=" + fallback->second +
               " ignored (the backend's fallback is Gloo)";
  }
  env["INC_HOST_FALLBACK"] = "0";
  auto qpn = env.find("INC_QPN");
  if (qpn != env.end()) {
    uint32_t base = 0;
    const char* b = qpn->second.data();
    const char* e = b + qpn->second.size();
    const int radix = qpn->second.rfind("0x", 0) == 0 ? 16 : 10;
    if (radix == 16) b += 2;
    auto [ptr, ec] = std::from_chars(b, e, base, radix);
    if (ec != std::errc() || ptr != e || base == 0 || base > kMaxQpn) {
      r.error = "INC_QPN=" + qpn->second + ": expected the base QPN 1..16777215";
      return r;
    }
    const uint64_t mine = uint64_t{base} + uint64_t{kQpnStride} * id.pg_index;
    if (mine + kQpnStride - 1 > kMaxQpn) {
      r.error = "INC_QPN=" + qpn->second + ": process group " + std::to_string(id.pg_index) +
                " would use QPN " + std::to_string(mine) +
                ", beyond the 24-bit QPN space (INC_QPN + 4 * process group index)";
      return r;
    }
    qpn->second = std::to_string(mine);
  }
  env["INC_RANK"] = std::to_string(id.rank);
  env["INC_RANKS"] = std::to_string(id.size);
  env["INC_GROUP"] = id.group;
  inc::ConfigResult c = inc::config_from_pairs(env);
  if (!c.ok()) {
    r.error = c.error;
    return r;
  }
  r.config = c.config;
  return r;
}

PgConfig pg_config_from_env(const PgIdentity& id) { return pg_config(inc_environment(), id); }

}  // namespace epic::torch_backend
