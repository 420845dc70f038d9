// arp_reply_tool: runs arp_reply() on frames given as hex, one per stdin line,
// and prints each reply as hex on its own line (an empty line: no reply).
// Usage: arp_reply_tool IPV4=MAC [IPV4=MAC...]   e.g. 10.0.0.1=02:00:00:00:00:01
// For the scapy oracle test (arp_scapy_test.py).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "datapath/switching/arp_responder.h"
#include "proto/vocab/addr.h"

namespace {

namespace vocab = epic::vocab;

bool from_hex(const std::string& s, std::vector<uint8_t>* out) {
  if (s.size() % 2) return false;
  out->clear();
  for (size_t i = 0; i < s.size(); i += 2) {
    unsigned v;
    if (std::sscanf(s.c_str() + i, "%2x", &v) != 1) return false;
    out->push_back(static_cast<uint8_t>(v));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using epic::switching::IncAddress;
  std::vector<IncAddress> addrs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const auto ip = epic::vocab::parse_ipv4(arg.substr(0, eq));
    const auto mac =
        eq == std::string::npos ? std::nullopt : epic::vocab::parse_mac(arg.substr(eq + 1));
    if (!ip || !mac) {
      std::cerr << "bad address '" << arg << "', want IPV4=MAC\n";
      return 2;
    }
    addrs.push_back({*ip, *mac});
  }
  std::string line;
  std::vector<uint8_t> frame;
  uint8_t reply[128];
  while (std::getline(std::cin, line)) {
    if (!from_hex(line, &frame)) {
      std::cerr << "bad hex line\n";
      return 2;
    }
    const size_t n = epic::switching::arp_reply(frame.data(), frame.size(), addrs.data(),
                                                addrs.size(), reply, sizeof reply);
    for (size_t i = 0; i < n; ++i) std::printf("%02x", reply[i]);
    std::printf("\n");
  }
  return 0;
}
