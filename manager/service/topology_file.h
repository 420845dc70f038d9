// The operator's declarations, read at start: --topology FILE (switch-to-switch links and rank
// addresses behind switch ports) and --tenants FILE (tenants with quotas and Spatial Mux
// partitions). YAML or JSON (JSON is YAML); unknown keys are refused. Shape (docs/manager.md):
//
//   links:                                # either form
//     - {a: leaf0:up0, b: spine0:down0}
//     - [leaf1:up0, spine0:down1]
//   ranks:
//     - {ipv4: 10.77.0.1, mac: "02:00:00:00:00:01", at: leaf0:p0}
//   tenants:
//     - name: team-a
//       max_slots_per_switch: 512         # quota keys are optional (absent: no limit)
//       max_slots_total: 4096
//       max_groups: 8
//       max_ranks_per_group: 64
//       reserved: {leaf0: 128}            # Spatial Mux partition per switch
//
// Threading: pure functions plus reading the file.
#pragma once

#include <string>
#include <string_view>

#include "manager/core/error.h"
#include "manager/service/options.h"

namespace epic::manager::service {

// INVALID_ARGUMENT "FILE: links[1].a: ..." for anything wrong; NOT_FOUND if unreadable.
Result<Declared> parse_declarations(std::string_view text, const std::string& name);
Result<Declared> load_declarations(const std::string& path);

}  // namespace epic::manager::service
