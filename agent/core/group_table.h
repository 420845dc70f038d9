// GroupTable: the groups this switch serves and the switch memory (bytes) granted to each, and
// the one place that changes them. Static groups come from incd's config file (groups[]): they
// use memory from the capacity, are installed at start, and inc-manager can neither replace,
// remove, detach nor attach them. Manager groups arrive as GroupContext messages — the message
// of a groups[] entry — and are read and checked by the one context library
// (proto/context/context_proto.h, context_validate.h), exactly as incd's config loader checks a
// groups[] entry, against the switch's ports, INC addresses and every other group's endpoints,
// then against the switch's limits (window, pmtu, a grant of exactly
// vocab::group_memory_bytes(window, pmtu, arith, ranks) — the memory the engine allocates for
// the context — and the free capacity).
//
// Every change is applied as a whole new set through GroupSink::set_groups, so groups that did
// not change keep running undisturbed; a refused change leaves table and datapath as they were.
// Idempotent where inc-manager may repeat itself after a reconnect: installing the same
// context again, removing or detaching a group that is not there, attaching memory that is
// already attached all succeed without touching the datapath.
// Threading: not thread-safe; the agent's thread owns it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/core/group_sink.h"
#include "proto/context/context_proto.h"
#include "proto/context/group_context.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/memory.h"

namespace epic::agent {

struct SwitchLimits {
  // Bytes of switch memory the switch grants in all (static groups included).
  uint64_t memory_capacity_bytes = vocab::kDefaultSwitchMemoryBytes;
  uint32_t max_window = vocab::kDefaultSwitchMaxWindow;  // largest MW accepted (a power of two)
  uint16_t max_pmtu = vocab::kMaxPmtu;                   // largest pmtu accepted
};

struct GroupEntry {
  vocab::GroupContext config;
  uint64_t memory_bytes = 0;  // granted: bytes_for(context); 0 while detached
  bool is_static = false;
};

class GroupTable {
 public:
  // `static_groups` are installed already (incd started the datapath with them).
  GroupTable(vocab::SwitchView sw, SwitchLimits limits,
             std::vector<vocab::GroupContext> static_groups, GroupSink& sink);

  // Each returns "" (done, or nothing to do) or the reason it was refused (nothing changed).
  std::string install(const vocab::GroupContextMsg& context, uint64_t memory_bytes);
  std::string remove(uint32_t group_id);
  std::string detach(uint32_t group_id);
  std::string attach(uint32_t group_id, uint64_t memory_bytes);
  // Removes every manager group whose id is not in `keep` (static groups stay) in one set.
  // "" or why the datapath refused (nothing changed).
  std::string retain(const std::vector<uint32_t>& keep);

  const GroupEntry* find(uint32_t group_id) const;
  const std::vector<GroupEntry>& entries() const { return entries_; }  // static first
  uint64_t bytes_in_use() const;      // static and attached manager groups
  uint64_t static_bytes() const;      // what the static groups hold
  uint64_t manager_capacity() const;  // bytes inc-manager may grant: capacity - static
  const SwitchLimits& limits() const { return limits_; }
  static uint64_t bytes_for(const vocab::GroupContext& g) {
    return vocab::group_memory_bytes(g.window, g.pmtu, g.arith, g.num_ranks);
  }

 private:
  // Why `memory_bytes` cannot be granted to `g` now ("" when they can).
  std::string check_grant(const vocab::GroupContext& g, uint64_t memory_bytes) const;
  // Publishes `next` to the datapath (attached entries only); on success it becomes the table.
  std::string apply(std::vector<GroupEntry> next);
  std::string refuse_static(const GroupEntry& e, const char* what) const;

  vocab::SwitchView sw_;
  SwitchLimits limits_;
  GroupSink& sink_;
  std::vector<GroupEntry> entries_;
};

// "window 16 → 32, children[2].remote" — the fields in which two contexts of a group differ.
std::string differences(const vocab::GroupContext& installed, const vocab::GroupContext& asked);

}  // namespace epic::agent
