#include "agent/core/action_applier.h"

#include <string>

namespace epic::agent {

std::string ActionApplier::install(const inc::v1::Action& a) {
  if (!a.has_context()) return "install without a context";
  const inc::v1::GroupContext& c = a.context();
  if (a.group_id() != 0 && a.group_id() != c.id()) {
    return "action group_id " + std::to_string(a.group_id()) + " differs from context.id " +
           std::to_string(c.id());
  }
  if (std::string err = table_.install(c, a.memory_bytes()); !err.empty()) return err;
  if (!contexts_.contains(c.id())) contexts_[c.id()] = c;
  return "";
}

inc::v1::AgentMessage ActionApplier::apply(const inc::v1::Action& a) {
  std::string err;
  switch (a.kind()) {
    case inc::v1::ACTION_KIND_INSTALL_CONTEXT:
      err = install(a);
      break;
    case inc::v1::ACTION_KIND_REMOVE_CONTEXT:
      err = table_.remove(a.group_id());
      break;
    case inc::v1::ACTION_KIND_DETACH_SLOTS:
      err = table_.detach(a.group_id());
      break;
    case inc::v1::ACTION_KIND_ATTACH_SLOTS:
      err = table_.attach(a.group_id(), a.memory_bytes());
      break;
    default:
      err = "unknown action kind " + std::to_string(static_cast<int>(a.kind()));
      break;
  }
  forget_removed();
  inc::v1::AgentMessage m;
  if (err.empty()) {
    m.mutable_ack()->set_action_id(a.action_id());
  } else {
    m.mutable_fail()->set_action_id(a.action_id());
    m.mutable_fail()->set_reason(err);
  }
  return m;
}

std::string ActionApplier::resync(const inc::v1::Resync& r) {
  const std::string err =
      table_.retain(std::vector<uint32_t>(r.keep_group_ids().begin(), r.keep_group_ids().end()));
  forget_removed();
  return err;
}

void ActionApplier::forget_removed() {
  std::erase_if(contexts_, [&](const auto& kv) { return table_.find(kv.first) == nullptr; });
}

void ActionApplier::list_installed(inc::v1::Register& out) const {
  for (const auto& [id, context] : contexts_) {
    const GroupEntry* e = table_.find(id);
    if (e == nullptr || e->is_static) continue;
    inc::v1::InstalledGroup* g = out.add_installed();
    g->set_group_id(id);
    *g->mutable_context() = context;
    g->set_memory_bytes(e->memory_bytes);
    g->set_slots_attached(e->memory_bytes > 0);
  }
}

}  // namespace epic::agent
