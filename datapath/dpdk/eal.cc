#include "datapath/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <unistd.h>

#include <cstring>

namespace epic::dpdk {

bool is_vdev(const std::string& device) { return device.rfind("net_", 0) == 0; }

std::string device_name(const std::string& device) { return device.substr(0, device.find(',')); }

std::vector<std::string> eal_arguments(const EalOptions& o, const std::string& program) {
  // "0-2" is an lcore list (-l); "0@0,1@1,2@1" maps lcores onto CPUs (--lcores), e.g. more
  // workers than cores in a lab.
  const bool mapped = o.lcores.find_first_of("@(") != std::string::npos;
  std::vector<std::string> a{program, mapped ? "--lcores" : "-l", o.lcores};
  if (o.hugepages) {
    a.emplace_back("--in-memory");
  } else {
    a.insert(a.end(), {"--no-huge", "-m", std::to_string(o.memory_mb)});
  }
  const bool any_pci = [&] {
    for (const auto& d : o.devices) {
      if (!is_vdev(d)) return true;
    }
    return false;
  }();
  if (!any_pci) a.emplace_back("--no-pci");
  a.insert(a.end(), {"--no-shconf", "--no-telemetry", "--file-prefix",
                     o.file_prefix.empty() ? "incd-" + std::to_string(::getpid()) : o.file_prefix,
                     "--log-level=lib.eal:" + o.log_level, "--log-level=" + o.log_level});
  for (const auto& d : o.devices) {
    if (is_vdev(d)) {
      a.push_back("--vdev=" + d);
    } else {
      a.insert(a.end(), {"-a", d});
    }
  }
  a.insert(a.end(), o.extra_args.begin(), o.extra_args.end());
  return a;
}

std::string eal_init(const EalOptions& o) {
  std::vector<std::string> args = eal_arguments(o);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  if (rte_eal_init(static_cast<int>(args.size()), argv.data()) < 0) {
    std::string why = std::string("rte_eal_init failed: ") + rte_strerror(rte_errno) + " (args:";
    for (const auto& s : args) why += " " + s;
    return why + ")";
  }
  return "";
}

void eal_cleanup() { rte_eal_cleanup(); }

}  // namespace epic::dpdk
