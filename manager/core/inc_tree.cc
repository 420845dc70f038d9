#include "manager/core/inc_tree.h"

#include <algorithm>

namespace epic::manager {

const TreeNode* IncTree::node(const SwitchId& id) const {
  for (const auto& n : nodes) {
    if (n.switch_id == id) return &n;
  }
  return nullptr;
}

TreeNode* IncTree::node(const SwitchId& id) {
  return const_cast<TreeNode*>(static_cast<const IncTree*>(this)->node(id));
}

std::vector<Link> IncTree::links() const {
  std::vector<Link> out;
  for (const auto& n : nodes) {
    if (!n.parent) continue;
    SwitchPort here{n.switch_id, n.parent->port};
    out.push_back({std::min(here, n.parent->parent_port), std::max(here, n.parent->parent_port)});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace epic::manager
