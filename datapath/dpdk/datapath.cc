#include "datapath/dpdk/datapath.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <utility>

#include "datapath/dpdk/worker.h"
#include "datapath/engine/mode2_engine.h"
#include "proto/vocab/addr.h"

namespace epic::dpdk {

namespace e = epic::engine;
namespace sw = epic::switching;

namespace {

constexpr uint32_t kL2Overhead = 14 + 4;  // Ethernet header and one VLAN tag (no FCS)

// af_packet rings: each frame slot holds a TPACKET2 header (32 bytes, aligned) and the frame.
// The PMD's defaults (framesz 2048) carry frames up to 2016 bytes; a larger port MTU needs
// bigger slots. The PMD addresses slot i at i * framesz, so a block must hold whole slots:
// slots are a multiple of 256 bytes and a block is 16 of them (a multiple of the page);
// framecnt must then be a multiple of 16.
constexpr uint32_t kTpacketHeader = 32;
constexpr uint32_t kAfPacketSlotsPerBlock = 16;
bool is_af_packet(const std::string& device) { return device.rfind("net_af_packet", 0) == 0; }
uint32_t af_packet_frame_size(uint16_t mtu) {
  return (uint32_t{mtu} + kL2Overhead + kTpacketHeader + 255u) & ~255u;
}
bool needs_big_af_packet_frames(const PortOptions& p) {
  return is_af_packet(p.device) && af_packet_frame_size(p.mtu) > 2048 &&
         p.device.find("framesz=") == std::string::npos;
}

int launch(void* arg) { return static_cast<Worker*>(arg)->run(); }

std::string errno_text(int rc) { return rte_strerror(rc < 0 ? -rc : rc); }

}  // namespace

Datapath::Datapath() = default;

Datapath::~Datapath() {
  stop();
  if (eal_ready_) eal_cleanup();
}

std::string Datapath::open_ports() {
  const unsigned workers = config_.workers;
  for (const auto& po : config_.ports) {
    uint16_t id = 0;
    const std::string name = device_name(po.device);
    if (is_ring_device(po.device)) {
      // In-memory port for benchmarks and tests: rings "<name>_rx<q>" (the port receives what
      // is enqueued there) and "<name>_tx<q>" (what it sends), one pair per worker.
      const std::string base = po.device.substr(5);
      std::vector<rte_ring*> rx, tx;
      for (unsigned q = 0; q < workers; ++q) {
        for (auto [dir, vec] : {std::pair{"_rx", &rx}, {"_tx", &tx}}) {
          const std::string rn = base + dir + std::to_string(q);
          rte_ring* r = rte_ring_create(rn.c_str(), 16384, static_cast<int>(rte_socket_id()),
                                        RING_F_SP_ENQ | RING_F_SC_DEQ);
          if (r == nullptr)
            return "port " + po.name + ": ring " + rn + ": " + rte_strerror(rte_errno);
          vec->push_back(r);
          port_rings_.push_back(r);
        }
      }
      const int rc =
          rte_eth_from_rings(base.c_str(), rx.data(), workers, tx.data(), workers, rte_socket_id());
      if (rc < 0) return "port " + po.name + ": rte_eth_from_rings: " + rte_strerror(rte_errno);
      id = static_cast<uint16_t>(rc);
    } else if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) {
      return "port " + po.name + ": device '" + name +
             "' was not probed by EAL (check the devargs)";
    }
    rte_eth_dev_info info{};
    if (int rc = rte_eth_dev_info_get(id, &info); rc != 0)
      return "port " + po.name + ": " + errno_text(rc);
    if (info.max_rx_queues < workers || info.max_tx_queues < workers)
      return "port " + po.name + ": " + std::to_string(workers) + " workers need " +
             std::to_string(workers) + " RX and TX queues; the device has " +
             std::to_string(info.max_rx_queues) + "/" + std::to_string(info.max_tx_queues) +
             " (af_packet: qpairs=)";
    rte_eth_conf conf{};
    if (workers > 1 && info.flow_type_rss_offloads != 0) {
      conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
      conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads & RTE_ETH_RSS_IP;
    }
    if (int rc = rte_eth_dev_configure(id, static_cast<uint16_t>(workers),
                                       static_cast<uint16_t>(workers), &conf);
        rc != 0)
      return "port " + po.name + ": configure: " + errno_text(rc);
    // DPDK 22.11's af_packet reports a fixed 1518-byte max_rx_pktlen whatever its ring slots
    // hold, so it refuses any MTU above 1500; its real limit is the slot size set above (and
    // the kernel interface's own MTU, which is the operator's): skip the check there.
    const bool af_packet_jumbo = is_af_packet(po.device) && po.mtu > 1500;
    if (int rc = rte_eth_dev_set_mtu(id, po.mtu);
        rc != 0 && rc != -ENOTSUP && !(af_packet_jumbo && rc == -EINVAL))
      return "port " + po.name + ": MTU " + std::to_string(po.mtu) + ": " + errno_text(rc);
    uint16_t nrx = po.rx_descriptors, ntx = po.tx_descriptors;
    rte_eth_dev_adjust_nb_rx_tx_desc(id, &nrx, &ntx);
    const int socket = rte_eth_dev_socket_id(id) < 0 ? 0 : rte_eth_dev_socket_id(id);
    for (unsigned q = 0; q < workers; ++q) {
      if (int rc = rte_eth_rx_queue_setup(id, static_cast<uint16_t>(q), nrx,
                                          static_cast<unsigned>(socket), nullptr, pool_);
          rc != 0)
        return "port " + po.name + ": RX queue " + std::to_string(q) + ": " + errno_text(rc);
      if (int rc = rte_eth_tx_queue_setup(id, static_cast<uint16_t>(q), ntx,
                                          static_cast<unsigned>(socket), nullptr);
          rc != 0)
        return "port " + po.name + ": TX queue " + std::to_string(q) + ": " + errno_text(rc);
    }
    if (int rc = rte_eth_dev_start(id); rc != 0)
      return "port " + po.name + ": start: " + errno_text(rc);
    rte_eth_promiscuous_enable(id);  // a switch port hears every destination
    port_ids_.push_back(id);
    rte_ether_addr mac{};
    rte_eth_macaddr_get(id, &mac);
    vocab::MacAddr m;
    std::copy(mac.addr_bytes, mac.addr_bytes + 6, m.begin());
    port_info_.push_back(
        {po.name, id, vocab::format_mac(m), info.driver_name ? info.driver_name : ""});
  }
  return "";
}

std::string Datapath::build_snapshot(const std::vector<e::GroupConfig>& groups,
                                     std::unique_ptr<Snapshot>& out) const {
  auto s = std::make_unique<Snapshot>();
  s->pipeline.inc_addresses = config_.inc_addresses;
  s->pipeline.drop_bad_icrc = config_.drop_bad_icrc;
  for (const PortOptions& p : config_.ports) s->pipeline.max_frame.push_back(p.mtu + kL2Overhead);
  const Snapshot* cur = publisher_ ? publisher_->current() : nullptr;
  // Everything a worker's attach could refuse is refused here, before any worker sees it.
  std::set<uint32_t> ids;
  std::set<std::pair<uint32_t, uint32_t>> endpoints;
  std::vector<size_t> per_worker(config_.workers, 0), edges(config_.workers, 0);
  for (size_t i = 0; i < groups.size(); ++i) {
    const e::GroupConfig& g = groups[i];
    const std::string who = "group " + std::to_string(g.group_id) + ": ";
    for (const auto& c : g.children) {
      if (c.port >= config_.ports.size()) return who + "child port out of range";
    }
    if (g.parent && g.parent->port >= config_.ports.size()) return who + "parent port out of range";
    if (!ids.insert(g.group_id).second) return who + "the group id appears twice";
    for (const auto& c : g.children) {
      if (!endpoints.insert({c.local.ipv4, c.local.qpn}).second)
        return who + "a child's local (IP, QPN) is already an endpoint here";
    }
    if (g.parent && !endpoints.insert({g.parent->local.ipv4, g.parent->local.qpn}).second)
      return who + "the parent edge's local (IP, QPN) is already an endpoint here";
    GroupEntry entry;
    entry.config = g;
    entry.owner = static_cast<uint16_t>(i % config_.workers);
    // A group already installed with the same configuration keeps its worker and its state.
    if (cur != nullptr) {
      for (const GroupEntry& old : cur->groups) {
        if (old.config == g) {
          entry.owner = old.owner;
          entry.slots = old.slots;
          entry.instance = old.instance;
        }
      }
    }
    if (std::string e = e::check_config(g); !e.empty()) return who + e;
    if (!entry.slots) {
      try {
        entry.slots = std::make_shared<e::SlotRegion>(g.window, g.pmtu, g.arith, g.num_ranks);
      } catch (const std::bad_alloc&) {
        return who + "no memory for " + std::to_string(2 * uint64_t{g.window}) + " slots";
      }
    }
    if (!entry.instance) {
      std::string error;
      std::unique_ptr<e::GroupInstance> inst = e::prepare_group(g, entry.slots.get(), error);
      if (!inst) return who + error;
      entry.instance = std::move(inst);
    }
    if (++per_worker[entry.owner] > e::Mode2Engine::kDefaultMaxGroups)
      return who + "worker " + std::to_string(entry.owner) + " already runs " +
             std::to_string(e::Mode2Engine::kDefaultMaxGroups) + " groups";
    edges[entry.owner] += g.children.size() + (g.parent ? 1 : 0);
    if (edges[entry.owner] > e::LookupTable::kDefaultMaxEdges)
      return who + "worker " + std::to_string(entry.owner) + " would hold more than " +
             std::to_string(e::LookupTable::kDefaultMaxEdges) + " engine edges";
    for (const auto& c : g.children)
      s->pipeline.owner[sw::PipelineConfig::key(c.local.ipv4, c.local.qpn)] = entry.owner;
    if (g.parent)
      s->pipeline.owner[sw::PipelineConfig::key(g.parent->local.ipv4, g.parent->local.qpn)] =
          entry.owner;
    s->groups.push_back(std::move(entry));
  }
  out = std::move(s);
  return "";
}

std::vector<std::string> Datapath::eal_devices(const DatapathConfig& c) {
  std::vector<std::string> out;
  for (const PortOptions& p : c.ports) {
    if (is_ring_device(p.device)) continue;  // created after EAL init, see open_ports()
    std::string d = p.device;
    // af_packet: one queue pair per worker (the kernel's fan-out spreads flows over them).
    if (is_af_packet(d) && d.find("qpairs=") == std::string::npos && c.workers > 1)
      d += ",qpairs=" + std::to_string(c.workers);
    // af_packet: ring slots for the port's MTU (framesz), one per block (blocksz, page multiple).
    if (needs_big_af_packet_frames(p)) {
      const uint32_t frame = af_packet_frame_size(p.mtu);
      d += ",framesz=" + std::to_string(frame) +
           ",blocksz=" + std::to_string(frame * kAfPacketSlotsPerBlock);
    }
    out.push_back(d);
  }
  return out;
}

std::string Datapath::start(const DatapathConfig& config) {
  if (running_) return "datapath already running";
  if (eal_ready_) return "EAL can be initialised once per process; restart incd instead";
  config_ = config;
  if (config_.workers == 0) return "workers must be >= 1";
  if (config_.ports.empty()) return "no ports configured";
  if (config_.ports.size() > kMaxPorts) return "at most " + std::to_string(kMaxPorts) + " ports";
  config_.eal.devices = eal_devices(config_);
  if (std::string err = eal_init(config_.eal); !err.empty()) return err;
  eal_ready_ = true;
  unsigned lcore;
  RTE_LCORE_FOREACH_WORKER(lcore) { lcores_.push_back(lcore); }
  if (lcores_.size() < config_.workers)
    return "eal.lcores gives " + std::to_string(lcores_.size()) + " worker lcore(s) for " +
           std::to_string(config_.workers) + " workers (the first lcore is the control lcore)";

  uint16_t max_mtu = 0;
  for (const auto& p : config_.ports) max_mtu = std::max(max_mtu, p.mtu);
  // The af_packet PMD refuses an RX queue whose ring slot (less its header) exceeds the mbuf.
  uint32_t data_room = std::max<uint32_t>(2048, max_mtu + kL2Overhead);
  for (const auto& p : config_.ports) {
    if (needs_big_af_packet_frames(p))
      data_room = std::max(data_room, af_packet_frame_size(p.mtu) - kTpacketHeader);
  }
  const uint32_t room = RTE_PKTMBUF_HEADROOM + data_room;
  // Enough for every RX ring to be full, frames in flight to TX and held by fault stages, and
  // every worker's class queues full (egress.h: egress_frames per class and port).
  size_t queued = 0;
  for (const switching::EgressSpec& e : config_.egress) {
    for (const switching::ClassSpec& c : e.classes) queued += switching::egress_frames(c);
  }
  const auto nmbufs =
      static_cast<unsigned>((config_.ports.size() * 2048u + queued) * config_.workers + 8191u);
  pool_ = rte_pktmbuf_pool_create("incd_mbufs", nmbufs, 256, 0, static_cast<uint16_t>(room),
                                  static_cast<int>(rte_socket_id()));
  if (pool_ == nullptr)
    return std::string("mbuf pool: ") + rte_strerror(rte_errno) +
           " (more memory: eal.memory_mb, or hugepages)";
  if (std::string err = open_ports(); !err.empty()) return err;

  for (unsigned w = 0; w < config_.workers; ++w) {
    const std::string name = "incd_handoff" + std::to_string(w);
    rte_ring* r =
        rte_ring_create(name.c_str(), 8192, static_cast<int>(rte_socket_id()), RING_F_SC_DEQ);
    if (r == nullptr) return "ring " + name + ": " + rte_strerror(rte_errno);
    rings_.push_back(r);
  }
  try {
    publisher_ = std::make_unique<SnapshotPublisher>(config_.workers);
  } catch (const std::exception& ex) {
    return ex.what();
  }
  std::unique_ptr<Snapshot> snap;
  if (std::string err = build_snapshot(config_.groups, snap); !err.empty()) return err;
  publisher_->publish(std::move(snap));

  for (unsigned w = 0; w < config_.workers; ++w) {
    slots_.push_back(std::make_unique<TelemetrySlot>());
    WorkerSetup ws;
    ws.index = w;
    ws.ports = port_ids_;
    ws.pool = pool_;
    ws.handoff = rings_;
    ws.snapshots = publisher_.get();
    ws.telemetry = slots_.back().get();
    ws.stop = &stop_;
    ws.burst = config_.burst;
    ws.l2_table_size = config_.l2_table_size;
    ws.l2_aging_ns = config_.l2_aging_ns;
    ws.udp_source_ports = config_.udp_source_ports;
    ws.idle_sleep_us = config_.idle_sleep_us;
    ws.rx_faults.resize(config_.ports.size());
    ws.tx_faults.resize(config_.ports.size());
    for (const FaultOptions& f : config_.faults) {
      if (f.port < config_.ports.size()) (f.tx ? ws.tx_faults : ws.rx_faults)[f.port] = f.spec;
    }
    ws.egress = config_.egress;
    ws.egress.resize(config_.ports.size());
    workers_.push_back(std::make_unique<Worker>(std::move(ws)));
  }
  stop_ = false;
  for (unsigned w = 0; w < config_.workers; ++w) {
    if (int rc = rte_eal_remote_launch(launch, workers_[w].get(), lcores_[w]); rc != 0) {
      stop_ = true;
      rte_eal_mp_wait_lcore();
      return "cannot launch worker " + std::to_string(w) + " on lcore " +
             std::to_string(lcores_[w]) + ": " + errno_text(rc);
    }
  }
  running_ = true;
  return "";
}

std::string Datapath::set_groups(const std::vector<e::GroupConfig>& groups) {
  if (!running_) return "datapath not running";
  std::unique_ptr<Snapshot> snap;
  if (std::string err = build_snapshot(groups, snap); !err.empty()) return err;
  publisher_->publish(std::move(snap));
  config_.groups = groups;
  return "";
}

bool Datapath::telemetry(unsigned worker, WorkerTelemetry& out) const {
  return worker < slots_.size() && slots_[worker]->read(out);
}

Datapath::StopTimes Datapath::stop() {
  StopTimes times;
  if (!eal_ready_) return times;
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  auto t = Clock::now();
  stop_ = true;
  rte_eal_mp_wait_lcore();
  running_ = false;
  times.workers_s = since(t);
  t = Clock::now();
  for (uint16_t id : port_ids_) rte_eth_dev_stop(id);
  times.ports_stop_s = since(t);
  t = Clock::now();
  for (uint16_t id : port_ids_) rte_eth_dev_close(id);  // af_xdp detaches its XDP program here
  times.ports_close_s = since(t);
  t = Clock::now();
  port_ids_.clear();
  workers_.clear();
  publisher_.reset();
  for (rte_ring* r : rings_) rte_ring_free(r);
  rings_.clear();
  for (rte_ring* r : port_rings_) rte_ring_free(r);
  port_rings_.clear();
  if (pool_ != nullptr) rte_mempool_free(pool_);
  pool_ = nullptr;
  times.release_s = since(t);
  return times;
}

}  // namespace epic::dpdk
