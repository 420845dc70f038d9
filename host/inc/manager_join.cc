#include "host/inc/manager_join.h"

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <sstream>

#include "proto/inc/v1/manager.grpc.pb.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/dscp.h"

namespace epic::inc {

namespace pb = ::epic::inc::v1;

namespace {

const char* const kCodeNames[] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

soft::io::Result<std::string> read_pem(const std::string& key, const std::string& path) {
  if (path.empty()) return {"", ""};
  std::ifstream in(path);
  if (!in) return soft::io::make_error<std::string>(key + "=" + path + ": cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return {s.str(), ""};
}

std::string gid_text(const std::array<uint8_t, 16>& g) {
  vocab::Ipv6Addr a{};
  std::copy(g.begin(), g.end(), a.begin());
  return vocab::format_ipv6(a);
}

void fill(pb::RankEndpoint& out, const JoinEndpoint& e) {
  out.set_ipv4(vocab::format_ipv4(e.ipv4));
  if (e.gid != std::array<uint8_t, 16>{}) out.set_gid(gid_text(e.gid));
  if (e.mac != std::array<uint8_t, 6>{}) {
    vocab::MacAddr m{};
    std::copy(e.mac.begin(), e.mac.end(), m.begin());
    out.set_mac(vocab::format_mac(m));
  }
  out.set_qpn(e.qpn);
}

JoinEndpoint from_proto(const pb::RankEndpoint& e) {
  JoinEndpoint out;
  out.ipv4 = vocab::parse_ipv4(e.ipv4()).value_or(0);
  out.qpn = e.qpn();
  if (auto m = vocab::parse_mac(e.mac())) std::copy(m->begin(), m->end(), out.mac.begin());
  if (auto g = vocab::parse_ipv6(e.gid())) std::copy(g->begin(), g->end(), out.gid.begin());
  return out;
}

}  // namespace

std::string grpc_code_name(int code) {
  if (code >= 0 && code < static_cast<int>(std::size(kCodeNames))) return kCodeNames[code];
  return "code " + std::to_string(code);
}

struct ManagerJoin::Impl {
  std::string error;  // the channel could not be made (TLS files)
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::IncManager::Stub> stub;
};

ManagerJoin::ManagerJoin(const ManagerOptions& options)
    : options_(options), impl_(std::make_unique<Impl>()) {
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!options.ca_file.empty() || !options.cert_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    auto ca = read_pem("INC_MANAGER_CA", options.ca_file);
    auto cert = read_pem("INC_MANAGER_CERT", options.cert_file);
    auto key = read_pem("INC_MANAGER_KEY", options.key_file);
    for (const auto* r : {&ca, &cert, &key}) {
      if (!r->ok() && impl_->error.empty()) impl_->error = r->error;
    }
    ssl.pem_root_certs = ca.value;
    ssl.pem_cert_chain = cert.value;
    ssl.pem_private_key = key.value;
    creds = grpc::SslCredentials(ssl);
  }
  impl_->channel = grpc::CreateChannel(options.address, creds);
  impl_->stub = pb::IncManager::NewStub(impl_->channel);
}

ManagerJoin::~ManagerJoin() = default;

std::string ManagerJoin::where() const {
  return "group '" + options_.group + "' (tenant " + options_.tenant + ") at " + options_.address;
}

soft::io::Result<JoinAnswer> ManagerJoin::join(uint16_t rank, uint16_t size,
                                               const host::LocalEndpoint& inc,
                                               const std::optional<JoinEndpoint>& host) {
  const std::string failed = "inc: join " + where() + " failed: ";
  if (!impl_->error.empty()) return soft::io::make_error<JoinAnswer>(failed + impl_->error);
  pb::JoinGroupRequest req;
  req.set_tenant(options_.tenant);
  req.set_group(options_.group);
  req.set_size(size);
  req.set_rank(rank);
  JoinEndpoint mine{inc.ipv4, {}, inc.gid, inc.qpn};
  std::copy(inc.mac.begin(), inc.mac.end(), mine.mac.begin());
  fill(*req.mutable_endpoint(), mine);
  if (options_.window) req.set_window(*options_.window);
  if (options_.pkey) req.set_pkey(*options_.pkey);
  if (options_.dscp) req.set_dscp(*options_.dscp);
  if (options_.arith.profile == vocab::AccumProfile::kKulischFixed) {
    req.set_accumulator(pb::ACCUM_KULISCH_FIXED);
  }
  req.set_dtype(
      static_cast<pb::ElementType>(options_.arith.dtype ? int(*options_.arith.dtype) + 1 : 0));
  if (options_.pmtu) req.set_pmtu(*options_.pmtu);
  if (options_.mode) req.set_mode(static_cast<pb::GroupMode>(*options_.mode));
  req.set_queue_timeout_ms(options_.queue_timeout_ms);
  if (host) fill(*req.mutable_host_endpoint(), *host);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.join_timeout);
  ctx.set_wait_for_ready(true);  // a manager that starts a little later is waited for
  pb::JoinGroupResponse resp;
  const grpc::Status s = impl_->stub->JoinGroup(&ctx, req, &resp);
  if (!s.ok()) {
    std::string msg = grpc_code_name(s.error_code()) + ": " + s.error_message();
    if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      msg += " (no answer within INC_JOIN_TIMEOUT_MS=" +
             std::to_string(options_.join_timeout.count()) +
             ": is inc-manager running there, and did every rank join?)";
    }
    return soft::io::make_error<JoinAnswer>(failed + msg);
  }
  JoinAnswer a;
  a.group_id = resp.group_id();
  a.switch_id = resp.switch_id();
  a.host_fallback = resp.host_fallback();
  a.fallback_reason = resp.fallback_reason();
  a.peer.switch_ip = vocab::parse_ipv4(resp.peer().ipv4()).value_or(0);
  a.peer.switch_qpn = resp.peer().qpn();
  a.peer.initial_psn = resp.initial_psn();
  a.peer.pmtu = static_cast<uint16_t>(resp.pmtu());
  a.peer.window = resp.window();
  a.peer.dscp = static_cast<uint8_t>(resp.dscp() & vocab::kMaxDscp);
  for (const pb::RankEndpoint& m : resp.members()) a.members.push_back(from_proto(m));
  if (a.host_fallback && (!host || a.members.size() != size)) {
    return soft::io::make_error<JoinAnswer>(failed + "the manager answered a host fallback with " +
                                            std::to_string(a.members.size()) + " members for " +
                                            std::to_string(size) + " ranks" +
                                            (host ? "" : " although this rank did not offer one"));
  }
  return {a, ""};
}

std::string ManagerJoin::leave(uint16_t rank, std::chrono::milliseconds bound) {
  pb::LeaveGroupRequest req;
  req.set_tenant(options_.tenant);
  req.set_group(options_.group);
  req.set_rank(rank);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + bound);
  pb::LeaveGroupResponse resp;
  const grpc::Status s = impl_->stub->LeaveGroup(&ctx, req, &resp);
  if (s.ok()) return "";
  return "inc: leave " + where() + ": " + grpc_code_name(s.error_code()) + ": " + s.error_message();
}

}  // namespace epic::inc
