#include "host/collective/plan.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "host/collective/layout.h"

namespace epic::host {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::optional<uint64_t> number(std::string_view s) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<vocab::CollectiveType> parse_type(std::string_view name) {
  for (uint8_t code = 1; code <= 6; ++code) {
    const auto t = static_cast<vocab::CollectiveType>(code);
    if (vocab::to_string(t) == name) return t;
  }
  return std::nullopt;
}

bool uses_op(vocab::CollectiveType t) {
  return t == vocab::CollectiveType::kAllReduce || t == vocab::CollectiveType::kReduce ||
         t == vocab::CollectiveType::kReduceScatter;
}
bool uses_root(vocab::CollectiveType t) {
  return t == vocab::CollectiveType::kReduce || t == vocab::CollectiveType::kBroadcast;
}

// One item; "" or why it is not one.
std::string parse_item(std::string_view item, vocab::CollectiveDescriptor& d) {
  const std::vector<std::string_view> f = split(item, ':');
  const auto type = parse_type(f[0]);
  if (!type) {
    return "unknown primitive '" + std::string(f[0]) +
           "' (allreduce, reduce, broadcast, reduce_scatter, allgather, barrier)";
  }
  d = {};
  d.type = *type;
  bool has_dtype = false, has_op = false, has_root = false, has_count = false;
  const std::string_view prim = f[0];
  for (size_t i = 1; i < f.size(); ++i) {
    const std::string_view v = f[i];
    const std::string field(v);
    if (*type == vocab::CollectiveType::kBarrier)
      return "barrier takes no fields, got '" + field + "'";
    if (auto dt = vocab::parse_dtype(v)) {
      if (has_dtype) return "two dtypes in '" + std::string(item) + "'";
      d.dtype = *dt;
      has_dtype = true;
    } else if (auto op = vocab::parse_reduce_op(v)) {
      if (!uses_op(*type)) return std::string(prim) + " reduces nothing: drop '" + field + "'";
      if (has_op) return "two ops in '" + std::string(item) + "'";
      d.op = *op;
      has_op = true;
    } else if (v.starts_with("root=")) {
      if (!uses_root(*type)) return std::string(prim) + " has no root: drop '" + field + "'";
      const auto r = number(v.substr(5));
      if (!r || *r > UINT16_MAX) return "bad root in '" + field + "'";
      if (has_root) return "two roots in '" + std::string(item) + "'";
      d.root = static_cast<uint16_t>(*r);
      has_root = true;
    } else if (auto n = number(v.starts_with("count=") ? v.substr(6) : v)) {
      if (*n > UINT32_MAX) return "count " + field + " does not fit 32 bits";
      if (has_count) return "two counts in '" + std::string(item) + "'";
      d.count = static_cast<uint32_t>(*n);
      has_count = true;
    } else {
      return "'" + field + "' in '" + std::string(item) +
             "' is not a dtype (int32 fp32 fp16 bf16), op (sum min max), root=R or count";
    }
  }
  if (*type == vocab::CollectiveType::kBarrier) return "";
  if (!has_dtype) return std::string(prim) + " needs a dtype: '" + std::string(item) + "'";
  if (uses_op(*type) && !has_op) {
    return std::string(prim) + " needs an op: '" + std::string(item) + "'";
  }
  if (uses_root(*type) && !has_root) {
    return std::string(prim) + " needs root=R: '" + std::string(item) + "'";
  }
  if (!has_count) return std::string(prim) + " needs a count: '" + std::string(item) + "'";
  return "";
}

}  // namespace

ParsedPlan parse_plan(std::string_view text) {
  ParsedPlan p;
  if (text.empty()) {
    p.error = "the plan is empty";
    return p;
  }
  const std::vector<std::string_view> items = split(text, ',');
  for (size_t i = 0; i < items.size(); ++i) {
    vocab::CollectiveDescriptor d;
    std::string why = parse_item(items[i], d);
    if (!why.empty()) {
      p.error = "plan item " + std::to_string(i) + ": " + why;
      p.plan.clear();
      return p;
    }
    p.plan.push_back(d);
  }
  return p;
}

std::string format_collective(const vocab::CollectiveDescriptor& d) {
  std::string s(vocab::to_string(d.type));
  if (d.type == vocab::CollectiveType::kBarrier) return s;
  s += ':';
  s += vocab::to_string(d.dtype);
  if (uses_op(d.type)) {
    s += ':';
    s += vocab::to_string(d.op);
  }
  if (uses_root(d.type)) s += ":root=" + std::to_string(d.root);
  s += ':' + std::to_string(d.count);
  return s;
}

std::string check_plan(const std::vector<vocab::CollectiveDescriptor>& plan, uint16_t ranks) {
  for (size_t i = 0; i < plan.size(); ++i) {
    const vocab::CollectiveDescriptor& d = plan[i];
    const std::string where = "plan item " + std::to_string(i) + " (" + format_collective(d) + ")";
    if (uses_root(d.type) && d.root >= ranks) {
      return where + ": root " + std::to_string(d.root) + " is not a rank of a group of " +
             std::to_string(ranks);
    }
    // Only a Reduce's result depends on the rank, and the root's is the larger.
    const uint64_t largest = std::max(send_bytes(d, ranks), recv_bytes(d, d.root, ranks));
    if (largest > kMaxPlanBufferBytes) {
      return where + ": a buffer of " + std::to_string(largest) + " bytes is above the limit of " +
             std::to_string(kMaxPlanBufferBytes);
    }
  }
  return "";
}

}  // namespace epic::host
