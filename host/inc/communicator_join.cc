// Communicator: joining through inc-manager (INC_MANAGER) and the host-collective fallback.
#include <cstdio>

#include "host/collective/collective_runner.h"
#include "host/fallback/host_collectives.h"
#include "host/inc/communicator.h"
#include "host/transport/endpoint.h"

namespace epic::inc {

namespace fb = epic::host::fallback;
using vocab::CollectiveType;

namespace {

constexpr std::chrono::milliseconds kLeaveBound{2000};

fb::RingOptions ring_options(const CommConfig& c, const std::string& kind, uint32_t qpn_base,
                             uint16_t pmtu, uint32_t initial_psn) {
  fb::RingOptions o;
  o.transport = kind;
  o.ifname = c.transport.iface;
  o.ipv4 = c.transport.ip;
  o.mac = c.transport.mac;
  o.soft_qpn_base = qpn_base;
  o.arp_timeout = c.transport.arp_timeout;
  o.device = c.transport.device;
  o.port = c.transport.ib_port;
  o.gid_index = c.transport.gid_index;
  o.pmtu = pmtu;
  o.arith = c.arith;
  o.initial_psn = initial_psn;
  o.timeout = c.timeout;
  return o;
}

}  // namespace

std::string Communicator::join_manager() {
  const ManagerOptions& m = config_.manager;
  manager_ = std::make_unique<ManagerJoin>(m);
  host::TransportOptions topt = config_.transport;
  if (topt.kind == "auto") topt.kind = host::verbs_device_present() ? "verbs" : "soft";
  const std::string kind = topt.kind;
  const uint32_t soft_ring_qpn = m.host_qpn != 0 ? m.host_qpn : topt.qpn + 2;
  // verbs: the ring's QPNs exist only once its QPs do, so they are created before the join.
  // Their PSN and MTU are fixed then: PSN 0 and the MTU this rank asks for (every rank asks the
  // same); the manager's initial_psn is not applied to a verbs ring (RingOptions at create).
  std::unique_ptr<fb::HostCollectives> ring;
  if (m.host_fallback && kind == "verbs") {
    auto r = fb::HostCollectives::create(ring_options(config_, kind, 0, m.pmtu.value_or(1024), 0));
    if (r.ok()) {
      ring = std::move(r.value);
    } else {
      std::fprintf(stderr, "inc: group '%s': no host fallback offered (its ring QPs: %s)\n",
                   m.group.c_str(), r.error.c_str());
    }
  }
  const bool offer = m.host_fallback && (kind == "soft" || ring != nullptr);
  JoinAnswer answer;
  bool fell_back = false;
  auto resolve = [&](const host::LocalEndpoint& local) -> soft::io::Result<host::PeerParams> {
    std::optional<JoinEndpoint> ring_endpoint;
    if (offer) {
      ring_endpoint =
          JoinEndpoint{local.ipv4, local.mac, local.gid, ring ? ring->qpn_base() : soft_ring_qpn};
    }
    auto a = manager_->join(config_.rank, config_.ranks, local, ring_endpoint);
    if (!a.ok()) return soft::io::make_error<host::PeerParams>(a.error);
    answer = a.value;
    fell_back = answer.host_fallback;
    if (fell_back) return soft::io::make_error<host::PeerParams>("host fallback");
    return {answer.peer, ""};
  };
  auto t = host::open_transport(topt, resolve);
  if (fell_back) return start_host(kind, answer, std::move(ring));
  if (!t.ok()) return t.error;
  transport_ = std::move(t.value);
  runner_ = std::make_unique<host::CollectiveRunner>(*transport_, config_.rank, config_.ranks);
  return "";
}

std::string Communicator::start_host(const std::string& kind, const JoinAnswer& answer,
                                     std::unique_ptr<fb::HostCollectives> ring) {
  const ManagerOptions& m = config_.manager;
  const std::string failed =
      "inc: " + manager_->where() + ": host fallback (" + answer.fallback_reason + ") failed: ";
  if (!ring) {  // soft: our QPNs, so the ring is made with the answered PSN and MTU
    const uint32_t base = m.host_qpn != 0 ? m.host_qpn : config_.transport.qpn + 2;
    auto r = fb::HostCollectives::create(
        ring_options(config_, kind, base, answer.peer.pmtu, answer.peer.initial_psn));
    if (!r.ok()) return failed + r.error;
    ring = std::move(r.value);
  }
  std::vector<fb::RingMember> members;
  for (const JoinEndpoint& j : answer.members) members.push_back({j.ipv4, j.mac, j.gid, j.qpn});
  if (fb::Status s = ring->connect(config_.rank, members); !s.ok()) return failed + s.message;
  host_ = std::move(ring);
  host_kind_ = kind;
  std::fprintf(stderr, "inc: group '%s': %s: using host collectives (ring over %s)\n",
               m.group.c_str(), answer.fallback_reason.c_str(), kind.c_str());
  return "";
}

Request Communicator::post_host(CollectiveType type, DType t, ReduceOp op, uint16_t root,
                                const void* send, void* recv, size_t count) {
  fb::Status s;
  switch (type) {
    case CollectiveType::kAllReduce:
      s = host_->allreduce(send, recv, count, t, op);
      break;
    case CollectiveType::kReduce:
      s = host_->reduce(send, recv, count, t, op, root);
      break;
    case CollectiveType::kBroadcast:
      s = host_->broadcast(recv, count, t, root);
      break;
    case CollectiveType::kBarrier:
      s = host_->barrier();
      break;
    case CollectiveType::kReduceScatter:
      s = host_->reduce_scatter(send, recv, count, t, op);
      break;
    case CollectiveType::kAllGather:
      s = host_->allgather(send, recv, count, t);
      break;
  }
  const Status status{static_cast<Code>(s.code), s.message};  // the same codes (host_collectives.h)
  if (status.code == Code::kTimeout || status.code == Code::kTransport ||
      status.code == Code::kBroken) {
    if (broken_.ok()) broken_ = status;
  }
  const uint64_t id = next_id_++;
  finished_[id] = status;
  ++progress_epoch_;
  return {id};
}

void Communicator::leave_manager() {
  if (!manager_ || host_) return;  // a host-fallback group is not held by the manager
  manager_->leave(config_.rank, std::min(kLeaveBound, config_.manager.join_timeout));
  manager_.reset();
}

}  // namespace epic::inc
