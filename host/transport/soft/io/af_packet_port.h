// AfPacketPort: one Linux network interface as a raw Ethernet port — an
// AF_PACKET socket bound to the interface, non-blocking, that reads every frame
// arriving on it (whatever its destination MAC: the endpoint has its own MAC,
// distinct from the kernel's) and never its own transmissions
// (PACKET_IGNORE_OUTGOING, and PACKET_OUTGOING frames skipped where the kernel
// lacks it). Outgoing RoCE frames pass through a seeded LossInjector.
// Needs CAP_NET_RAW. Thread-safety: none; one thread owns a port.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "datapath/wire/roce_packet.h"
#include "host/transport/soft/io/loss_injector.h"
#include "host/transport/soft/io/status.h"

namespace epic::soft::io {

struct PortInfo {
  std::string name;
  int ifindex = 0;
  vocab::MacAddr kernel_mac{};  // the interface's own MAC (not the endpoint's)
  uint32_t mtu = 0;             // IP MTU of the interface
};

struct PortCounters {
  uint64_t rx_frames = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_truncated = 0;         // larger than the receive buffer: dropped
  uint64_t rx_errors = 0;            // receive errors other than "no frame waiting"
  uint64_t rx_outgoing_skipped = 0;  // our own (or the kernel's) transmissions
  uint64_t tx_frames = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_would_block = 0;            // socket buffer full: the caller retries later
  uint64_t tx_errors = 0;                 // other send errors: frame lost
  uint64_t tx_loss_injected = 0;          // dropped by the LossInjector
  uint64_t rx_ack_loss_injected = 0;      // incoming ACKs dropped by the LossInjector
  uint64_t rx_request_loss_injected = 0;  // other incoming RoCE frames dropped by it
};

enum class SendResult : uint8_t { kSent, kWouldBlock, kError };

class AfPacketPort {
 public:
  static constexpr size_t kMaxFrame = 16384;

  // Opens `ifname` (which must exist and be up). Errors name the interface and
  // the reason (missing interface, no permission, ...).
  static Result<std::unique_ptr<AfPacketPort>> open(std::string_view ifname,
                                                    const LossConfig& loss = {});
  ~AfPacketPort();
  AfPacketPort(const AfPacketPort&) = delete;
  AfPacketPort& operator=(const AfPacketPort&) = delete;

  int fd() const { return fd_; }
  const PortInfo& info() const { return info_; }

  // Receives one frame into buf[0..cap). Returns its length, or 0 when no
  // frame is waiting or the socket failed (rx_errno() tells). Skips outgoing
  // and truncated frames (counted).
  size_t recv(uint8_t* buf, size_t cap);
  // Sends one frame. `roce` frames are subject to injected loss (a dropped
  // frame reports kSent: the wire lost it). kWouldBlock: nothing was sent, try
  // again when the socket is writable. kError: the frame is lost (counted).
  SendResult send(const uint8_t* frame, size_t len, bool roce);

  // Whether to drop an incoming ACK frame (injected loss; counted). The caller
  // asks once per received ACK, after it recognised the opcode.
  bool drop_rx_ack();
  // The same for every other incoming RoCE frame (the peer's requests).
  bool drop_rx_request();

  const LossConfig& loss_config() const { return loss_.config(); }
  PortCounters& counters() { return counters_; }
  const PortCounters& counters() const { return counters_; }
  // errno of the last kError, for a diagnostic.
  int last_errno() const { return last_errno_; }
  // errno of the last receive failure (0: none), e.g. ENETDOWN.
  int rx_errno() const { return rx_errno_; }
  // Frames the kernel dropped for this socket because its receive buffer was full
  // (PACKET_STATISTICS tp_drops, summed across calls: the kernel resets them when read). A
  // syscall: for reports, not for the receive loop.
  uint64_t kernel_rx_drops() const;

 private:
  AfPacketPort(int fd, PortInfo info, const LossConfig& loss)
      : fd_(fd), info_(std::move(info)), loss_(loss) {}

  int fd_ = -1;
  PortInfo info_;
  LossInjector loss_;
  PortCounters counters_;
  int last_errno_ = 0;
  int rx_errno_ = 0;
  mutable uint64_t kernel_rx_drops_ = 0;
};

}  // namespace epic::soft::io
