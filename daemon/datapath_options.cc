#include "daemon/datapath_options.h"

#include "daemon/config/traffic_class_validate.h"

namespace epic::incd {

dpdk::DatapathConfig datapath_options(const IncdConfig& c) {
  dpdk::DatapathConfig d;
  d.eal.lcores = c.eal.lcores;
  d.eal.hugepages = c.eal.hugepages;
  d.eal.memory_mb = c.eal.memory_mb;
  d.eal.file_prefix = c.eal.file_prefix;
  d.eal.log_level = c.eal.log_level;
  d.eal.extra_args = c.eal.extra_args;
  d.workers = c.workers;
  d.burst = c.burst;
  d.idle_sleep_us = c.idle_sleep_us;
  for (const PortConfig& p : c.ports)
    d.ports.push_back({p.name, p.device, p.mtu, p.rx_descriptors, p.tx_descriptors});
  d.inc_addresses = c.sw.inc_addresses;
  d.l2_table_size = c.sw.l2_table_size;
  d.l2_aging_ns = uint64_t{c.sw.l2_aging_s} * 1'000'000'000;
  d.drop_bad_icrc = c.sw.bad_icrc == BadIcrc::kDrop;
  d.udp_source_ports = c.sw.udp_source_ports;
  for (const FaultConfig& f : c.faults) {
    dpdk::FaultOptions o;
    o.port = f.port;
    o.tx = f.direction == Direction::kTx;
    o.spec.drop = f.drop;
    o.spec.duplicate = f.duplicate;
    o.spec.reorder = f.reorder;
    o.spec.mark_ce = f.mark_ce;
    o.spec.delay_ns = uint64_t{f.delay_us} * 1000;
    o.spec.seed = f.seed;
    d.faults.push_back(o);
  }
  for (size_t p = 0; p < c.ports.size(); ++p) d.egress.push_back(egress_spec(c, p));
  d.groups = c.groups;
  return d;
}

}  // namespace epic::incd
