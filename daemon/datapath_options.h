// From incd's configuration (daemon/config) to the DPDK datapath's options: the one place
// where the config's vocabulary meets the datapath's (units, fault specs, port indices).
#pragma once

#include "daemon/config/config.h"
#include "datapath/dpdk/datapath.h"

namespace epic::incd {

dpdk::DatapathConfig datapath_options(const IncdConfig& c);

}  // namespace epic::incd
