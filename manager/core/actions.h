// What IncManager asks of the world: SwitchActions, the future messages to the IncAgents
// (install a group's context with its slot grant, remove it, detach or re-attach its slots
// through the indirection layer), and GroupEvents, what the service tells the ranks (ready:
// answer with RankAnswers; failed: answer with the error, and the rank library falls back to
// host-based collectives).
// Ordering contract: actions for one switch must reach its agent in list order (a detach that
// frees slots comes before the install that uses them).
// Threading: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "manager/core/error.h"
#include "manager/core/inc_tree.h"
#include "proto/context/group_context.h"

namespace epic::manager {

// A group's context on one switch, as the manager builds it (with the link ends of switch
// children, its own bookkeeping), plus the switch memory granted to it. Sent as the GroupContext
// message (proto/inc/v1/context.proto, the message of incd's `groups[]` entries) after the
// context checks (context_check.h).
struct SwitchContext {
  uint32_t group_id = 0;
  uint32_t num_ranks = 0;
  uint32_t initial_psn = 0;
  uint32_t window = 0;
  uint32_t pmtu = 0;
  vocab::GroupMode mode = vocab::GroupMode::kMode2;
  uint32_t hop_timeout_us = vocab::kDefaultHopTimeoutUs;  // Mode-III: each hop's ACK timeout
  std::vector<TreeChild> children{};
  std::optional<TreeParent> parent{};
  uint64_t memory_bytes = 0;       // vocab::group_memory_bytes(window, pmtu)
  std::optional<uint16_t> pkey{};  // the group's P_Key (GroupRequest::pkey)
  vocab::GroupArith arith{};       // the group's arithmetic (GroupRequest::arith)
  uint8_t dscp = 0;                // the group's traffic class (GroupRequest::dscp, resolved)
  friend bool operator==(const SwitchContext&, const SwitchContext&) = default;
};

enum class ActionKind : uint8_t {
  kInstallContext,  // context + slots; acknowledged through IncManager::ack / fail
  kRemoveContext,   // the context and its slots go (idempotent at the agent)
  kDetachSlots,     // Temporal Mux reclaim: the context stays, its slots go
  kAttachSlots,     // resume: slots for a detached context; acknowledged like an install
};

struct SwitchAction {
  ActionKind kind = ActionKind::kInstallContext;
  SwitchId switch_id{};
  uint32_t group_id = 0;
  std::optional<SwitchContext> context{};  // kInstallContext
  uint64_t memory_bytes = 0;               // kInstallContext, kAttachSlots
  friend bool operator==(const SwitchAction&, const SwitchAction&) = default;
};

enum class GroupEventKind : uint8_t {
  kQueued,      // waits in the Temporal Mux queue for memory
  kInstalling,  // actions issued; wait for the agents
  kReady,       // every switch acknowledged: answer the ranks (IncManager::answers)
  kFailed,      // admission or install failed; `error` says why; the group is gone
  kReclaimed,   // its slots were reclaimed (idle); the ranks fall back until it resumes
  kBroken,      // a switch of its tree was lost; `error` says which
  kTornDown,
};

struct GroupEvent {
  uint32_t group_id = 0;
  GroupEventKind kind = GroupEventKind::kQueued;
  std::optional<Error> error{};
  friend bool operator==(const GroupEvent&, const GroupEvent&) = default;
};

struct Effects {
  std::vector<SwitchAction> actions{};
  std::vector<GroupEvent> events{};
  void append(Effects&& other) {
    actions.insert(actions.end(), other.actions.begin(), other.actions.end());
    events.insert(events.end(), other.events.begin(), other.events.end());
  }
};

}  // namespace epic::manager
