#include "manager/core/limits.h"

#include <cstdio>

#include "datapath/wire/addr.h"

namespace epic::manager {

bool valid_window(uint32_t window) {
  return window >= 1 && window <= kMaxWindow && (window & (window - 1)) == 0;
}

bool valid_pmtu(uint32_t pmtu) {
  return pmtu == 256 || pmtu == 512 || pmtu == 1024 || pmtu == 2048 || pmtu == 4096;
}

bool is_unicast_ipv4(uint32_t ipv4) {
  const uint32_t first = ipv4 >> 24;
  return ipv4 != 0 && ipv4 != 0xFFFFFFFFu && first != 127 && first < 224;
}

bool is_unicast_mac(const wire::MacAddr& mac) {
  bool zero = true;
  for (uint8_t b : mac) zero = zero && b == 0;
  return !zero && (mac[0] & 1) == 0;
}

std::string ipv4_text(uint32_t ipv4) { return wire::format_ipv4(ipv4); }

std::string mac_text(const wire::MacAddr& mac) { return wire::format_mac(mac); }

std::string qpn_text(uint32_t qpn) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%06x", qpn);
  return buf;
}

}  // namespace epic::manager
