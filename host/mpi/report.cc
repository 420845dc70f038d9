#include "host/mpi/report.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string_view>

namespace epic::mpi {
namespace {

constexpr std::string_view kFailedMark = "failed: ";

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

const char* call_name(Call c) {
  switch (c) {
    case Call::kAllreduce:
      return "MPI_Allreduce";
    case Call::kReduce:
      return "MPI_Reduce";
    case Call::kBcast:
      return "MPI_Bcast";
    case Call::kBarrier:
      return "MPI_Barrier";
    case Call::kReduceScatterBlock:
      return "MPI_Reduce_scatter_block";
    case Call::kAllgather:
      return "MPI_Allgather";
  }
  return "?";
}

Report::Report() : log_(env_on("EPIC_MPI_LOG")) {}

void Report::say(const std::string& line) const {
  const std::string s = "epic-mpi: rank " + std::to_string(rank_) + ": " + line + "\n";
  std::fwrite(s.data(), 1, s.size(), stderr);
}

void Report::offloaded(Call c, const std::string& comm, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[static_cast<size_t>(c)].offloaded;
  if (log_) say(std::string(call_name(c)) + " on " + comm + " (" + what + "): offloaded to EPIC");
}

void Report::fell_back(Call c, const std::string& comm, const std::string& what,
                       const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[static_cast<size_t>(c)].fallback;
  ++reasons_[{c, why}];
  if (log_) say(std::string(call_name(c)) + " on " + comm + " (" + what + "): MPI runs it: " + why);
}

void Report::failed(Call c, const std::string& comm, const std::string& what,
                    const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[static_cast<size_t>(c)].failed;
  ++reasons_[{c, std::string(kFailedMark) + why}];
  say(std::string(call_name(c)) + " on " + comm + " (" + what + ") failed: " + why);
}

void Report::communicator(const std::string& comm, const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  comms_.emplace_back(comm, outcome);
  if (log_) say(comm + ": " + outcome);
}

void Report::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string line = "offloaded";
  std::string fell = "fell back";
  std::string bad = "failed";
  uint64_t total_fb = 0, total_bad = 0;
  for (size_t i = 0; i < kNumCalls; ++i) {
    const auto name = call_name(static_cast<Call>(i));
    const Counts& k = counts_[i];
    line += std::string(" ") + name + "=" + std::to_string(k.offloaded);
    if (k.fallback) fell += std::string(" ") + name + "=" + std::to_string(k.fallback);
    if (k.failed) bad += std::string(" ") + name + "=" + std::to_string(k.failed);
    total_fb += k.fallback;
    total_bad += k.failed;
  }
  line += total_fb ? "; " + fell : "; fell back none";
  line += total_bad ? "; " + bad : "; failed none";
  say("summary: " + line + " (" + std::to_string(comms_.size()) + " communicators)");
  for (const auto& [key, n] : reasons_) {
    std::string line = std::to_string(n) + " x " + call_name(key.first);
    line += key.second.rfind(kFailedMark, 0) == 0 ? " " : " fell back: ";
    say(line + key.second);
  }
  for (const auto& [comm, outcome] : comms_) say(std::string(comm).append(": ").append(outcome));

  const char* path = std::getenv("EPIC_MPI_REPORT");
  if (!path || !*path) return;
  std::string file;
  for (std::string_view p(path); !p.empty(); p.remove_prefix(1)) {
    if (p.size() >= 2 && p[0] == '%' && p[1] == 'r') {
      file += std::to_string(rank_);
      p.remove_prefix(1);
    } else {
      file += p[0];
    }
  }
  std::ofstream out(file);
  out << json() << "\n";
  if (!out) say("EPIC_MPI_REPORT: cannot write " + file);
}

std::string Report::json() const {
  std::string j = "{\"rank\": " + std::to_string(rank_);
  const char* kinds[] = {"offloaded", "fallback", "failed"};
  for (int kind = 0; kind < 3; ++kind) {
    j += std::string(", \"") + kinds[kind] + "\": {";
    for (size_t i = 0; i < kNumCalls; ++i) {
      const Counts& k = counts_[i];
      const uint64_t v = kind == 0 ? k.offloaded : kind == 1 ? k.fallback : k.failed;
      j +=
          (i ? ", " : "") + json_string(call_name(static_cast<Call>(i))) + ": " + std::to_string(v);
    }
    j += "}";
  }
  j += ", \"reasons\": [";
  bool first = true;
  for (const auto& [key, n] : reasons_) {
    const bool failure = key.second.rfind(kFailedMark, 0) == 0;
    j += std::string(first ? "" : ", ") + "{\"call\": " + json_string(call_name(key.first)) +
         ", \"failed\": " + (failure ? "true" : "false") +
         ", \"why\": " + json_string(failure ? key.second.substr(kFailedMark.size()) : key.second) +
         ", \"count\": " + std::to_string(n) + "}";
    first = false;
  }
  j += "], \"communicators\": [";
  first = true;
  for (const auto& [comm, outcome] : comms_) {
    j += std::string(first ? "" : ", ") + "{\"name\": " + json_string(comm) +
         ", \"outcome\": " + json_string(outcome) + "}";
    first = false;
  }
  return j + "]}";
}

}  // namespace epic::mpi
