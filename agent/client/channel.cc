#include "agent/client/channel.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace epic::agent {
namespace {

bool read_file(const std::string& path, std::string& out, std::string& error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream s;
  s << f.rdbuf();
  out = s.str();
  return true;
}

}  // namespace

ChannelResult make_channel(const AgentOptions& o) {
  ChannelResult r;
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (o.tls.enabled) {
    grpc::SslCredentialsOptions ssl;
    if (!o.tls.root_ca_file.empty() && !read_file(o.tls.root_ca_file, ssl.pem_root_certs, r.error))
      return r;
    if (o.tls.cert_file.empty() != o.tls.key_file.empty()) {
      r.error = "TLS client certificate and key go together (cert_file and key_file)";
      return r;
    }
    if (!o.tls.cert_file.empty() && (!read_file(o.tls.cert_file, ssl.pem_cert_chain, r.error) ||
                                     !read_file(o.tls.key_file, ssl.pem_private_key, r.error)))
      return r;
    creds = grpc::SslCredentials(ssl);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  const int initial = static_cast<int>(o.reconnect_initial.count());
  const int max = static_cast<int>(std::max(o.reconnect_max, o.reconnect_initial).count());
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, initial);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max);
  if (o.keepalive.count() > 0) {
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(o.keepalive.count()));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(o.keepalive.count()));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  }
  if (o.tls.enabled && !o.tls.server_name.empty()) args.SetSslTargetNameOverride(o.tls.server_name);
  r.channel = grpc::CreateCustomChannel(o.address, creds, args);
  return r;
}

}  // namespace epic::agent
