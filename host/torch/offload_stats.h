// OffloadStats: what the "epic" PyTorch backend did with each call of one process group —
// offloaded to EPIC, or handed to Gloo and why — and the logging of those decisions.
//
// SHARP's users most often cannot tell whether the offload happened; this unit is the answer:
// counters per (collective, path, reason), read by Python (epic_torch.counters()) and printed at
// exit, one stderr line the first time a reason sends a collective to Gloo, and, with
// EPIC_TORCH_LOG=1, one line per decision.
// Threading: every method may be called from any thread (one mutex; calls are per collective,
// not per packet).
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace epic::torch_backend {

enum class Path : uint8_t { kOffloaded, kFallback, kFailed };
const char* to_string(Path p);

struct StatRow {
  std::string collective;  // "allreduce", "_allgather_base", ...
  Path path = Path::kOffloaded;
  std::string reason;  // why it fell back or failed ("" when offloaded)
  uint64_t calls = 0;
  uint64_t bytes = 0;  // bytes of this rank's tensor(s): the input of reductions and gathers
};

class OffloadStats {
 public:
  // `label` names the group in log lines: "pg 1 (torch/4f1c.../pg1, rank 0 of 2)".
  OffloadStats(std::string label, bool log_every_call);

  // Counts one call; logs it when log_every_call, and the first fallback of each reason.
  void record(const std::string& collective, Path path, const std::string& reason, uint64_t bytes);
  std::vector<StatRow> rows() const;
  const std::string& label() const { return label_; }
  // The group's own state, shown by epic_torch.counters(): "inc" (offloading), "gloo"
  // (every call falls back: the join failed, see `why`), "closed".
  void set_state(const std::string& state, const std::string& why);
  std::string state() const;
  std::string state_reason() const;

 private:
  const std::string label_;
  const bool log_every_call_;
  mutable std::mutex mu_;
  std::vector<StatRow> rows_;
  std::set<std::string> logged_reasons_;
  std::string state_ = "joining";
  std::string state_reason_;
};

}  // namespace epic::torch_backend
