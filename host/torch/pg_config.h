// The libinc configuration of one PyTorch process group: the process's INC_* variables (the
// transport and endpoint: INC_MANAGER, INC_IFACE, INC_MAC, INC_IP, INC_QPN, INC_ACCUMULATOR,
// ...) with the group's own rank, size, manager group name and QP put in.
//
// Every process group is its own manager group with its own QP: the soft transport's QPN is
// INC_QPN + kQpnStride * pg_index, where pg_index counts the epic process groups this process
// created (0 for the first, usually the world group). kQpnStride leaves room for the two QPs
// of libinc's host ring (INC_QPN + 2, + 3), which the backend does not use: Gloo is its
// fallback, so INC_HOST_FALLBACK is forced to 0 and INC_HOST_QPN is dropped.
// Threading: pure functions (pg_config_from_env reads environ).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "host/inc/comm_config.h"
#include "host/torch/inc_link.h"  // PgIdentity, kQpnStride

namespace epic::torch_backend {

struct PgConfig {
  inc::CommConfig config;
  std::string error;  // "" when config is usable
  // Keys of the environment the backend set aside, for the log ("INC_HOST_QPN ignored ...").
  std::string notes;
  bool ok() const { return error.empty(); }
};

// From explicit INC_* pairs (tests, docs) or the process environment.
PgConfig pg_config(std::map<std::string, std::string> env, const PgIdentity& id);
PgConfig pg_config_from_env(const PgIdentity& id);
// The INC_* variables of the environment.
std::map<std::string, std::string> inc_environment();

}  // namespace epic::torch_backend
