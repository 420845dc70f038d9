// The operator's declarations, read at start: --topology FILE (switch-to-switch links and rank
// addresses behind switch ports) and --tenants FILE (tenants with quotas and Spatial Mux
// partitions). YAML or JSON (JSON is YAML); unknown keys are refused. Shape (docs/manager.md):
//
//   defaults:                             # optional
//     mode: 3                             # 2 (Mode-II, the default) or 3 (Mode-III)
//   links:                                # either form; the mapping may add a speed
//     - {a: leaf0:up0, b: spine0:down0, bandwidth_gbps: 400, rtt_us: 4}
//     - [leaf1:up0, spine0:down1]         # default speed: 100 Gb/s, 10 us
//   ranks:                                # bandwidth_gbps / rtt_us of the rank's cable, optional
//     - {ipv4: 10.77.0.1, mac: "02:00:00:00:00:01", at: leaf0:p0}
//   tenants:                              # memory in bytes
//     - name: team-a
//       max_bytes_per_switch: 1589248     # quota keys are optional (absent: no limit)
//       max_bytes_total: 12713984
//       max_groups: 8
//       max_ranks_per_group: 64
//       reserved_bytes: {leaf0: 397312}   # Spatial Mux partition per switch
//
// Link speeds (> 0, at most 10000 Gb/s and 1 s) size the windows of groups that do not ask for
// one, and Mode-III's hop timeouts (manager/core/window_sizing.h). defaults.mode is the mode of
// a group whose ranks do not ask for one. The slot keys of earlier versions are refused.
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
