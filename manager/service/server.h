// ManagerServer: inc-manager as a running service — the Controller on its own io_context
// thread (the strand every call is serialised onto, with the housekeeping timer), and a gRPC
// server with the IncManager and IncAgentControl services on one listening address
// ("host:port" or "unix:/path"). TLS from PEM files, mutual when a CA is given. Callers are
// authorised by their certificate's role with mutual TLS; without client certificates every
// caller is the local operator, so that is served only on a unix socket (its file mode,
// ServerOptions::socket_mode, says who may connect) unless allowed explicitly (insecure).
// Threading: start/stop from one thread; the services run on gRPC's and the io thread.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <thread>

#include "manager/core/error.h"
#include "manager/service/agent_stream.h"
#include "manager/service/controller.h"
#include "manager/service/options.h"

namespace grpc {
class Server;
}

namespace epic::manager::service {

class ManagerApi;
class AgentApi;

struct TlsFiles {
  std::string cert{}, key{};  // the server's certificate chain and key (PEM); both or neither
  std::string ca{};           // set: clients must present a certificate signed by it
};

// The largest request inc-manager reads (gRPC's own default); a larger one is answered
// RESOURCE_EXHAUSTED by gRPC before any handler runs. An agent's Register lists its installed
// contexts: thousands of groups fit.
inline constexpr uint32_t kDefaultMaxRequestBytes = 4u << 20;
inline constexpr uint32_t kMinMaxRequestBytes = 4096;
inline constexpr uint32_t kMaxMaxRequestBytes = 64u << 20;

inline constexpr const char* kDefaultListen = "unix:/run/epic/inc-manager.sock";
inline constexpr uint32_t kDefaultSocketMode = 0600;

struct ServerOptions {
  std::string listen = kDefaultListen;
  uint32_t socket_mode = kDefaultSocketMode;             // of a unix: socket's file, 0..0777
  uint32_t max_request_bytes = kDefaultMaxRequestBytes;  // kMinMaxRequestBytes..kMaxMaxRequestBytes
  TlsFiles tls{};
  // Serve without client certificates (plaintext or TLS without --tls-ca) on a TCP or an
  // abstract socket: everyone who reaches it is the operator. Trusted lab networks only.
  bool insecure = false;
  ServiceOptions service{};
};

// Wall-clock milliseconds since the epoch (times in the store survive a restart).
Millis wall_clock();

class ManagerServer {
 public:
  // Loads the store, binds, starts serving. INVALID_ARGUMENT for options, UNAVAILABLE when the
  // address cannot be bound, DATA_LOSS / INTERNAL for the store.
  static Result<std::unique_ptr<ManagerServer>> start(ServerOptions options,
                                                      std::shared_ptr<spdlog::logger> log,
                                                      Clock clock = wall_clock);
  ~ManagerServer();
  ManagerServer(const ManagerServer&) = delete;
  ManagerServer& operator=(const ManagerServer&) = delete;

  // Answers waiting ranks UNAVAILABLE, ends agent streams, saves the store, stops. Idempotent.
  void stop();
  int port() const { return port_; }  // the bound TCP port (0 for a unix socket)

 private:
  ManagerServer(ServerOptions options, std::shared_ptr<spdlog::logger> log, Clock clock);
  void schedule_tick();

  ServerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  Clock clock_;
  boost::asio::io_context io_;
  boost::asio::steady_timer timer_;
  Controller controller_;
  std::unique_ptr<ManagerApi> manager_api_;
  std::unique_ptr<AgentApi> agent_api_;
  std::unique_ptr<grpc::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace epic::manager::service
