// CommConfig: everything a rank needs to join an EPIC group — its rank and the
// group size, the transport, and either the switch's peer parameters (static
// keys) or the inc-manager to ask for them (INC_MANAGER) — read from INC_* environment variables or
// from a file of the same KEY=VALUE lines (docs/libinc.md lists every key).
// Unknown INC_* keys are errors (a typo must not silently fall back to a
// default); every error names the key and the value.
// Thread-safety: plain values and pure functions (from_env reads environ).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/transport/open.h"
#include "proto/vocab/arith.h"

namespace epic::inc {

// INC_MANAGER & co.: the rank joins its group through inc-manager's JoinGroup rendezvous
// (host/inc/manager_join.h), which answers the switch's peer parameters.
struct ManagerOptions {
  std::string address;  // "host:port" or "unix:/path"; "" = static peer keys (no manager)
  std::string tenant = "default";
  std::string group;
  uint32_t queue_timeout_ms = 0;  // wait this long for INC memory (0 = answer at once)
  std::chrono::milliseconds join_timeout{60000};  // the JoinGroup call's gRPC deadline
  std::string ca_file, cert_file, key_file;       // TLS (PEM files); plaintext when all ""
  bool insecure = false;      // plaintext to an address that is not local (INC_MANAGER_INSECURE=1)
  bool host_fallback = true;  // accept host collectives when there is no INC memory
  uint32_t host_qpn = 0;      // soft: the ring's base QPN (0 = INC_QPN + 2)
  // INC_WINDOW / INC_PMTU when given: asked of the manager (its defaults otherwise).
  std::optional<uint32_t> window;
  std::optional<uint16_t> pmtu;
  // INC_MODE when given: the group's mode asked of the manager, 2 (Mode-II) or 3 (Mode-III);
  // the fabric's default otherwise. Every rank must ask the same.
  std::optional<uint32_t> mode;
  // INC_PKEY when given: the group's P_Key asked of the manager (every rank must ask the same);
  // unset, the group is bound to no partition.
  std::optional<uint16_t> pkey;
  // INC_DSCP when given: the group's traffic class asked of the manager (every rank must ask the
  // same); unset, the tenant's default. The manager's answer replaces the DSCP bits of
  // INC_TRAFFIC_CLASS (docs/traffic-classes.md).
  std::optional<uint8_t> dscp;
  // INC_ACCUMULATOR / INC_DTYPE: the group's arithmetic asked of the manager (every rank must
  // ask the same; docs/arithmetic.md).
  vocab::GroupArith arith{};
  bool enabled() const { return !address.empty(); }
};

struct CommConfig {
  uint16_t rank = 0;
  uint16_t ranks = 0;
  // The group's arithmetic (INC_ACCUMULATOR, INC_DTYPE): the accumulator profile the switches
  // run and the dtype their slots are sized for. A reduction that does not fit is refused
  // before anything is sent (vocab::collective_fits).
  vocab::GroupArith arith{};
  host::TransportOptions transport;
  // A wait gives up when no collective finished for this long, with a report
  // of what the rank still waits for (direction and PSN).
  std::chrono::milliseconds timeout{30000};
  // Calls larger than this are split into several collectives (at most
  // vocab::kMaxCollectiveBytes: a collective of more packets is refused by the switch).
  size_t max_collective_bytes = size_t{64} << 20;
  // Blocking and non-blocking calls copy inputs up to this size, so that they
  // complete when the results are in rather than when the switch has also
  // acknowledged the uploads (Mode-II acknowledges an upload only after its
  // receivers acknowledged the result: part of a round trip later).
  size_t copy_send_bytes = size_t{64} << 10;
  // At close, how long to keep acknowledging the switch's last results.
  std::chrono::milliseconds linger{200};
  ManagerOptions manager;
};

struct ConfigResult {
  CommConfig config;
  std::string error;  // "": config is complete and consistent
  bool ok() const { return error.empty(); }
};

// Reads KEY=VALUE pairs (keys INC_*). Missing required keys, unknown keys and
// bad values are errors.
ConfigResult config_from_pairs(const std::map<std::string, std::string>& pairs);
// The process environment's INC_* variables.
ConfigResult config_from_env();
// A file of KEY=VALUE lines; '#' starts a comment; blank lines are ignored.
// INC_* variables in the environment override the file's values.
ConfigResult config_from_file(const std::string& path, bool env_overrides = true);

// Every key with its one-line meaning, for --help and docs.
const std::vector<std::pair<std::string, std::string>>& config_keys();

}  // namespace epic::inc
