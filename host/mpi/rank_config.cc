#include "host/mpi/rank_config.h"

#include <cstdlib>
#include <fstream>
#include <string_view>

extern char** environ;  // NOLINT: POSIX

namespace epic::mpi {
namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// EPIC_MPI_CONFIG's template: %r is the rank in MPI_COMM_WORLD, %% a percent sign.
std::string expand(const std::string& tmpl, int world_rank) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '%' && i + 1 < tmpl.size() && tmpl[i + 1] == 'r') {
      out += std::to_string(world_rank);
      ++i;
    } else if (tmpl[i] == '%' && i + 1 < tmpl.size() && tmpl[i + 1] == '%') {
      out += '%';
      ++i;
    } else {
      out += tmpl[i];
    }
  }
  return out;
}

// libinc's file format: KEY=VALUE lines, '#' comments, an optional `export `.
std::string read_file(const std::string& path, std::map<std::string, std::string>& pairs) {
  std::ifstream in(path);
  if (!in) return "EPIC_MPI_CONFIG: cannot read " + path;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string s = trim(line.substr(0, line.find('#')));
    if (s.empty()) continue;
    if (s.rfind("export ", 0) == 0) s = trim(s.substr(7));
    const auto eq = s.find('=');
    std::string where = path;
    where += ':';
    where += std::to_string(n);
    where += ": ";
    if (eq == std::string::npos) return where.append("expected KEY=VALUE, got '").append(s) + "'";
    std::string key = trim(s.substr(0, eq));
    if (key.rfind("INC_", 0) != 0) {
      return where + key + " is not an INC_* key (docs/libinc.md)";
    }
    pairs[key] = trim(s.substr(eq + 1));
  }
  return "";
}

// QPN `key` moved to communicator slot `slot`; "" or the error.
std::string shift_qpn(std::map<std::string, std::string>& pairs, const char* key, uint32_t slot) {
  auto it = pairs.find(key);
  if (it == pairs.end()) return "";
  char* end = nullptr;
  const unsigned long base = std::strtoul(it->second.c_str(), &end, 0);
  if (it->second.empty() || *end != '\0') {
    return std::string(key) + "=" + it->second + ": expected a number";
  }
  const unsigned long qpn = base + static_cast<unsigned long>(slot) * kQpnsPerComm;
  if (qpn + kQpnsPerComm - 1 > 0xFFFFFF) {
    return std::string(key) + "=" + it->second + ": communicator " + std::to_string(slot) +
           " would need QPN " + std::to_string(qpn) + " (24 bits; each communicator takes " +
           std::to_string(kQpnsPerComm) + ")";
  }
  it->second = std::to_string(qpn);
  return "";
}

}  // namespace

RankEnv read_rank_env(int world_rank) {
  RankEnv env;
  env.source = "environment";
  if (const char* tmpl = std::getenv("EPIC_MPI_CONFIG"); tmpl && *tmpl) {
    const std::string path = expand(tmpl, world_rank);
    env.error = read_file(path, env.pairs);
    env.source = path + " + environment";
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (kv.rfind("INC_", 0) != 0) continue;
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.pairs[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  return env;
}

GroupPairs group_pairs(const RankEnv& env, int rank, int size, const std::string& group,
                       uint32_t slot) {
  GroupPairs g;
  g.pairs = env.pairs;
  g.pairs["INC_RANK"] = std::to_string(rank);
  g.pairs["INC_RANKS"] = std::to_string(size);
  if (env.managed()) g.pairs["INC_GROUP"] = group;
  // A call returns only once this rank's uploads are acknowledged (rank_config.h).
  g.pairs.emplace("INC_COPY_SEND_BYTES", "0");
  for (const char* key : {"INC_QPN", "INC_HOST_QPN"}) {
    if (g.error.empty()) g.error = shift_qpn(g.pairs, key, slot);
  }
  return g;
}

}  // namespace epic::mpi
