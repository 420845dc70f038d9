// incd's configuration as plain C++: what the daemon, the DPDK layer and the engine see after
// the loader has parsed a YAML or JSON file (schema: proto/inc/v1/incd_config.proto), checked
// it once, and resolved names (port names to indices, local MACs from the inc addresses).
// A loaded IncdConfig is valid as a whole; nothing downstream re-validates it.
// Threading: plain values; build once on the control thread, then share read-only.
// Field reference: docs/incd-config.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/engine/group.h"
#include "datapath/switching/inc_address.h"
#include "proto/context/context_validate.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/memory.h"

namespace epic::incd {

struct EalConfig {
  std::string lcores = "0-1";  // DPDK -l: first = main lcore, the rest workers
  bool hugepages = false;      // false: --no-huge -m memory_mb; true: hugepages, --in-memory
  uint32_t memory_mb = 256;
  std::string file_prefix;  // "" → caller uses incd-<pid>
  std::string log_level = "warning";
  std::vector<std::string> extra_args;  // appended verbatim
};

struct PortConfig {
  std::string name;
  std::string device;  // DPDK devargs: vdev or PCI address
  uint16_t mtu = 1500;
  uint16_t rx_descriptors = 1024, tx_descriptors = 1024;
  uint64_t rate_mbps = 0;  // the line rate incd enforces; 0: as fast as the port takes frames
};

// One traffic class of every port's transmit side (docs/traffic-classes.md).
struct TrafficClassConfig {
  std::string name;
  std::vector<uint8_t> dscp;   // empty: every DSCP no other class lists
  uint32_t priority = 0;       // strict-priority level, 0 served first
  uint32_t weight = 1;         // share inside its level
  uint64_t max_rate_mbps = 0;  // 0: no cap
  uint32_t queue_kb = 512;
  uint32_t ecn_threshold_kb = 0;  // 0: never marks
};

enum class Direction : uint8_t { kRx, kTx };

struct FaultConfig {
  uint16_t port = 0;  // index into ports
  Direction direction = Direction::kRx;
  double drop = 0, duplicate = 0, reorder = 0;  // probabilities in [0, 1]
  double mark_ce = 0;  // probability in [0, 1] that an ECN-capable frame is marked CE
  uint32_t delay_us = 0;
  uint64_t seed = 1;
};

// Transit RoCEv2 with a bad ICRC: forwarded (and counted), or dropped (and counted).
enum class BadIcrc : uint8_t { kPass, kDrop };

struct SwitchConfig {
  std::vector<switching::IncAddress> inc_addresses;
  uint32_t l2_aging_s = 300;
  uint32_t l2_table_size = 4096;
  BadIcrc bad_icrc = BadIcrc::kPass;
  vocab::UdpPortRange udp_source_ports;  // edge binding: any unless configured
};

struct MetricsConfig {
  std::string listen = "127.0.0.1:9464";  // "" disables
  uint32_t stall_after_ms = 2000;
};

struct LogConfig {
  std::string level = "info";  // trace|debug|info|warn|error|critical|off (spdlog's names)
  std::string file;            // "" = stderr
};

// The IncAgent's connection to inc-manager (docs/agent.md).
struct ManagerTlsConfig {
  bool enabled = false;
  std::string root_ca_file, cert_file, key_file, server_name;
};

struct ManagerConfig {
  std::string address;        // gRPC target
  std::string switch_id;      // this switch at the manager
  switching::IncAddress inc;  // resolved from inc_ipv4 (default: the first inc address)
  uint64_t memory_capacity_bytes = vocab::kDefaultSwitchMemoryBytes;  // static groups included
  uint32_t max_window = vocab::kDefaultSwitchMaxWindow;
  uint16_t max_pmtu = vocab::kMaxPmtu;
  uint32_t heartbeat_ms = 1000;
  uint32_t reconnect_initial_ms = 200;
  uint32_t reconnect_max_ms = 10000;
  double reconnect_jitter = 0.2;
  uint32_t keepalive_ms = 20000;  // HTTP/2 keepalive pings; 0 = off
  ManagerTlsConfig tls;
};

struct IncdConfig {
  EalConfig eal;
  uint32_t workers = 1;
  uint32_t burst = 32;
  uint32_t idle_sleep_us = 0;  // idle worker's sleep between empty polls; 0: busy polling
  std::vector<PortConfig> ports;
  SwitchConfig sw;
  std::vector<FaultConfig> faults;
  std::vector<engine::GroupConfig> groups;
  MetricsConfig metrics;
  LogConfig log;
  std::optional<ManagerConfig> manager;             // absent: no inc-manager
  std::vector<TrafficClassConfig> traffic_classes;  // empty: one FIFO per port
};

// An error of a config file, by field path: the context checks' error type
// (proto/context/context_validate.h), so a groups[] entry's errors are the checks' own.
using ConfigError = vocab::ContextError;

// Either a config or the list of ALL errors found (not just the first).
struct LoadResult {
  std::optional<IncdConfig> config;
  std::vector<ConfigError> errors;
};

// Command-line values that replace the file's before validation (so they are checked, and
// reported by field path, like the file's): incd --manager, --switch-id.
struct ConfigOverrides {
  std::string manager_address;  // "" = the file's manager.address
  std::string switch_id;        // "" = the file's manager.switch_id
};

// Format by extension: .yaml/.yml → YAML, .json → JSON; anything else is an error. An
// unreadable file → one error with path "" naming the file and the errno text.
LoadResult load_config_file(const std::string& path, const ConfigOverrides& overrides = {});
LoadResult parse_config(std::string_view text, bool json, const ConfigOverrides& overrides = {});

}  // namespace epic::incd
