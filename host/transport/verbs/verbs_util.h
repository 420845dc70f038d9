// Small pure helpers of the verbs transport: path MTU enums, IPv4-mapped
// RoCEv2 GIDs, completion status and QP state names. No device needed.
// Thread-safety: pure functions.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <string>

#include "host/transport/soft/rc_types.h"

namespace epic::verbs {

// 256..4096 -> IBV_MTU_256..IBV_MTU_4096; nothing for other values.
std::optional<ibv_mtu> mtu_enum(uint32_t bytes);
// IBV_MTU_256..IBV_MTU_4096 -> bytes; 0 for anything else.
uint32_t mtu_bytes(ibv_mtu mtu);

// ::ffff:a.b.c.d for an IPv4 address in host order (RoCEv2's IPv4 GID).
ibv_gid gid_of_ipv4(uint32_t ipv4);
// The IPv4 address (host order) of an IPv4-mapped GID; nothing otherwise.
std::optional<uint32_t> ipv4_of_gid(const ibv_gid& gid);
// "fe80:0000:...:0001" as the kernel's sysfs shows GIDs.
std::string format_gid(const ibv_gid& gid);

// ibv_wc_status -> the closest soft::WcStatus (local errors with no
// counterpart -> kRemOpErr; the caller keeps ibv_wc_status_str's text).
soft::WcStatus map_status(ibv_wc_status s);
// "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "UNKNOWN".
const char* qp_state_name(ibv_qp_state s);
// "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "NOP".
std::string port_state_name(ibv_port_state s);

}  // namespace epic::verbs
