// inc-rc-peer's command line: modes, endpoint identity, RC parameters, loss
// injection, bounds on every wait. parse_options() validates everything once;
// the rest of the tool reads plain values. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/vocab/addr.h"
#include "tools/inc-rc-peer/xfer_wire.h"

namespace epic::tools::rc_peer {

enum class Mode : uint8_t { kPingpong, kXfer };

struct Options {
  Mode mode = Mode::kPingpong;
  std::string peer;  // pingpong: server to connect to (client role); xfer: agent (controller role)
  bool help = false;

  // endpoint
  std::string iface;
  uint32_t ip = 0;  // host order
  vocab::MacAddr mac{};
  uint16_t tcp_port = 0;
  uint32_t qpn = 0x000123;
  std::optional<uint32_t> psn;  // default: drawn from the seed
  uint16_t udp_sport = 0xC000;

  // RC
  uint16_t mtu = 1024;
  uint32_t rto_ms = 100;
  uint8_t retry = 7;
  uint32_t window = 128;

  // loss injection on our side
  double tx_loss = 0.0;
  double ack_loss = 0.0;
  double rx_loss = 0.0;
  uint64_t seed = 1;

  // bounds
  uint32_t timeout_s = 30;          // every TCP wait and every completion wait
  uint32_t connect_timeout_s = 60;  // TCP connect retries / accept
  uint32_t arp_timeout_ms = 5000;

  // pingpong
  uint32_t size = 4096;
  uint32_t iters = 10;

  // xfer
  std::vector<uint32_t> sizes = {0, 1, 1023, 1024, 1025, 4096, 65536, 1048576};
  std::vector<XferOp> ops = {XferOp::kSend, XferOp::kSendImm, XferOp::kWrite, XferOp::kWriteImm};
  std::vector<XferDir> dirs = {XferDir::kToAgent, XferDir::kToController};
  uint32_t max_size = 1 << 20;  // agent: largest message it accepts
  uint32_t late_recv_ms = 0;    // receivers post late by this much (RNR NAKs)

  std::string label;  // case name in the summary line
  bool verbose = false;
};

struct ParsedOptions {
  Options options;
  std::string error;  // empty: options are valid
};

ParsedOptions parse_options(int argc, char** argv);
extern const char* const kUsage;

}  // namespace epic::tools::rc_peer
