// One group's context at one switch, as a plain value: its place in the IncTree (children,
// parent, which ranks lie below each child), its PSN window and path MTU. The one C++ type for
// it everywhere: the engine runs it (engine::GroupConfig is this type), incd's static config
// and the IncAgent produce it from the GroupContext message (proto/context/context_proto.h),
// and proto/context/context_validate.h checks it.
//
// Ports: the value carries a port *id* — the index of the port in incd's `ports` list, which is
// what the engine transmits on. The control plane and config files name ports; names are
// resolved to ids in one place, decode_context (context_proto.h), against a SwitchView.
// Pure C++: no DPDK, no protobuf.
// Threading: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "proto/vocab/addr.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/dscp.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/pkey.h"

namespace epic::vocab {

// One end of an IncTree edge: <IPv4, QPN> and the MAC frames to it carry.
struct Endpoint {
  MacAddr mac{};
  uint32_t ipv4 = 0;  // host order
  uint32_t qpn = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// One child edge of this switch: a rank NIC, or a lower switch.
struct ChildLink {
  Endpoint remote;          // the child's endpoint
  Endpoint local;           // this switch's virtual endpoint on that edge
  uint16_t port = 0;        // id of the output port toward the child
  bool is_rank = false;     // first hop of a rank: its PSNs are translated, its ACKs handled here
  uint16_t first_rank = 0;  // ranks below this child: [first_rank, first_rank + rank_count)
  uint16_t rank_count = 1;
  uint16_t udp_src_port = 0xC000;
  friend bool operator==(const ChildLink&, const ChildLink&) = default;
};

struct ParentLink {
  Endpoint remote;
  Endpoint local;
  uint16_t port = 0;  // id of the output port toward the parent
  uint16_t udp_src_port = 0xC000;
  friend bool operator==(const ParentLink&, const ParentLink&) = default;
};

// The EPIC mode a group's collectives run in at its switches (docs/design.md §2): Mode-II
// (connection translated: the ranks' end-to-end RC carries reliability, the switch reflects
// ACKs) or Mode-III (connection augmented: every hop is a reliable RC connection of its own,
// the switch ACKs and retransmits, docs/mode3.md). Every switch of a group runs the same mode.
enum class GroupMode : uint8_t { kMode2 = 2, kMode3 = 3 };

// Immutable description of a group at this switch.
struct GroupContext {
  uint32_t group_id = 0;
  uint16_t num_ranks = 0;  // ranks in the whole group
  std::vector<ChildLink> children;
  std::optional<ParentLink> parent;  // absent at the root switch
  uint32_t initial_psn = 0;          // common to every rank of the group
  uint32_t window = kDefaultWindow;  // MW: the ranks' outstanding-packet window (power of two)
  uint16_t pmtu = kDefaultPmtu;
  GroupMode mode = GroupMode::kMode2;
  uint32_t hop_timeout_us = kDefaultHopTimeoutUs;  // Mode-III: each hop's local ACK timeout
  // The group's RoCE partition (proto/vocab/pkey.h). Set: every packet the engine acts on for
  // the group must carry a matching P_Key, and the switch's own packets carry it. Unset (the
  // default): not checked, and the switch sends the default partition's key.
  std::optional<uint16_t> pkey{};
  uint16_t wire_pkey() const { return pkey.value_or(kDefaultPkey); }
  // The group's traffic class: the DSCP (0..63, proto/vocab/dscp.h) of every frame the switch
  // sends for it; with `ecn` below it, the TOS byte of those frames. Default 0, best effort.
  uint8_t dscp = 0;
  uint8_t tos(uint8_t ecn) const { return tos_byte(dscp, ecn); }
  // The group's accumulator profile and the element type its slots are sized for
  // (proto/vocab/arith.h; docs/arithmetic.md). Every switch of a group runs the same.
  GroupArith arith{};
  friend bool operator==(const GroupContext&, const GroupContext&) = default;
};

}  // namespace epic::vocab
