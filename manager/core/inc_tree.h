// IncTree: a group's logical topology as the manager installs it (docs/design.md, seed
// "IncTree 抽象"): ranks are the leaves, switches the inner nodes, one switch the root. Per
// switch it holds what that switch's context needs — its children (a rank NIC, or a lower
// switch covering a contiguous range of ranks) and its parent edge — with both endpoints of
// every edge once the manager has bound virtual QPNs. This is the shape of incd's
// `groups[].children` / `parent` (proto/inc/v1/incd_config.proto), with port names.
// Threading: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "manager/core/endpoint.h"
#include "manager/core/topology.h"

namespace epic::manager {

struct TreeChild {
  std::string port{};  // this switch's port toward the child
  bool is_rank = false;
  uint32_t first_rank = 0;  // ranks below the child: [first_rank, first_rank + rank_count)
  uint32_t rank_count = 1;
  SwitchPort child_port{};  // switch child: its end of the link; rank child: empty
  Endpoint remote{};        // the child's endpoint (the rank's QP, or the child switch's)
  Endpoint local{};         // this switch's virtual endpoint on the edge
  friend bool operator==(const TreeChild&, const TreeChild&) = default;
};

struct TreeParent {
  std::string port{};        // this switch's port toward the parent
  SwitchPort parent_port{};  // the parent's end of the link
  Endpoint remote{}, local{};
  friend bool operator==(const TreeParent&, const TreeParent&) = default;
};

struct TreeNode {
  SwitchId switch_id{};
  uint32_t level = 0;                  // 0 at the root
  std::vector<TreeChild> children{};   // ordered by first_rank
  std::optional<TreeParent> parent{};  // absent at the root
  friend bool operator==(const TreeNode&, const TreeNode&) = default;
};

struct IncTree {
  SwitchId root{};
  uint32_t depth = 0;             // H: edges from the root down to the farthest rank
  std::vector<TreeNode> nodes{};  // the root first, then level by level, by switch id
  const TreeNode* node(const SwitchId& id) const;
  TreeNode* node(const SwitchId& id);
  std::vector<Link> links() const;  // the switch-to-switch edges, sorted
  friend bool operator==(const IncTree&, const IncTree&) = default;
};

}  // namespace epic::manager
