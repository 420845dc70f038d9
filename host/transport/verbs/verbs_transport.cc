#include "host/transport/verbs/verbs_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <thread>

#include "host/transport/verbs/verbs_util.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/pkey.h"
#include "proto/vocab/psn.h"

namespace epic::verbs {

namespace {

using soft::io::Result;
using soft::io::Status;
using Clock = std::chrono::steady_clock;

constexpr unsigned kSpinPolls = 1000;  // empty polls before blocking on the channel
constexpr auto kMaxWait = std::chrono::milliseconds(50);
// How long flush() waits for the NIC to complete the abandoned work requests.
constexpr auto kFlushWait = std::chrono::seconds(2);
constexpr uint32_t kAckCqEventsEvery = 64;

std::string err_text(int e) { return std::strerror(e); }

std::string hex24(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%06x", v);
  return b;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

struct DeviceList {
  ibv_device** list = nullptr;
  int n = 0;
  int error = 0;
  DeviceList() {
    errno = 0;
    list = ibv_get_device_list(&n);
    if (list == nullptr) {
      error = errno;
      n = 0;
    }
  }
  ~DeviceList() {
    if (list != nullptr) ibv_free_device_list(list);
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
};

std::string no_device_message(const std::string& wanted, int error) {
  std::string m = "no RDMA device found (ibv_get_device_list returned none";
  if (error != 0 && error != ENOSYS) m += ": " + err_text(error);
  m += ")";
  if (!wanted.empty()) m += ", so there is no device '" + wanted + "'";
  return m + ": load rdma_rxe / check the NIC, or use the soft transport";
}

// The RoCEv2 IPv4 GID of `port`: the entry at `want` (>= 0), or the one whose
// address is local_ipv4 (or the first, local_ipv4 == 0).
Result<int> find_gid(ibv_context* ctx, const std::string& dev, uint8_t port, int table_len,
                     int want, uint32_t local_ipv4) {
  const std::string where = dev + " port " + std::to_string(port);
  if (want >= 0) {
    if (want >= table_len) {
      return soft::io::make_error<int>("GID index " + std::to_string(want) + " is beyond " + where +
                                       "'s GID table of " + std::to_string(table_len));
    }
    ibv_gid_entry e{};
    if (int rc = ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(want), &e, 0); rc != 0) {
      const int er = rc > 0 ? rc : errno;
      return soft::io::make_error<int>(
          "ibv_query_gid_ex(" + where + ", index " + std::to_string(want) + "): " + err_text(er) +
          (er == ENODATA ? " (the entry is empty: no address behind it)" : ""));
    }
    if (e.gid_type != IBV_GID_TYPE_ROCE_V2) {
      return soft::io::make_error<int>(
          "GID index " + std::to_string(want) + " of " + where + " is " +
          (e.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "InfiniBand") +
          ", not RoCE v2 (EPIC speaks RoCEv2: omit the GID index to find one)");
    }
    const auto ip = ipv4_of_gid(e.gid);
    if (!ip) {
      return soft::io::make_error<int>("GID index " + std::to_string(want) + " of " + where +
                                       " is " + format_gid(e.gid) +
                                       ", not an IPv4-mapped address (EPIC's rank edges are IPv4)");
    }
    if (local_ipv4 != 0 && *ip != local_ipv4) {
      return soft::io::make_error<int>("GID index " + std::to_string(want) + " of " + where +
                                       " is the address " + vocab::format_ipv4(*ip) + ", not " +
                                       vocab::format_ipv4(local_ipv4));
    }
    return {want, ""};
  }
  std::vector<std::string> seen;
  std::string query_error;
  for (int i = 0; i < table_len; ++i) {
    ibv_gid_entry e{};
    if (int rc = ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(i), &e, 0); rc != 0) {
      const int er = rc > 0 ? rc : errno;
      if (er != ENODATA && query_error.empty()) {
        query_error = "ibv_query_gid_ex(index " + std::to_string(i) + "): " + err_text(er);
      }
      continue;
    }
    if (e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
    const auto ip = ipv4_of_gid(e.gid);
    if (!ip) continue;
    if (local_ipv4 == 0 || *ip == local_ipv4) return {i, ""};
    seen.push_back(vocab::format_ipv4(*ip) + " at index " + std::to_string(i));
  }
  std::string m =
      "no RoCEv2 GID " +
      (local_ipv4 != 0 ? "for " + vocab::format_ipv4(local_ipv4) : "with an IPv4 address") +
      " on " + where;
  if (!seen.empty()) m += " (its RoCEv2 IPv4 GIDs: " + join(seen) + ")";
  if (!query_error.empty()) m += " (" + query_error + ")";
  return soft::io::make_error<int>(
      m + ": give the device's netdev that address" +
      (local_ipv4 != 0 ? ", or choose another --ip / --gid-index" : ""));
}

struct Probe {
  ibv_context* ctx = nullptr;
  int gid_index = -1;
  ibv_device_attr dev{};
};

// Opens `device` and checks that `port` is usable for the config; closes it on failure.
Result<Probe> probe(ibv_device* device, const VerbsConfig& c) {
  const std::string name = ibv_get_device_name(device);
  Probe p;
  p.ctx = ibv_open_device(device);
  if (p.ctx == nullptr) {
    return soft::io::make_error<Probe>("ibv_open_device(" + name + "): " + err_text(errno) +
                                       " (permissions of /dev/infiniband/uverbs*?)");
  }
  auto fail = [&](std::string m) {
    ibv_close_device(p.ctx);
    return soft::io::make_error<Probe>(std::move(m));
  };
  if (int rc = ibv_query_device(p.ctx, &p.dev); rc != 0) {
    return fail("ibv_query_device(" + name + "): " + err_text(rc > 0 ? rc : errno));
  }
  const std::string where = name + " port " + std::to_string(c.port);
  if (c.port == 0 || c.port > p.dev.phys_port_cnt) {
    return fail(where + " does not exist (the device has " + std::to_string(p.dev.phys_port_cnt) +
                " port(s), numbered from 1)");
  }
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(p.ctx, c.port, &pa); rc != 0) {
    return fail("ibv_query_port(" + where + "): " + err_text(rc > 0 ? rc : errno));
  }
  if (pa.state != IBV_PORT_ACTIVE) {
    return fail(where + " is " + port_state_name(pa.state) +
                ", not ACTIVE (is its netdev up, with a link?)");
  }
  if (pa.link_layer != IBV_LINK_LAYER_ETHERNET) {
    return fail(where + " is InfiniBand, not Ethernet: EPIC needs RoCEv2");
  }
  const uint32_t active = mtu_bytes(pa.active_mtu);
  if (c.pmtu > active) {
    return fail("path MTU " + std::to_string(c.pmtu) + " is larger than the active MTU " +
                std::to_string(active) + " of " + where +
                " (the netdev's MTU limits it): use a pmtu of at most " + std::to_string(active) +
                ", the same in the switch's group");
  }
  auto gid = find_gid(p.ctx, name, c.port, pa.gid_tbl_len, c.gid_index, c.local_ipv4);
  if (!gid.ok()) return fail(gid.error);
  p.gid_index = gid.value;
  return {p, ""};
}

// The index of `pkey` in the port's P_Key table (the QP's pkey_index). Index 0 holds the
// default partition (IBTA 10.9.1.2): 0xFFFF is not looked up. nullopt when the table does not
// hold it.
std::optional<uint16_t> find_pkey_index(ibv_context* ctx, uint8_t port, uint16_t pkey) {
  if (pkey == vocab::kDefaultPkey) return 0;
  ibv_port_attr attr{};
  if (ibv_query_port(ctx, port, &attr) != 0) return std::nullopt;
  for (int i = 0; i < attr.pkey_tbl_len; ++i) {
    __be16 key = 0;
    if (ibv_query_pkey(ctx, port, i, &key) != 0) break;
    if (ntohs(key) == pkey) return static_cast<uint16_t>(i);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> list_devices() {
  DeviceList d;
  std::vector<std::string> names;
  for (int i = 0; i < d.n; ++i) names.emplace_back(ibv_get_device_name(d.list[i]));
  return names;
}

VerbsTransport::VerbsTransport(const VerbsConfig& config)
    : config_(config), window_(std::max<uint32_t>(1, config.max_outstanding), config.pmtu) {}

Result<std::unique_ptr<VerbsTransport>> VerbsTransport::open(const VerbsConfig& config) {
  auto t = create(config);
  if (!t.ok()) return t;
  if (Status s = t.value->connect(config.remote_ipv4, config.remote_qpn); !s.ok()) {
    return {nullptr, s.error};
  }
  return t;
}

Result<std::unique_ptr<VerbsTransport>> VerbsTransport::create(const VerbsConfig& c) {
  using R = std::unique_ptr<VerbsTransport>;
  if (!mtu_enum(c.pmtu)) {
    return soft::io::make_error<R>("path MTU " + std::to_string(c.pmtu) + " is not one of " +
                                   std::string(vocab::kPmtuChoices));
  }
  if (c.max_outstanding == 0) return soft::io::make_error<R>("max_outstanding must be >= 1");
  if (c.max_send_wr == 0 || c.max_recv_wr == 0) {
    return soft::io::make_error<R>("max_send_wr and max_recv_wr must be >= 1");
  }
  if (c.timeout_code > 31 || c.min_rnr_timer > 31) {
    return soft::io::make_error<R>("timeout_code and min_rnr_timer are 5-bit codes (0..31)");
  }
  if (c.retry_count > 7 || c.rnr_retry > 7) {
    return soft::io::make_error<R>("retry_count and rnr_retry are 0..7");
  }
  std::unique_ptr<VerbsTransport> t(new VerbsTransport(c));
  if (Status s = t->setup(c); !s.ok()) return soft::io::make_error<R>(s.error);
  return {std::move(t), ""};
}

Status VerbsTransport::setup(const VerbsConfig& c) {
  DeviceList list;
  if (list.n == 0) return Status::failure(no_device_message(c.device, list.error));
  Probe chosen;
  if (!c.device.empty()) {
    ibv_device* dev = nullptr;
    std::vector<std::string> names;
    for (int i = 0; i < list.n; ++i) {
      names.emplace_back(ibv_get_device_name(list.list[i]));
      if (names.back() == c.device) dev = list.list[i];
    }
    if (dev == nullptr) {
      return Status::failure("RDMA device '" + c.device + "' not found; present: " + join(names));
    }
    auto p = probe(dev, c);
    if (!p.ok()) return Status::failure(p.error);
    chosen = p.value;
    device_name_ = c.device;
  } else {
    std::vector<std::string> why;
    for (int i = 0; i < list.n && chosen.ctx == nullptr; ++i) {
      auto p = probe(list.list[i], c);
      if (p.ok()) {
        chosen = p.value;
        device_name_ = ibv_get_device_name(list.list[i]);
      } else {
        why.push_back(p.error);
      }
    }
    if (chosen.ctx == nullptr) {
      return Status::failure("no usable RDMA device (an ACTIVE port " + std::to_string(c.port) +
                             " with a RoCEv2 IPv4 GID): " + join(why));
    }
  }
  ctx_ = chosen.ctx;
  gid_index_ = chosen.gid_index;
  const std::string where = device_name_ + " port " + std::to_string(c.port);
  const auto max_wr = static_cast<uint32_t>(std::max(chosen.dev.max_qp_wr, 0));
  if (c.max_send_wr > max_wr || c.max_recv_wr > max_wr) {
    return Status::failure("max_send_wr " + std::to_string(c.max_send_wr) + " / max_recv_wr " +
                           std::to_string(c.max_recv_wr) + " exceed " + device_name_ +
                           "'s max_qp_wr " + std::to_string(max_wr));
  }
  const uint64_t cqe = uint64_t{c.max_send_wr} + c.max_recv_wr;
  if (cqe > static_cast<uint64_t>(std::max(chosen.dev.max_cqe, 0))) {
    return Status::failure("a CQ of " + std::to_string(cqe) + " entries exceeds " + device_name_ +
                           "'s max_cqe " + std::to_string(chosen.dev.max_cqe));
  }

  pd_ = ibv_alloc_pd(ctx_);
  if (pd_ == nullptr)
    return Status::failure("ibv_alloc_pd(" + device_name_ + "): " + err_text(errno));
  ibv_pd* pd = pd_;
  mrs_ = std::make_unique<MrCache>(
      static_cast<size_t>(sysconf(_SC_PAGESIZE)), c.mr_cache_idle,
      [pd](uintptr_t begin, size_t length, bool writable,
           std::string& error) -> std::optional<MrCache::Registration> {
        ibv_mr* mr = ibv_reg_mr(pd, reinterpret_cast<void*>(begin), length,
                                writable ? IBV_ACCESS_LOCAL_WRITE : 0);
        if (mr == nullptr) {
          char b[64];
          std::snprintf(b, sizeof b,
                        "ibv_reg_mr(%#llx, %zu bytes): ", static_cast<unsigned long long>(begin),
                        length);
          error = b + err_text(errno);
          return std::nullopt;
        }
        return MrCache::Registration{mr, mr->lkey};
      },
      [](void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); });

  channel_ = ibv_create_comp_channel(ctx_);
  if (channel_ == nullptr) {
    return Status::failure("ibv_create_comp_channel(" + device_name_ + "): " + err_text(errno));
  }
  for (int fd : {channel_->fd, ctx_->async_fd}) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
      return Status::failure("fcntl(O_NONBLOCK) on a verbs event channel: " + err_text(errno));
    }
  }
  cq_ = ibv_create_cq(ctx_, static_cast<int>(cqe), nullptr, channel_, 0);
  if (cq_ == nullptr) {
    return Status::failure("ibv_create_cq(" + device_name_ + ", " + std::to_string(cqe) +
                           " entries): " + err_text(errno));
  }
  ibv_qp_init_attr qa{};
  qa.send_cq = cq_;
  qa.recv_cq = cq_;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 0;
  qa.cap.max_send_wr = c.max_send_wr;
  qa.cap.max_recv_wr = c.max_recv_wr;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = 0;
  qp_ = ibv_create_qp(pd_, &qa);
  if (qp_ == nullptr) {
    return Status::failure("ibv_create_qp(" + device_name_ + ", RC, " +
                           std::to_string(c.max_send_wr) + "/" + std::to_string(c.max_recv_wr) +
                           " WRs): " + err_text(errno));
  }
  const auto pkey_index = find_pkey_index(ctx_, c.port, c.pkey);
  if (!pkey_index) {
    char key[8];
    std::snprintf(key, sizeof key, "%#06x", c.pkey);
    return Status::failure("P_Key " + std::string(key) + " is not in the P_Key table of " + where +
                           " (as a full member): the group's partition is not configured there");
  }
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = *pkey_index;
  a.port_num = c.port;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (int rc = ibv_modify_qp(qp_, &a,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0) {
    return Status::failure("ibv_modify_qp(INIT) on " + where + ": " +
                           err_text(rc > 0 ? rc : errno));
  }
  return Status::success();
}

Status VerbsTransport::connect(uint32_t remote_ipv4, uint32_t remote_qpn, uint32_t initial_psn,
                               uint16_t pmtu, uint32_t window,
                               std::optional<uint8_t> traffic_class) {
  if (connected_) return Status::failure("connect: the QP is already connected");
  if (!mtu_enum(pmtu)) {
    return Status::failure("connect: path MTU " + std::to_string(pmtu) + " is not one of " +
                           std::string(vocab::kPmtuChoices));
  }
  if (initial_psn > vocab::kPsnMask)
    return Status::failure("connect: the initial PSN must fit 24 bits");
  config_.sq_psn = config_.rq_psn = initial_psn;
  if (traffic_class) config_.traffic_class = *traffic_class;
  config_.pmtu = pmtu;
  config_.max_outstanding = std::max<uint32_t>(1, window);
  window_ = SendWindow(config_.max_outstanding, config_.pmtu);  // nothing was posted yet
  return connect(remote_ipv4, remote_qpn);
}

std::array<uint8_t, 16> VerbsTransport::local_gid() const {
  std::array<uint8_t, 16> out{};
  ibv_gid g{};
  if (ctx_ == nullptr || gid_index_ < 0 || ibv_query_gid(ctx_, config_.port, gid_index_, &g) != 0) {
    return out;
  }
  std::copy(std::begin(g.raw), std::end(g.raw), out.begin());
  return out;
}

Status VerbsTransport::connect(uint32_t remote_ipv4, uint32_t remote_qpn) {
  if (qp_ == nullptr) return Status::failure("connect: no QP");
  if (connected_) return Status::failure("connect: the QP is already connected");
  if (remote_ipv4 == 0) return Status::failure("connect: the switch's IPv4 address is not set");
  if (remote_qpn == 0 || remote_qpn > vocab::kQpnMask) {
    return Status::failure("connect: the switch's QPN " + std::to_string(remote_qpn) +
                           " is not in 1..0xffffff");
  }
  config_.remote_ipv4 = remote_ipv4;
  config_.remote_qpn = remote_qpn;
  const VerbsConfig& c = config_;
  const std::string where = device_name_ + " port " + std::to_string(c.port);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = *mtu_enum(c.pmtu);
  a.dest_qp_num = remote_qpn;
  a.rq_psn = c.rq_psn & vocab::kPsnMask;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = c.min_rnr_timer;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = gid_of_ipv4(remote_ipv4);
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index_);
  a.ah_attr.grh.hop_limit = c.hop_limit;
  a.ah_attr.grh.traffic_class = c.traffic_class;
  a.ah_attr.grh.flow_label = 0;
  a.ah_attr.dlid = 0;
  a.ah_attr.sl = c.sl;
  a.ah_attr.src_path_bits = 0;
  a.ah_attr.port_num = c.port;
  if (int rc = ibv_modify_qp(qp_, &a,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    const int e = rc > 0 ? rc : errno;
    std::string hint;
    if (e == ETIMEDOUT || e == ENODATA || e == EHOSTUNREACH || e == ENETUNREACH) {
      hint = " (the kernel resolves " + vocab::format_ipv4(remote_ipv4) +
             "'s MAC here, by ARP through the netdev of " + where +
             ": is the switch running and answering for that address?)";
    }
    return Status::failure("ibv_modify_qp(RTR) on " + where + " towards " +
                           vocab::format_ipv4(remote_ipv4) + " qpn " + hex24(remote_qpn) + ": " +
                           err_text(e) + hint);
  }
  ibv_qp_attr r{};
  r.qp_state = IBV_QPS_RTS;
  r.timeout = c.timeout_code;
  r.retry_cnt = c.retry_count;
  r.rnr_retry = c.rnr_retry;
  r.sq_psn = c.sq_psn & vocab::kPsnMask;
  r.max_rd_atomic = 1;
  if (int rc = ibv_modify_qp(qp_, &r,
                             IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    return Status::failure("ibv_modify_qp(RTS) on " + where + ": " + err_text(rc > 0 ? rc : errno));
  }
  connected_ = true;
  return Status::success();
}

VerbsTransport::~VerbsTransport() {
  if (qp_ != nullptr) ibv_destroy_qp(qp_);
  if (cq_ != nullptr) {
    if (unacked_cq_events_ > 0) ibv_ack_cq_events(cq_, unacked_cq_events_);
    ibv_destroy_cq(cq_);
  }
  if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
  mrs_.reset();
  if (pd_ != nullptr) ibv_dealloc_pd(pd_);
  if (ctx_ != nullptr) ibv_close_device(ctx_);
}

uint32_t VerbsTransport::qpn() const { return qp_ != nullptr ? qp_->qp_num : 0; }

bool VerbsTransport::post_send(const soft::SendWr& wr) {
  if (!connected_ || !failure_.empty()) return false;
  if (sends_.size() >= config_.max_send_wr) return false;
  if (wr.length > 0 && wr.data == nullptr) return false;
  SendSlot s{wr, std::nullopt};
  if (wr.length > 0) {
    s.mr = mrs_->acquire(wr.data, wr.length, false);
    if (!s.mr) return false;
  }
  sends_.push_back(s);
  window_.push(wr.length);
  post_queued();
  return true;
}

void VerbsTransport::post_queued() {
  while (failure_.empty() && window_.can_post() &&
         window_.outstanding_sends() < config_.max_send_wr) {
    const size_t i = window_.outstanding_sends();
    window_.post();
    if (!post_one(sends_[i])) {
      window_.unpost();
      break;
    }
  }
}

bool VerbsTransport::post_one(SendSlot& s) {
  const uint64_t seq = send_seq_ + window_.outstanding_sends() - 1;
  ibv_sge sge{};
  ibv_send_wr w{};
  w.wr_id = seq << 1;
  w.send_flags = IBV_SEND_SIGNALED;
  if (s.wr.length > 0) {
    sge.addr = reinterpret_cast<uintptr_t>(s.wr.data);
    sge.length = s.wr.length;
    sge.lkey = s.mr->lkey;
    w.sg_list = &sge;
    w.num_sge = 1;
  }
  switch (s.wr.op) {
    case soft::SendOp::kSend:
      w.opcode = IBV_WR_SEND;
      break;
    case soft::SendOp::kSendWithImm:
      w.opcode = IBV_WR_SEND_WITH_IMM;
      w.imm_data = htonl(s.wr.imm_data);
      break;
    case soft::SendOp::kRdmaWrite:
    case soft::SendOp::kRdmaWriteWithImm:
      w.opcode =
          s.wr.op == soft::SendOp::kRdmaWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
      if (s.wr.op == soft::SendOp::kRdmaWriteWithImm) w.imm_data = htonl(s.wr.imm_data);
      w.wr.rdma.remote_addr = s.wr.remote_va;
      w.wr.rdma.rkey = s.wr.rkey;
      break;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_, &w, &bad); rc != 0) {
    fail("ibv_post_send on " + device_name_ + ": " + err_text(rc > 0 ? rc : errno));
    return false;
  }
  return true;
}

bool VerbsTransport::post_recv(const soft::RecvWr& wr) {
  if (qp_ == nullptr || !failure_.empty()) return false;
  if (recvs_.size() >= config_.max_recv_wr) return false;
  if (wr.length > 0 && wr.data == nullptr) return false;
  RecvSlot r{wr, std::nullopt};
  if (wr.length > 0) {
    r.mr = mrs_->acquire(wr.data, wr.length, true);
    if (!r.mr) return false;
  }
  ibv_sge sge{};
  ibv_recv_wr w{};
  w.wr_id = (recv_seq_ + recvs_.size()) << 1 | 1;
  if (wr.length > 0) {
    sge.addr = reinterpret_cast<uintptr_t>(wr.data);
    sge.length = wr.length;
    sge.lkey = r.mr->lkey;
    w.sg_list = &sge;
    w.num_sge = 1;
  }
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(qp_, &w, &bad) != 0) {
    if (r.mr) mrs_->release(r.mr->id);
    return false;
  }
  recvs_.push_back(r);
  return true;
}

std::optional<soft::Completion> VerbsTransport::poll_cq() {
  if (ready_.empty()) drain_cq();
  if (ready_.empty()) return std::nullopt;
  soft::Completion c = ready_.front();
  ready_.pop_front();
  return c;
}

int VerbsTransport::drain_cq() {
  if (cq_ == nullptr) return 0;
  int total = 0;
  ibv_wc wc[32];
  for (;;) {
    const int n = ibv_poll_cq(cq_, 32, wc);
    if (n < 0) {
      fail("ibv_poll_cq on " + device_name_ + " failed (" + std::to_string(n) + ")");
      break;
    }
    for (int i = 0; i < n; ++i) on_wc(wc[i]);
    total += n;
    if (n < 32) break;
  }
  if (total > 0) post_queued();
  flush_queued_if_drained();
  return total;
}

void VerbsTransport::on_wc(const ibv_wc& wc) {
  const bool is_recv = (wc.wr_id & 1) != 0;
  const uint64_t seq = wc.wr_id >> 1;
  soft::Completion c;
  c.status = map_status(wc.status);
  if (wc.status != IBV_WC_SUCCESS) {
    ++error_completions_;
    // Keep the first error that is not a flush (the cause; the flushes follow it).
    if (last_wc_error_.empty() || (last_wc_error_flush_ && wc.status != IBV_WC_WR_FLUSH_ERR)) {
      char b[64];
      std::snprintf(b, sizeof b, " (status %d, vendor_err 0x%x)", static_cast<int>(wc.status),
                    wc.vendor_err);
      last_wc_error_ = std::string(is_recv ? "receive" : "send") + " completed with '" +
                       ibv_wc_status_str(wc.status) + "'" + b;
      last_wc_error_flush_ = wc.status == IBV_WC_WR_FLUSH_ERR;
    }
  }
  if (!is_recv) {
    if (window_.outstanding_sends() == 0 || seq != send_seq_) {
      fail("a send completion (wr_id " + std::to_string(wc.wr_id) + ") for nothing posted");
      return;
    }
    SendSlot s = sends_.front();
    sends_.pop_front();
    ++send_seq_;
    window_.complete();
    if (s.mr) mrs_->release(s.mr->id);
    const bool write =
        s.wr.op == soft::SendOp::kRdmaWrite || s.wr.op == soft::SendOp::kRdmaWriteWithImm;
    c.wr_id = s.wr.wr_id;
    c.opcode = write ? soft::WcOpcode::kRdmaWrite : soft::WcOpcode::kSend;
    c.byte_len = s.wr.length;
    if (c.status != soft::WcStatus::kSuccess || s.wr.signaled) ready_.push_back(c);
  } else {
    if (recvs_.empty() || seq != recv_seq_) {
      fail("a receive completion (wr_id " + std::to_string(wc.wr_id) + ") for nothing posted");
      return;
    }
    RecvSlot r = recvs_.front();
    recvs_.pop_front();
    ++recv_seq_;
    if (r.mr) mrs_->release(r.mr->id);
    c.wr_id = r.wr.wr_id;
    c.opcode = soft::WcOpcode::kRecv;
    if (wc.status == IBV_WC_SUCCESS) {
      if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) c.opcode = soft::WcOpcode::kRecvRdmaWithImm;
      c.byte_len = wc.byte_len;
      c.with_imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
      if (c.with_imm) c.imm_data = ntohl(wc.imm_data);
    }
    ready_.push_back(c);
  }
  if (wc.status != IBV_WC_SUCCESS && failure_.empty()) {
    // An error completion on an RC QP means the QP went to the error state.
    ibv_qp_attr a{};
    ibv_qp_init_attr ia{};
    const bool queried = ibv_query_qp(qp_, &a, IBV_QP_STATE, &ia) == 0;
    fail("verbs QP " + hex24(qpn()) + " on " + device_name_ + " port " +
         std::to_string(config_.port) + " is in state " +
         (queried ? qp_state_name(a.qp_state) : "unknown") + ": " + last_wc_error_);
  }
}

void VerbsTransport::flush_queued_if_drained() {
  if (failure_.empty() || window_.outstanding_sends() > 0 || window_.queued() == 0) return;
  // The NIC flushed everything it had; the sends it never got complete the same way.
  while (!sends_.empty()) retire_front_send_flushed();
  window_.clear_queued();
}

void VerbsTransport::flush() {
  if (qp_ == nullptr || flushed_) return;
  flushed_ = true;
  fail("the QP was flushed (its work requests abandoned)");
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  const bool in_error = ibv_modify_qp(qp_, &a, IBV_QP_STATE) == 0;
  const auto on_nic = [&] { return window_.outstanding_sends() > 0 || !recvs_.empty(); };
  // Until the NIC has reported a work request (IBV_WC_WR_FLUSH_ERR), it may still DMA.
  const auto deadline = Clock::now() + kFlushWait;
  while (in_error && on_nic() && Clock::now() < deadline) {
    if (drain_cq() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (on_nic()) {
    ibv_destroy_qp(qp_);
    qp_ = nullptr;
    fail("the QP was destroyed: the NIC did not flush its work requests within 2 s");
    for (const RecvSlot& r : recvs_) {
      if (r.mr) mrs_->release(r.mr->id);
      soft::Completion c;
      c.wr_id = r.wr.wr_id;
      c.opcode = soft::WcOpcode::kRecv;
      c.status = soft::WcStatus::kWrFlushErr;
      ready_.push_back(c);
    }
    recvs_.clear();
    while (window_.outstanding_sends() > 0) {
      window_.complete();  // the NIC's share of sends_; the rest are queued
      retire_front_send_flushed();
    }
  }
  flush_queued_if_drained();  // the sends the NIC never got
}

void VerbsTransport::retire_front_send_flushed() {
  SendSlot s = sends_.front();
  sends_.pop_front();
  ++send_seq_;
  if (s.mr) mrs_->release(s.mr->id);
  soft::Completion c;
  c.wr_id = s.wr.wr_id;
  c.opcode = s.wr.op == soft::SendOp::kRdmaWrite || s.wr.op == soft::SendOp::kRdmaWriteWithImm
                 ? soft::WcOpcode::kRdmaWrite
                 : soft::WcOpcode::kSend;
  c.status = soft::WcStatus::kWrFlushErr;
  c.byte_len = s.wr.length;
  ready_.push_back(c);
}

void VerbsTransport::fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
}

void VerbsTransport::drain_async_events() {
  ibv_async_event ev{};
  while (ibv_get_async_event(ctx_, &ev) == 0) {
    const std::string what = ibv_event_type_str(ev.event_type);
    switch (ev.event_type) {
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
        if (ev.element.qp == qp_) fail("verbs QP " + hex24(qpn()) + ": async event " + what);
        break;
      case IBV_EVENT_CQ_ERR:
      case IBV_EVENT_DEVICE_FATAL:
        fail(device_name_ + ": async event " + what);
        break;
      default:
        break;
    }
    ibv_ack_async_event(&ev);
  }
}

void VerbsTransport::wait_event(std::chrono::nanoseconds limit) {
  if (!cq_armed_) {
    if (ibv_req_notify_cq(cq_, 0) != 0) {
      // No notification: fall back to a short sleep.
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(limit, std::chrono::microseconds(50)));
      return;
    }
    cq_armed_ = true;
    // A completion may have arrived before the CQ was armed.
    if (drain_cq() > 0) return;
  }
  pollfd fds[2] = {{channel_->fd, POLLIN, 0}, {ctx_->async_fd, POLLIN, 0}};
  const auto ns = std::max<std::chrono::nanoseconds>(limit, std::chrono::nanoseconds(0));
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns.count() % 1'000'000'000);
  const int n = ppoll(fds, 2, &ts, nullptr);
  if (n <= 0) return;
  if ((fds[0].revents & POLLIN) != 0) {
    ibv_cq* cq = nullptr;
    void* cq_ctx = nullptr;
    if (ibv_get_cq_event(channel_, &cq, &cq_ctx) == 0) {
      cq_armed_ = false;
      if (++unacked_cq_events_ >= kAckCqEventsEvery) {
        ibv_ack_cq_events(cq_, unacked_cq_events_);
        unacked_cq_events_ = 0;
      }
    }
  }
  if ((fds[1].revents & POLLIN) != 0) drain_async_events();
}

bool VerbsTransport::run_until(const std::function<bool()>& done,
                               std::chrono::nanoseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  unsigned empty = 0;
  for (;;) {
    if (done()) return true;
    if (!failure_.empty() || qp_ == nullptr) return false;
    const int n = drain_cq();
    const auto now = Clock::now();
    if (now >= deadline) return done();
    if (n > 0) {
      empty = 0;
      continue;
    }
    if (++empty < kSpinPolls) continue;
    wait_event(std::min<std::chrono::nanoseconds>(deadline - now, kMaxWait));
  }
}

std::string VerbsTransport::describe() const {
  std::string s = "verbs qp " + hex24(qpn()) + " -> " + hex24(config_.remote_qpn) + " on " +
                  device_name_ + " port " + std::to_string(config_.port) + " gid " +
                  std::to_string(gid_index_);
  if (qp_ != nullptr) {
    ibv_qp_attr a{};
    ibv_qp_init_attr ia{};
    if (ibv_query_qp(qp_, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &ia) == 0) {
      s += std::string(" state=") + qp_state_name(a.qp_state) + " sq_psn=" + hex24(a.sq_psn) +
           " rq_psn=" + hex24(a.rq_psn);
    } else {
      s += " state=? (ibv_query_qp: " + err_text(errno) + ")";
    }
  }
  s += " outstanding_sends=" + std::to_string(window_.outstanding_sends()) + " (" +
       std::to_string(window_.outstanding_packets()) + " of " +
       std::to_string(window_.max_packets()) + " packets)" +
       " queued_sends=" + std::to_string(window_.queued()) +
       " posted_recvs=" + std::to_string(recvs_.size()) +
       " completions_ready=" + std::to_string(ready_.size());
  if (mrs_) {
    s += " mrs=" + std::to_string(mrs_->size()) + " (" + std::to_string(mrs_->registrations()) +
         " registered, " + std::to_string(mrs_->hits()) + " reused)";
    if (!mrs_->error().empty()) s += " last_mr_error='" + mrs_->error() + "'";
  }
  if (error_completions_ > 0) {
    s += " error_completions=" + std::to_string(error_completions_) + " first: " + last_wc_error_;
  }
  if (!failure_.empty()) s += " FAILED: " + failure_;
  return s;
}

}  // namespace epic::verbs
