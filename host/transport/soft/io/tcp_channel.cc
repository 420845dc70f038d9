#include "host/transport/soft/io/tcp_channel.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "host/transport/soft/io/mono_clock.h"

namespace epic::soft::io {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Completion of one asynchronous operation. Handlers hold it by shared_ptr,
// so an operation abandoned on timeout completes harmlessly later.
struct Op {
  bool done = false;
  boost::system::error_code ec;
  size_t bytes = 0;
};

std::string endpoint_text(const tcp::endpoint& ep) {
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

// The message for a wait that ended unfinished: the port's failure, if that ended it.
std::string unfinished(const SoftNic& nic, const std::string& timeout_message) {
  return nic.failure().empty() ? timeout_message : nic.failure();
}

}  // namespace

TcpChannel::TcpChannel(SoftNic& nic, tcp::socket socket) : nic_(nic), socket_(std::move(socket)) {
  boost::system::error_code ec;
  const auto ep = socket_.remote_endpoint(ec);
  peer_ = ec ? "?" : endpoint_text(ep);
  socket_.set_option(tcp::no_delay(true), ec);
}

TcpChannel::~TcpChannel() { close(); }

void TcpChannel::close() {
  boost::system::error_code ec;
  if (socket_.is_open()) {
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
}

Result<std::unique_ptr<TcpChannel>> TcpChannel::connect(SoftNic& nic, const std::string& host,
                                                        uint16_t port, Ms timeout) {
  using R = std::unique_ptr<TcpChannel>;
  const std::string target = host + ":" + std::to_string(port);
  boost::system::error_code ec;
  tcp::resolver resolver(nic.io());
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return make_error<R>("cannot resolve " + host + ": " + ec.message());

  const auto deadline = MonoClock::now() + timeout;
  std::string last_error = "no attempt";
  int attempts = 0;
  while (MonoClock::now() < deadline && nic.failure().empty()) {
    for (const auto& entry : endpoints) {
      tcp::socket socket(nic.io());
      auto op = std::make_shared<Op>();
      socket.async_connect(entry.endpoint(), [op](const boost::system::error_code& e) {
        op->done = true;
        op->ec = e;
      });
      ++attempts;
      const auto left = deadline - MonoClock::now();
      if (!nic.run_until([&] { return op->done; },
                         std::chrono::duration_cast<std::chrono::nanoseconds>(left))) {
        socket.close(ec);
        last_error = unfinished(nic, "connection attempt still pending");
        break;
      }
      if (!op->ec) return {R(new TcpChannel(nic, std::move(socket))), ""};
      last_error = op->ec.message();
    }
    nic.run_for(std::chrono::milliseconds(200));  // the server may not listen yet
  }
  return make_error<R>("cannot connect to " + target + " within " + ms_text(timeout) + " (" +
                       std::to_string(attempts) + " attempts, last: " + last_error +
                       "): is the peer running and reachable?");
}

Result<std::unique_ptr<TcpChannel>> TcpChannel::accept(SoftNic& nic, uint16_t port, Ms timeout) {
  using R = std::unique_ptr<TcpChannel>;
  boost::system::error_code ec;
  tcp::acceptor acceptor(nic.io());
  const tcp::endpoint local(tcp::v4(), port);
  acceptor.open(local.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(local, ec);
  if (!ec) acceptor.listen(1, ec);
  if (ec)
    return make_error<R>("cannot listen on TCP port " + std::to_string(port) + ": " + ec.message());

  tcp::socket socket(nic.io());
  auto op = std::make_shared<Op>();
  acceptor.async_accept(socket, [op](const boost::system::error_code& e) {
    op->done = true;
    op->ec = e;
  });
  if (!nic.run_until([&] { return op->done; }, timeout)) {
    acceptor.close(ec);
    return make_error<R>(unfinished(nic, "no peer connected to TCP port " + std::to_string(port) +
                                             " within " + ms_text(timeout)));
  }
  if (op->ec)
    return make_error<R>("accept on TCP port " + std::to_string(port) + ": " + op->ec.message());
  return {R(new TcpChannel(nic, std::move(socket))), ""};
}

Status TcpChannel::write(const void* data, size_t n, Ms timeout) {
  auto op = std::make_shared<Op>();
  asio::async_write(socket_, asio::buffer(data, n),
                    [op](const boost::system::error_code& e, size_t bytes) {
                      op->done = true;
                      op->ec = e;
                      op->bytes = bytes;
                    });
  if (!nic_.run_until([&] { return op->done; }, timeout)) {
    close();
    return Status::failure(unfinished(nic_, "TCP write of " + std::to_string(n) + " bytes to " +
                                                peer_ + " did not finish within " +
                                                ms_text(timeout)));
  }
  if (op->ec) return Status::failure("TCP write to " + peer_ + ": " + op->ec.message());
  return Status::success();
}

Result<std::vector<uint8_t>> TcpChannel::read(size_t n, Ms timeout, std::string_view what) {
  using R = std::vector<uint8_t>;
  auto buf = std::make_shared<std::vector<uint8_t>>(n);
  auto op = std::make_shared<Op>();
  asio::async_read(socket_, asio::buffer(*buf),
                   [op, buf](const boost::system::error_code& e, size_t bytes) {
                     op->done = true;
                     op->ec = e;
                     op->bytes = bytes;
                   });
  if (!nic_.run_until([&] { return op->done; }, timeout)) {
    close();
    return make_error<R>(unfinished(nic_, "timed out after " + ms_text(timeout) + " waiting for " +
                                              std::string(what) + " from " + peer_));
  }
  if (op->ec == asio::error::eof) {
    return make_error<R>("peer " + peer_ + " closed the connection while we waited for " +
                         std::string(what) + " (" + std::to_string(op->bytes) + " of " +
                         std::to_string(n) + " bytes)");
  }
  if (op->ec) {
    return make_error<R>("TCP read of " + std::string(what) + " from " + peer_ + ": " +
                         op->ec.message());
  }
  return {std::move(*buf), ""};
}

}  // namespace epic::soft::io
