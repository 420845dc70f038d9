#include "agent/core/group_table.h"

#include <algorithm>
#include <utility>

#include "proto/vocab/addr.h"

namespace epic::agent {
namespace {

std::string group_name(uint32_t id) { return "group " + std::to_string(id); }

std::string endpoint_text(const vocab::Endpoint& e) {
  return vocab::format_ipv4(e.ipv4) + " qpn " + vocab::hex(e.qpn) + " mac " +
         vocab::format_mac(e.mac);
}

}  // namespace

std::string differences(const vocab::GroupContext& a, const vocab::GroupContext& b) {
  std::vector<std::string> d;
  const auto number = [&](const char* name, uint64_t x, uint64_t y) {
    if (x != y)
      d.push_back(std::string(name) + " " + std::to_string(x) + " → " + std::to_string(y));
  };
  number("ranks", a.num_ranks, b.num_ranks);
  number("initial_psn", a.initial_psn, b.initial_psn);
  number("window", a.window, b.window);
  number("pmtu", a.pmtu, b.pmtu);
  number("children", a.children.size(), b.children.size());
  for (size_t i = 0; i < std::min(a.children.size(), b.children.size()); ++i) {
    const vocab::ChildLink &x = a.children[i], &y = b.children[i];
    const std::string at = vocab::index("children", i);
    if (x.port != y.port) d.push_back(at + ".port");
    if (x.is_rank != y.is_rank || x.first_rank != y.first_rank || x.rank_count != y.rank_count)
      d.push_back(at + " ranks");
    if (!(x.remote == y.remote))
      d.push_back(at + ".remote " + endpoint_text(x.remote) + " → " + endpoint_text(y.remote));
    if (!(x.local == y.local))
      d.push_back(at + ".local " + endpoint_text(x.local) + " → " + endpoint_text(y.local));
  }
  if (a.parent.has_value() != b.parent.has_value()) {
    d.push_back(a.parent ? "parent removed" : "parent added");
  } else if (a.parent && !(*a.parent == *b.parent)) {
    d.push_back("parent");
  }
  std::string s;
  for (const auto& x : d) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "nothing" : s;
}

GroupTable::GroupTable(vocab::SwitchView sw, SwitchLimits limits,
                       std::vector<vocab::GroupContext> static_groups, GroupSink& sink)
    : sw_(std::move(sw)), limits_(limits), sink_(sink) {
  for (auto& g : static_groups) {
    const uint64_t bytes = bytes_for(g);
    entries_.push_back({std::move(g), bytes, true});
  }
}

const GroupEntry* GroupTable::find(uint32_t id) const {
  for (const auto& e : entries_) {
    if (e.config.group_id == id) return &e;
  }
  return nullptr;
}

uint64_t GroupTable::bytes_in_use() const {
  uint64_t n = 0;
  for (const auto& e : entries_) n += e.memory_bytes;
  return n;
}

uint64_t GroupTable::static_bytes() const {
  uint64_t n = 0;
  for (const auto& e : entries_) n += e.is_static ? e.memory_bytes : 0;
  return n;
}

uint64_t GroupTable::manager_capacity() const {
  return limits_.memory_capacity_bytes - std::min(limits_.memory_capacity_bytes, static_bytes());
}

std::string GroupTable::refuse_static(const GroupEntry& e, const char* what) const {
  return group_name(e.config.group_id) +
         " is a static group of incd's configuration file (groups[]); inc-manager cannot " + what +
         " it";
}

std::string GroupTable::check_grant(const vocab::GroupContext& g, uint64_t memory_bytes) const {
  const std::string name = group_name(g.group_id);
  if (std::string err = vocab::grant_error(g, memory_bytes); !err.empty()) {
    return name + ": " + err;
  }
  const uint64_t used = bytes_in_use();
  const uint64_t cap = limits_.memory_capacity_bytes;
  if (memory_bytes > cap - std::min(used, cap)) {
    return name + " needs " + std::to_string(memory_bytes) + " bytes, " +
           std::to_string(cap - std::min(used, cap)) + " free (capacity " + std::to_string(cap) +
           ", " + std::to_string(used) + " in use, " + std::to_string(static_bytes()) +
           " by static groups)";
  }
  return "";
}

std::string GroupTable::apply(std::vector<GroupEntry> next) {
  std::vector<vocab::GroupContext> set;
  for (const auto& e : next) {
    if (e.memory_bytes > 0) set.push_back(e.config);
  }
  if (std::string err = sink_.set_groups(set); !err.empty()) return "the datapath refused: " + err;
  entries_ = std::move(next);
  return "";
}

std::string GroupTable::install(const vocab::GroupContextMsg& context, uint64_t memory_bytes) {
  const GroupEntry* same_id = context.has_id() ? find(context.id()) : nullptr;
  if (same_id && same_id->is_static) return refuse_static(*same_id, "replace");
  // Checked like a groups[] entry, against every other group's endpoints.
  vocab::ContextErrors errors;
  vocab::ContextReader validator(sw_, errors);
  for (const auto& e : entries_) {
    if (&e != same_id) validator.reserve(e.config, group_name(e.config.group_id));
  }
  const std::optional<vocab::GroupContext> g = validator.read(context, "context");
  if (!g) return "invalid context: " + vocab::join(errors);
  const std::string name = group_name(g->group_id);
  if (same_id) {
    if (!(same_id->config == *g)) {
      return name + " is installed with a different context (" + differences(same_id->config, *g) +
             "); remove it first";
    }
    if (same_id->memory_bytes == memory_bytes) return "";  // the same install again
    if (same_id->memory_bytes > 0) {
      return name + " is installed with " + std::to_string(same_id->memory_bytes) +
             " bytes; this install grants " + std::to_string(memory_bytes);
    }
    return attach(g->group_id, memory_bytes);  // detached: the install brings its memory back
  }
  if (g->window > limits_.max_window) {
    return name + ": window " + std::to_string(g->window) + " exceeds this switch's max_window " +
           std::to_string(limits_.max_window);
  }
  if (g->pmtu > limits_.max_pmtu) {
    return name + ": pmtu " + std::to_string(g->pmtu) + " exceeds this switch's max_pmtu " +
           std::to_string(limits_.max_pmtu);
  }
  if (memory_bytes == 0) {
    // Installed detached (a reclaimed group the manager restores after this switch lost it):
    // its context and endpoints are reserved, nothing enters the datapath until an attach.
    entries_.push_back({*g, 0, false});
    return "";
  }
  if (std::string err = check_grant(*g, memory_bytes); !err.empty()) return err;
  std::vector<GroupEntry> next = entries_;
  next.push_back({*g, memory_bytes, false});
  return apply(std::move(next));
}

std::string GroupTable::remove(uint32_t id) {
  const GroupEntry* e = find(id);
  if (e == nullptr) return "";
  if (e->is_static) return refuse_static(*e, "remove");
  std::vector<GroupEntry> next;
  for (const auto& x : entries_) {
    if (x.config.group_id != id) next.push_back(x);
  }
  if (e->memory_bytes == 0) {  // detached: not in the datapath
    entries_ = std::move(next);
    return "";
  }
  return apply(std::move(next));
}

std::string GroupTable::detach(uint32_t id) {
  const GroupEntry* e = find(id);
  if (e == nullptr || e->memory_bytes == 0) return "";
  if (e->is_static) return refuse_static(*e, "detach");
  std::vector<GroupEntry> next = entries_;
  for (auto& x : next) {
    if (x.config.group_id == id) x.memory_bytes = 0;
  }
  return apply(std::move(next));
}

std::string GroupTable::attach(uint32_t id, uint64_t memory_bytes) {
  const GroupEntry* e = find(id);
  if (e == nullptr) {
    return group_name(id) + " has no context on this switch; install it (with its memory) instead";
  }
  if (e->is_static) return refuse_static(*e, "attach memory to");
  if (e->memory_bytes > 0) {
    if (e->memory_bytes == memory_bytes) return "";
    return group_name(id) + " already holds " + std::to_string(e->memory_bytes) +
           " bytes; this attach grants " + std::to_string(memory_bytes);
  }
  if (std::string err = check_grant(e->config, memory_bytes); !err.empty()) return err;
  std::vector<GroupEntry> next = entries_;
  for (auto& x : next) {
    if (x.config.group_id == id) x.memory_bytes = memory_bytes;
  }
  return apply(std::move(next));
}

std::string GroupTable::retain(const std::vector<uint32_t>& keep) {
  std::vector<GroupEntry> next;
  bool datapath_changes = false;
  for (const auto& e : entries_) {
    const bool kept =
        e.is_static || std::find(keep.begin(), keep.end(), e.config.group_id) != keep.end();
    if (kept) {
      next.push_back(e);
    } else if (e.memory_bytes > 0) {
      datapath_changes = true;
    }
  }
  if (next.size() == entries_.size()) return "";
  if (!datapath_changes) {
    entries_ = std::move(next);
    return "";
  }
  return apply(std::move(next));
}

}  // namespace epic::agent
