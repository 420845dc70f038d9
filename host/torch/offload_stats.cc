#include "host/torch/offload_stats.h"

#include <cstdio>

namespace epic::torch_backend {

const char* to_string(Path p) {
  switch (p) {
    case Path::kOffloaded:
      return "offloaded";
    case Path::kFallback:
      return "fallback";
    case Path::kFailed:
      return "failed";
  }
  return "invalid";
}

OffloadStats::OffloadStats(std::string label, bool log_every_call)
    : label_(std::move(label)), log_every_call_(log_every_call) {}

void OffloadStats::record(const std::string& collective, Path path, const std::string& reason,
                          uint64_t bytes) {
  bool first_of_reason = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    StatRow* row = nullptr;
    for (auto& r : rows_) {
      if (r.collective == collective && r.path == path && r.reason == reason) {
        row = &r;
        break;
      }
    }
    if (row == nullptr) {
      rows_.push_back(StatRow{collective, path, reason, 0, 0});
      row = &rows_.back();
    }
    row->calls += 1;
    row->bytes += bytes;
    if (path == Path::kFallback) first_of_reason = logged_reasons_.insert(reason).second;
  }
  if (log_every_call_) {
    std::fprintf(stderr, "epic_torch: %s: %s %s%s%s (%llu bytes)\n", label_.c_str(),
                 collective.c_str(), to_string(path), reason.empty() ? "" : ": ", reason.c_str(),
                 static_cast<unsigned long long>(bytes));
  } else if (first_of_reason) {
    std::fprintf(stderr,
                 "epic_torch: %s: %s falls back to Gloo: %s (said once per reason; "
                 "EPIC_TORCH_LOG=1 logs every call)\n",
                 label_.c_str(), collective.c_str(), reason.c_str());
  }
}

std::vector<StatRow> OffloadStats::rows() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_;
}

void OffloadStats::set_state(const std::string& state, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = state;
  state_reason_ = why;
}

std::string OffloadStats::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

std::string OffloadStats::state_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_reason_;
}

}  // namespace epic::torch_backend
