#include "host/mpi/comm_registry.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace epic::mpi {
namespace {

// The delete callback of the registry's attribute: MPI frees the communicator (MPI_Comm_free,
// MPI_Comm_disconnect), so its group is left. `extra` is the registry; never the attribute's
// value, which finish() may have freed.
int on_delete(MPI_Comm comm, int /*keyval*/, void* /*state*/, void* extra) {
  static_cast<CommRegistry*>(extra)->release(comm);
  return MPI_SUCCESS;
}

// Outcomes a rank brings to the agreement, worst last (PMPI_Allreduce MAX).
enum Outcome : int { kJoined = 0, kNoIncMemory = 1, kNotConfigured = 2, kFailed = 3 };

uint64_t random_id() {
  std::random_device rd;
  const uint64_t t =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return (static_cast<uint64_t>(rd()) << 32 ^ rd()) ^ (t * 0x9E3779B97F4A7C15ull);
}

}  // namespace

void CommRegistry::init() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  world_rank_ = rank;
  report_.set_rank(rank);
  if (const char* off = std::getenv("EPIC_MPI"); off && std::string_view(off) == "0") {
    disabled_ = true;
    if (rank == 0) report_.say("EPIC_MPI=0: every collective runs on MPI");
    return;
  }
  env_ = read_rank_env(rank);
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &keyval_, this);
  CommState& world = get(MPI_COMM_WORLD);
  if (rank == 0) {
    report_.say("MPI_COMM_WORLD: " +
                (world.inc ? std::string("offloaded to EPIC") : "runs on MPI: " + world.why_not));
  }
}

std::string CommRegistry::label(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return "MPI_COMM_WORLD";
  void* value = nullptr;
  int found = 0;
  if (keyval_ != MPI_KEYVAL_INVALID &&
      PMPI_Comm_get_attr(comm, keyval_, &value, &found) == MPI_SUCCESS && found) {
    return static_cast<CommState*>(value)->label;
  }
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  if (PMPI_Comm_get_name(comm, name, &len) == MPI_SUCCESS && len > 0) {
    return "communicator " + std::string(name, len);
  }
  return "a communicator not set up";
}

CommState& CommRegistry::get(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &value, &found) == MPI_SUCCESS && found) {
    return *static_cast<CommState*>(value);
  }
  std::string label = "MPI_COMM_WORLD";
  if (comm != MPI_COMM_WORLD) {
    char name[MPI_MAX_OBJECT_NAME] = {};
    int len = 0;
    std::lock_guard<std::mutex> lock(mu_);
    label = "communicator #" + std::to_string(++labels_);
    if (PMPI_Comm_get_name(comm, name, &len) == MPI_SUCCESS && len > 0) {
      label += " (" + std::string(name, len) + ")";
    }
  }
  std::unique_ptr<CommState> state = set_up(comm, label);
  CommState* raw = state.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    comms_[comm] = std::move(state);
  }
  PMPI_Comm_set_attr(comm, keyval_, raw);
  return *raw;
}

uint32_t CommRegistry::take_slot() {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t slot = 0;
  while (slots_.count(slot)) ++slot;
  slots_.insert(slot);
  return slot;
}

std::unique_ptr<CommState> CommRegistry::set_up(MPI_Comm comm, const std::string& label) {
  auto s = std::make_unique<CommState>();
  s->label = label;
  int inter = 0, rank = 0, size = 0;
  PMPI_Comm_test_inter(comm, &inter);
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  // The same answer on every member: no agreement needed.
  if (inter || size < 2) {
    s->why_not = inter ? "an intercommunicator (EPIC groups are intracommunicators)"
                       : "a single rank: nothing for the switch to do";
    report_.communicator(label, "mpi: " + s->why_not);
    return s;
  }

  uint64_t id = rank == 0 ? random_id() : 0;
  PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, comm);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, id);
  const auto prefix = env_.pairs.find("INC_GROUP");
  const std::string group =
      (prefix != env_.pairs.end() ? prefix->second : std::string("mpi")) + "-" + hex;

  int outcome = kJoined;
  std::string why;
  std::unique_ptr<inc::Communicator> joined;
  bool took_slot = false;
  if (!env_.error.empty()) {
    outcome = kFailed;
    why = env_.error;
  } else if (!env_.configured()) {
    outcome = kNotConfigured;
    why =
        "EPIC is not configured (neither INC_MANAGER nor INC_SWITCH_IP in the environment "
        "or EPIC_MPI_CONFIG's file)";
  } else if (!env_.managed() && comm != MPI_COMM_WORLD) {
    outcome = kNotConfigured;
    why = "static peer parameters (no INC_MANAGER) describe MPI_COMM_WORLD's group only";
  } else {
    s->slot = take_slot();
    took_slot = true;
    GroupPairs gp = group_pairs(env_, rank, size, group, s->slot);
    auto cfg = gp.error.empty() ? inc::config_from_pairs(gp.pairs) : inc::ConfigResult{};
    if (!gp.error.empty() || !cfg.ok()) {
      outcome = kFailed;
      why = "INC_* parameters (" + env_.source + "): " + (gp.error.empty() ? cfg.error : gp.error);
    } else {
      auto created = inc::Communicator::create(cfg.config);
      if (!created.ok()) {
        outcome = kFailed;
        why = created.error;
      } else if (created.value->host_fallback()) {
        outcome = kNoIncMemory;
        why = "no INC memory for group " + group +
              " (inc-manager answered host fallback): MPI's own collectives serve it";
      }
      joined = std::move(created.value);
    }
  }

  int worst = kJoined;
  PMPI_Allreduce(&outcome, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (worst == kJoined) {
    s->inc = std::move(joined);
    const auto& a = s->inc->arith();
    report_.communicator(
        label, "inc: EPIC group " + group + " (" + std::to_string(size) + " ranks, " +
                   std::string(s->inc->transport()) + " transport, accumulator " +
                   std::string(vocab::to_string(a.profile)) +
                   (a.dtype ? ", dtype " + std::string(vocab::to_string(*a.dtype)) : "") + ")");
    return s;
  }
  // Every rank gives up the group; the reason is the first rank's that had the worst outcome.
  int mine = outcome == worst ? rank : size;
  int first = 0;
  PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  std::vector<char> msg(1024, '\0');
  if (rank == first) std::strncpy(msg.data(), why.c_str(), msg.size() - 1);
  PMPI_Bcast(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, first, comm);
  s->why_not = std::string(msg.data());
  if (worst == kFailed) s->why_not = "rank " + std::to_string(first) + ": " + s->why_not;
  joined.reset();  // leaves the group (LeaveGroup; a fallback group is not held)
  if (took_slot) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_.erase(s->slot);
  }
  report_.communicator(label, "mpi: " + s->why_not);
  return s;
}

void CommRegistry::close(CommState& s) {
  if (!s.inc) return;
  const inc::Status st = s.inc->close();
  if (!st.ok() && s.broken.empty())
    report_.say(s.label + ": leaving the EPIC group: " + st.message);
  s.inc.reset();
  std::lock_guard<std::mutex> lock(mu_);
  slots_.erase(s.slot);
}

void CommRegistry::release(MPI_Comm comm) {
  std::unique_ptr<CommState> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = comms_.find(comm);
    if (it == comms_.end()) return;
    s = std::move(it->second);
    comms_.erase(it);
  }
  close(*s);
}

void CommRegistry::finish() {
  if (disabled_) return;
  std::map<MPI_Comm, std::unique_ptr<CommState>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(comms_);
  }
  for (auto& [comm, s] : all) {
    close(*s);
    PMPI_Comm_delete_attr(comm, keyval_);  // its callback finds nothing left to release
  }
  if (keyval_ != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&keyval_);
}

}  // namespace epic::mpi
