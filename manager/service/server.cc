#include "manager/service/server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>
#include <sys/stat.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "manager/service/grpc_services.h"
#include "manager/service/listen_address.h"

namespace epic::manager::service {
namespace {

Result<std::string> read_pem(const std::string& flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::kInvalidArgument, flag + ": cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Without client certificates there is no caller identity: every caller is the operator.
// That is served on a unix socket (whose file mode picks the callers), or where the operator
// says so out loud.
Status check_authentication(const ServerOptions& o) {
  if (!o.tls.ca.empty() || o.insecure || o.listen.rfind("unix:", 0) == 0) return {};
  return make_error(ErrorCode::kInvalidArgument,
                    "--listen " + o.listen +
                        ": without client certificates every caller would be the operator: "
                        "listen on a unix socket (unix:/path), give --tls-cert, --tls-key and "
                        "--tls-ca (mutual TLS: callers are authorised by their certificate's "
                        "role), or --insecure to accept anyone who reaches this address");
}

Result<std::shared_ptr<grpc::ServerCredentials>> credentials(const ServerOptions& o) {
  const TlsFiles& t = o.tls;
  if (t.cert.empty() != t.key.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "--tls-cert and --tls-key go together");
  }
  if (t.cert.empty()) {
    if (!t.ca.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "--tls-ca needs --tls-cert and --tls-key");
    }
    if (Status s = check_authentication(o); !s.ok()) return s.error();
    return grpc::InsecureServerCredentials();
  }
  if (Status s = check_authentication(o); !s.ok()) return s.error();
  auto cert = read_pem("--tls-cert", t.cert);
  if (!cert.ok()) return cert.error();
  auto key = read_pem("--tls-key", t.key);
  if (!key.ok()) return key.error();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({key.value(), cert.value()});
  if (!t.ca.empty()) {
    auto ca = read_pem("--tls-ca", t.ca);
    if (!ca.ok()) return ca.error();
    ssl.pem_root_certs = ca.value();
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

// A unix socket's directory is made if missing (/run/epic after a reboot), so the default
// address works on a fresh host.
Status make_socket_dir(const std::string& listen) {
  if (listen.rfind("unix:", 0) != 0) return {};
  const std::filesystem::path dir = std::filesystem::path(listen.substr(5)).parent_path();
  std::error_code ec;
  if (dir.empty() || std::filesystem::exists(dir, ec)) return {};
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "--listen " + listen + ": cannot make the directory " + dir.string() + ": " + ec.message());
  }
  return {};
}

}  // namespace

Millis wall_clock() {
  return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch());
}

ManagerServer::ManagerServer(ServerOptions options, std::shared_ptr<spdlog::logger> log,
                             Clock clock)
    : options_(std::move(options)),
      log_(std::move(log)),
      clock_(std::move(clock)),
      timer_(io_),
      controller_(options_.service, log_) {}

Result<std::unique_ptr<ManagerServer>> ManagerServer::start(ServerOptions options,
                                                            std::shared_ptr<spdlog::logger> log,
                                                            Clock clock) {
  if (std::string bad = check_listen_address(options.listen); !bad.empty()) {
    return make_error(ErrorCode::kInvalidArgument, bad);
  }
  if (options.socket_mode > 0777) {
    return make_error(ErrorCode::kInvalidArgument, "--socket-mode " +
                                                       std::to_string(options.socket_mode) +
                                                       " is not a file mode (0..0777, octal)");
  }
  if (options.max_request_bytes < kMinMaxRequestBytes ||
      options.max_request_bytes > kMaxMaxRequestBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "--max-request-bytes " + std::to_string(options.max_request_bytes) +
                          " is outside " + std::to_string(kMinMaxRequestBytes) + ".." +
                          std::to_string(kMaxMaxRequestBytes));
  }
  auto creds = credentials(options);
  if (!creds.ok()) return creds.error();
  if (Status st = make_socket_dir(options.listen); !st.ok()) return st.error();
  const Authentication auth =
      options.tls.ca.empty() ? Authentication::kTransport : Authentication::kCertificates;
  std::unique_ptr<ManagerServer> s(new ManagerServer(std::move(options), log, std::move(clock)));
  // The io thread is not running yet: the controller may be used from here.
  if (Status st = s->controller_.start(s->clock_()); !st.ok()) return st.error();
  s->manager_api_ = std::make_unique<ManagerApi>(s->io_, s->controller_, s->clock_, auth);
  s->agent_api_ = std::make_unique<AgentApi>(s->io_, s->controller_, s->clock_, auth);
  grpc::ServerBuilder builder;
  // One manager per address: without this gRPC sets SO_REUSEPORT and a second manager would
  // share the port (split brain), each with its own state.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(static_cast<int>(s->options_.max_request_bytes));
  builder.AddListeningPort(s->options_.listen, creds.value(), &s->port_);
  builder.RegisterService(s->manager_api_.get());
  builder.RegisterService(s->agent_api_.get());
  {
    // The socket file is born with no permission for anyone else (no window between bind and
    // chmod), then gets --socket-mode. umask is the process's: nothing else runs yet.
    const mode_t old_mask = ::umask(0177);
    s->server_ = builder.BuildAndStart();
    ::umask(old_mask);
  }
  if (!s->server_) {
    return make_error(ErrorCode::kUnavailable,
                      "cannot listen on " + s->options_.listen +
                          ": the address is in use (another inc-manager?) or not one of this "
                          "host's");
  }
  if (s->options_.listen.rfind("unix:", 0) == 0) {
    const std::string path = s->options_.listen.substr(5);
    if (::chmod(path.c_str(), static_cast<mode_t>(s->options_.socket_mode)) != 0) {
      s->server_->Shutdown();
      return make_error(ErrorCode::kInvalidArgument,
                        "--socket-mode: cannot chmod " + path + ": " + std::strerror(errno));
    }
  }
  s->schedule_tick();
  s->thread_ = std::thread([io = &s->io_] {
    auto guard = boost::asio::make_work_guard(*io);
    io->run();
  });
  log->info("inc-manager listening on {} ({}; {})", s->options_.listen,
            s->options_.tls.cert.empty() ? "plaintext"
            : s->options_.tls.ca.empty() ? "TLS"
                                         : "mutual TLS",
            auth == Authentication::kCertificates ? "callers authorised by their certificate's role"
                                                  : "every caller is the operator");
  return s;
}

void ManagerServer::schedule_tick() {
  timer_.expires_after(options_.service.tick_interval);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    controller_.tick(clock_());
    schedule_tick();
  });
}

void ManagerServer::stop() {
  if (stopped_) return;
  if (!thread_.joinable()) {  // start() failed before serving
    stopped_ = true;
    return;
  }
  // Answer everything that waits first: gRPC's shutdown waits for every open call.
  std::promise<void> done;
  boost::asio::post(io_, [this, &done] {
    controller_.shutdown();
    done.set_value();
  });
  done.get_future().wait();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  boost::asio::post(io_, [this] {
    stopped_ = true;
    timer_.cancel();
    io_.stop();
  });
  thread_.join();
  stopped_ = true;
  log_->info("inc-manager stopped");
}

ManagerServer::~ManagerServer() { stop(); }

}  // namespace epic::manager::service
