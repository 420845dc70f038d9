// RingLinks: a rank's two RC QPs of the host-based ring (host_collectives.h)
// and the I/O that drives them — the left QP (qpn_base, receives from the left
// neighbour) and the right QP (qpn_base + 1, sends to the right neighbour).
//
//   soft   one SoftNic (one AF_PACKET port, one ARP agent, one event loop)
//          with two attached RcQps, created at connect() once the
//          neighbours' addresses are known
//   verbs  two VerbsTransports on one device, created (INIT) by open so that
//          their QPNs are consecutive, connected (RTR, RTS) at connect()
//
// Thread-safety: none; the thread that owns the HostCollectives.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "host/fallback/host_collectives.h"
#include "host/transport/endpoint.h"

namespace epic::host::fallback {

class RingLinks {
 public:
  virtual ~RingLinks() = default;
  virtual uint32_t qpn_base() const = 0;
  // Connects the left QP to left.qpn_base + 1 and the right QP to right.qpn_base.
  virtual soft::io::Status connect(const RingMember& left, const RingMember& right) = 0;
  virtual Endpoint& to_right() = 0;
  virtual Endpoint& from_left() = 0;
  // Drives both QPs until done() (which may post work), `timeout` or a failure.
  virtual bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) = 0;
  // Why the transport stopped working ("" while it works).
  virtual std::string failure() const = 0;
};

std::unique_ptr<RingLinks> open_soft_links(const RingOptions& o, std::string& error);
// nullptr and `error` when the build has no libibverbs or the device cannot be opened.
std::unique_ptr<RingLinks> open_verbs_links(const RingOptions& o, std::string& error);

}  // namespace epic::host::fallback
