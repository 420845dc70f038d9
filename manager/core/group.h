// A communication group as IncManager tracks it: the join request (tenant, name, ranks with
// their QP endpoints, window, pmtu), its IncTree with bound virtual QPNs, its slot grants and
// its place in the lifecycle (docs/manager.md "Group lifecycle"):
//
//   (rendezvous) ─► kQueued ─► kInstalling ─► kInstalled ⇄ (idle) ─► kReclaimed
//                      │            │  ▲           │                    │ resume
//                      ▼            ▼  └───────────┼────────────────────┘
//                   failed      failed/rolled back │  switch lost ─► kBroken
//                                                  ▼
//                                              torn down (erased)
//
// kInstalling: actions sent to the IncAgents, waiting for every switch to acknowledge (an
// install, or a resume's slot attach). Idle is not a state: an installed group is idle when
// no activity was reported for Policy::reclaim_idle_after.
// Threading: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "manager/core/inc_tree.h"
#include "manager/core/limits.h"
#include "manager/core/memory_ledger.h"
#include "proto/context/group_context.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/limits.h"

namespace epic::manager {

// One rank of a join: its index in the group and its NIC QP. The MAC may be left out: the
// topology knows it (if given, it must agree).
struct RankRequest {
  uint32_t rank = 0;
  uint32_t ipv4 = 0;
  uint32_t qpn = 0;
  std::optional<vocab::MacAddr> mac{};
  friend bool operator==(const RankRequest&, const RankRequest&) = default;
};

struct GroupRequest {
  std::string tenant{};
  std::string name{};  // unique among the tenant's live groups, e.g. "job-42/dp-0"
  // MW, the ranks' outstanding-packet window. 0: the manager sizes it from the path's
  // bandwidth-delay product at admission (window_sizing.h), and stores what it chose here.
  uint32_t window = vocab::kDefaultWindow;
  // The ranks' path MTU. 0: the manager picks, at admission, the largest the IncTree's switches
  // and ports carry (4096 on jumbo frames), and stores what it chose here.
  uint32_t pmtu = vocab::kDefaultPmtu;
  // The group's EPIC mode. nullopt: the fabric file's default (Policy::default_mode), chosen at
  // IncManager::join and stored here (a stored group always has one).
  std::optional<vocab::GroupMode> mode{};
  std::vector<RankRequest> ranks{};  // every rank 0..N-1 once, in any order
  // How long to wait in the Temporal Mux queue for memory; 0: answer "no INC memory" at once.
  Millis queue_timeout{0};
  // The group's RoCE partition key: set, every switch checks it on every packet of the group
  // and sends it (vocab::GroupContext::pkey). nullopt: not checked.
  std::optional<uint16_t> pkey{};
  // The group's arithmetic (proto/vocab/arith.h): accumulator profile and the dtype its switch
  // memory is sized for (vocab::group_memory_bytes(window, pmtu, arith, ranks)).
  vocab::GroupArith arith{};
  // The group's traffic class (DSCP, docs/traffic-classes.md). nullopt: the tenant's
  // default_dscp (0 without one), chosen at IncManager::join and stored here.
  std::optional<uint8_t> dscp{};
  friend bool operator==(const GroupRequest&, const GroupRequest&) = default;
};

enum class GroupState : uint8_t { kQueued, kInstalling, kInstalled, kReclaimed, kBroken };
std::string_view group_state_name(GroupState s);  // "queued", "installing", ...

enum class PendingOp : uint8_t {
  kNone,
  kInstall,  // contexts with slots are being installed
  kAttach,   // a reclaimed group's slots are being re-attached (resume)
};

struct Group {
  uint32_t id = 0;         // the engine's group_id: unique, never reused
  GroupRequest request{};  // ranks sorted by rank
  GroupState state = GroupState::kQueued;
  uint32_t initial_psn = 0;  // every rank QP's first PSN (24 bits)
  // Mode-III: each hop's ACK timeout, from the tree's links at admission (window_sizing.h
  // hop_timeout_for); every switch's context carries it. Unused by Mode-II.
  uint32_t hop_timeout_us = vocab::kDefaultHopTimeoutUs;
  IncTree tree{};                     // empty while queued
  std::vector<MemoryGrant> grants{};  // one per tree switch; empty unless installing/installed
  Millis created{0};
  Millis last_activity{0};
  Millis queue_deadline{0};       // kQueued: when the wait fails
  bool blocked_by_quota = false;  // kQueued: waits for its own tenant's quota, not for memory
  std::string wait_reason{};      // kQueued: why it was not admitted at the last try
  PendingOp pending_op = PendingOp::kNone;
  std::set<SwitchId> pending{};  // kInstalling: switches that have not acknowledged yet
  std::set<SwitchId> acked{};
  std::string broken_reason{};  // kBroken
  friend bool operator==(const Group&, const Group&) = default;
};

// What a rank is told once its group is installed: where its INC peer is.
struct RankAnswer {
  uint32_t group_id = 0;
  uint32_t rank = 0;
  SwitchId switch_id{};        // the rank's first-hop switch
  Endpoint peer{};             // that switch's virtual endpoint on the rank's edge (IP, MAC, QPN)
  vocab::Ipv6Addr peer_gid{};  // RoCEv2 GID of peer.ipv4: IPv4-mapped ::ffff:a.b.c.d
  uint32_t initial_psn = 0;
  uint32_t window = 0;
  uint32_t pmtu = 0;
  vocab::GroupMode mode = vocab::GroupMode::kMode2;
  vocab::GroupArith arith{};  // the group's arithmetic, as asked
  uint8_t dscp = 0;           // the group's traffic class (GroupRequest::dscp, resolved)
  friend bool operator==(const RankAnswer&, const RankAnswer&) = default;
};

// The group's first PSN: a fixed mix of its id, so that a QPN reused by a later group does not
// start where a stale packet of an earlier one might still be.
uint32_t initial_psn_for(uint32_t group_id);
// The mode a stored group runs in (Mode-II for a request that never had one resolved).
inline vocab::GroupMode mode_of(const GroupRequest& r) {
  return r.mode.value_or(vocab::GroupMode::kMode2);
}
vocab::Ipv6Addr ipv4_mapped_gid(uint32_t ipv4);

}  // namespace epic::manager
