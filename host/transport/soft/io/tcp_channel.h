// TcpChannel: the out-of-band TCP connection two RDMA endpoints use to swap
// QP numbers, PSNs, GIDs and keys (as ibv_rc_pingpong does) and to fence the
// phases of a test. It runs on the SoftNic's Asio loop, so the QPs keep
// acknowledging and retransmitting while the program waits for its peer, and
// every wait is bounded: connect (retried while the server is not yet
// listening), accept, read and write each take a timeout and fail with a
// message that says what was awaited from whom.
// Thread-safety: none; the thread that runs the SoftNic owns the channel.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/transport/soft/io/soft_nic.h"
#include "host/transport/soft/io/status.h"

namespace epic::soft::io {

class TcpChannel {
 public:
  using Ms = std::chrono::milliseconds;

  // Connects to host:port (IPv4/IPv6 literal or name), retrying every 200 ms
  // while the connection is refused or unreachable, until `timeout`.
  static Result<std::unique_ptr<TcpChannel>> connect(SoftNic& nic, const std::string& host,
                                                     uint16_t port, Ms timeout);
  // Listens on TCP `port` (all IPv4 addresses) and accepts one connection.
  static Result<std::unique_ptr<TcpChannel>> accept(SoftNic& nic, uint16_t port, Ms timeout);

  Status write(const void* data, size_t n, Ms timeout);
  // Exactly n bytes. `what` names the awaited message in errors.
  Result<std::vector<uint8_t>> read(size_t n, Ms timeout, std::string_view what);
  // "address:port" of the peer.
  const std::string& peer() const { return peer_; }
  void close();

  ~TcpChannel();
  TcpChannel(const TcpChannel&) = delete;
  TcpChannel& operator=(const TcpChannel&) = delete;

 private:
  TcpChannel(SoftNic& nic, boost::asio::ip::tcp::socket socket);

  SoftNic& nic_;
  boost::asio::ip::tcp::socket socket_;
  std::string peer_;
};

}  // namespace epic::soft::io
