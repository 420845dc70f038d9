// EAL set-up for incd: the DPDK arguments built from configuration (no
// hugepages for CI and veth labs; hugepages for production), one init per
// process, and its cleanup. Devices (vdev devargs or PCI addresses) become
// --vdev / -a arguments so EAL probes exactly the configured ports.
// Control path only.
#pragma once

#include <string>
#include <vector>

namespace epic::dpdk {

struct EalOptions {
  // -l list ("0-1": first = main (control) lcore, the rest run workers), or an --lcores map
  // when it contains '@' ("0@0,1@1,2@1": three lcores on two CPUs)
  std::string lcores = "0-1";
  bool hugepages = false;  // false: --no-huge -m memory_mb
  unsigned memory_mb = 256;
  std::string file_prefix;  // "" = incd-<pid>
  std::string log_level = "warning";
  std::vector<std::string> devices;  // "net_af_packet0,iface=x" (vdev) or "0000:3b:00.0" (PCI)
  std::vector<std::string> extra_args;
};

// The argv EAL will see (argv[0] included), for logs and tests.
std::vector<std::string> eal_arguments(const EalOptions& o, const std::string& program = "incd");

// Whether a device string names a virtual device (vdev) rather than a PCI/bus address.
bool is_vdev(const std::string& device);
// "ring:NAME": an in-memory port the Datapath builds from rte_rings (not an EAL device).
inline bool is_ring_device(const std::string& device) { return device.rfind("ring:", 0) == 0; }
// The ethdev name EAL gives the device ("net_af_packet0" for a vdev, the address for PCI).
std::string device_name(const std::string& device);

// rte_eal_init; "" on success, else why (EAL's rte_errno text and the arguments).
std::string eal_init(const EalOptions& o);
void eal_cleanup();

}  // namespace epic::dpdk
