// Datapath: incd's DPDK side as one object — EAL, the mbuf pool, the ports
// (any PMD: af_packet/af_xdp on veths or taps, net_tap, net_pcap, net_ring,
// net_null, real NICs), one RX and one TX queue per worker on every port, the
// hand-off rings between workers, the RCU-published Snapshot, and the worker
// lcores. start() brings everything up and launches the workers; stop() makes
// them finish their loop, stops and closes the ports (no XDP program is left
// on an interface), and frees what they held.
// Threading: start/stop/publish/telemetry from the control thread only.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "datapath/dpdk/eal.h"
#include "datapath/dpdk/snapshot.h"
#include "datapath/dpdk/telemetry.h"
#include "datapath/engine/group.h"
#include "datapath/switching/egress.h"
#include "datapath/switching/fault_stage.h"
#include "datapath/switching/inc_address.h"

struct rte_mempool;
struct rte_ring;

namespace epic::dpdk {

struct PortOptions {
  std::string name;
  // devargs: "net_af_packet0,iface=x", a PCI address, or "ring:NAME" (in memory: rings
  // NAME_rx<q> / NAME_tx<q> per worker q, for benchmarks and tests)
  std::string device;
  uint16_t mtu = 1500;
  uint16_t rx_descriptors = 1024, tx_descriptors = 1024;
};

struct FaultOptions {
  size_t port = 0;
  bool tx = false;  // false: as frames arrive; true: as they leave
  switching::FaultSpec spec;
};

struct DatapathConfig {
  EalOptions eal;  // devices are filled from `ports`
  unsigned workers = 1;
  uint32_t burst = 32;
  uint32_t idle_sleep_us = 0;
  std::vector<PortOptions> ports;
  std::vector<switching::IncAddress> inc_addresses;
  uint32_t l2_table_size = 4096;
  uint64_t l2_aging_ns = 300'000'000'000;
  bool drop_bad_icrc = false;
  vocab::UdpPortRange udp_source_ports;  // the engine's edge binding (edge_binding.h)
  std::vector<FaultOptions> faults;
  // Per port (index = port): its traffic classes and line rate (egress.h); missing or
  // disabled: frames go straight to the port.
  std::vector<switching::EgressSpec> egress;
  std::vector<engine::GroupConfig> groups;  // installed at start
};

struct PortInfo {
  std::string name;
  uint16_t port_id = 0;
  std::string mac;  // the port's own MAC, for logs
  std::string driver;
};

class Datapath {
 public:
  Datapath();
  ~Datapath();  // stop() if running
  Datapath(const Datapath&) = delete;
  Datapath& operator=(const Datapath&) = delete;

  // "" on success, else a message naming what failed (EAL, port X, lcores, group Y).
  std::string start(const DatapathConfig& config);
  // Stops the workers, then stops and closes every port; returns how long each part took, so
  // that incd can say what a slow stop waited for.
  struct StopTimes {
    double workers_s = 0;      // until every worker lcore left its loop
    double ports_stop_s = 0;   // rte_eth_dev_stop of every port
    double ports_close_s = 0;  // rte_eth_dev_close of every port (af_packet: the sockets)
    double release_s = 0;      // workers, snapshots, rings and the mbuf pool freed
  };
  StopTimes stop();
  // The devices EAL probes for `c` (ring ports excluded; af_packet gets qpairs = workers).
  static std::vector<std::string> eal_devices(const DatapathConfig& c);
  bool running() const { return running_; }

  // Replaces the installed groups (control path; blocks one RCU grace period).
  // "" on success, else why (nothing changes on error).
  std::string set_groups(const std::vector<engine::GroupConfig>& groups);

  unsigned workers() const { return static_cast<unsigned>(slots_.size()); }
  bool telemetry(unsigned worker, WorkerTelemetry& out) const;
  const std::vector<PortInfo>& ports() const { return port_info_; }
  const DatapathConfig& config() const { return config_; }

 private:
  std::string open_ports();
  std::string build_snapshot(const std::vector<engine::GroupConfig>& groups,
                             std::unique_ptr<Snapshot>& out) const;

  DatapathConfig config_;
  bool eal_ready_ = false;
  bool running_ = false;
  rte_mempool* pool_ = nullptr;
  std::vector<uint16_t> port_ids_;
  std::vector<PortInfo> port_info_;
  std::vector<rte_ring*> rings_;       // hand-off, one per worker
  std::vector<rte_ring*> port_rings_;  // of "ring:" ports
  std::unique_ptr<SnapshotPublisher> publisher_;
  std::vector<std::unique_ptr<TelemetrySlot>> slots_;
  std::vector<std::unique_ptr<class Worker>> workers_;
  std::vector<unsigned> lcores_;
  std::atomic<bool> stop_{false};
};

}  // namespace epic::dpdk
