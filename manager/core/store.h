// The embedded store: what a restarted IncManager needs to recover — switches, links, rank
// attachments, tenants, and the groups with their IncTrees, virtual QPNs and slot grants — as
// one snapshot file in JSON Lines, one record per line (docs/manager.md "Store"):
//
//   {"record":"epic-manager-store","version":1,"next_group_id":4}
//   {"record":"switch","id":"leaf0",...}      switches, then links, ranks, tenants, groups
//   {"record":"end","records":9}              the trailer: a file without it was cut short
//
// Saving writes `path.tmp`, fsyncs it, renames it over `path` and fsyncs the directory, so the
// file is always the old snapshot or the new one. Loading replays every record through the
// same checks as the live API, so a corrupted or inconsistent file is refused (DATA_LOSS) with
// the line number of the first bad record, and nothing is half-loaded. Queued joins and
// rendezvous are not stored: their ranks' calls die with the process and are retried.
// Threading: pure functions, plus the file I/O of save_store / load_store.
#pragma once

#include <string>
#include <string_view>

#include "manager/core/actions.h"
#include "manager/core/error.h"
#include "manager/core/inc_manager.h"

namespace epic::manager {

// 2: switch memory in bytes (capacity_bytes, quotas, partitions and grants); 1 counted slots.
inline constexpr int kStoreVersion = 2;

std::string encode_store(const IncManager& manager);

struct LoadedStore {
  IncManager manager;
  // Operations in flight when the snapshot was taken, rolled back (IncManager::finish_restore):
  // send these actions to the agents.
  Effects reconcile{};
};

// DATA_LOSS "line N: ..." for anything wrong.
Result<LoadedStore> decode_store(std::string_view text, const Policy& policy, Millis now);

// INTERNAL with the system's reason when the file cannot be written.
Status save_store(const std::string& path, const IncManager& manager);
// NOT_FOUND when the file does not exist (a first start); DATA_LOSS "store <path> line N: ..."
// when it is corrupted; INTERNAL when it cannot be read.
Result<LoadedStore> load_store(const std::string& path, const Policy& policy, Millis now);

}  // namespace epic::manager
