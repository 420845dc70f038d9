// VerbsTransport: a rank's host::Transport on a real RDMA device through
// rdma-core's libibverbs — one RC queue pair to the switch's virtual endpoint
// for this rank, on any RoCEv2 NIC (ConnectX, Soft-RoCE rdma_rxe, ...).
//
//   open(config)          device, port, GID, PD, CQ, QP, INIT, RTR, RTS
//   create(config)        the same up to INIT: qpn() is known (a rendezvous
//   connect(ipv4, qpn)    hands it to the switch) before the remote endpoint
//                         is, or before the switch answers ARP for it — the
//                         kernel resolves the switch's MAC at RTR
//
// What EPIC needs beyond plain verbs:
//   * work requests point straight into user buffers: an MrCache registers
//     them (page-aligned) on first use and keeps them while in flight;
//   * the sender window MW in packets, enforced in software (SendWindow): the
//     NIC only sees sends whose packets fit the window;
//   * rnr_retry 7 (infinite): the switch answers RNR NAK while other ranks lag.
// Completions come back in the order the NIC reports them (sends in posting
// order); unsignaled sends are posted signaled and their successful
// completions swallowed (the window needs every one).
// Thread-safety: none; one thread owns a transport.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/transport/endpoint.h"
#include "host/transport/soft/io/status.h"
#include "host/transport/verbs/mr_cache.h"
#include "host/transport/verbs/send_window.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/pkey.h"

struct ibv_context;
struct ibv_pd;
struct ibv_cq;
struct ibv_comp_channel;
struct ibv_qp;
struct ibv_wc;

namespace epic::verbs {

struct VerbsConfig {
  std::string device;  // "" = the first device with an ACTIVE port carrying a RoCEv2 IPv4 GID
  uint8_t port = 1;
  int gid_index = -1;               // -1 = the RoCEv2 GID whose IPv4-mapped address is local_ipv4
                                    // (or the first RoCEv2 IPv4 GID when local_ipv4 == 0)
  uint32_t local_ipv4 = 0;          // host order; optional, selects the GID
  uint32_t remote_ipv4 = 0;         // the switch's INC address (host order): GID ::ffff:a.b.c.d
  uint32_t remote_qpn = 0;          // the switch's virtual QPN for this rank
  uint32_t sq_psn = 0, rq_psn = 0;  // the group's initial PSN
  uint16_t pmtu = vocab::kDefaultPmtu;  // <= the port's active MTU
  uint32_t max_outstanding = 128;       // EPIC's window MW, in packets (software, SendWindow)
  uint32_t max_send_wr = 1024, max_recv_wr = 1024;
  uint8_t timeout_code = 14;  // local ACK timeout 4.096 us * 2^code (14: 67 ms; 18: 1.07 s)
  uint8_t retry_count = 7;    // (rdma_rxe treats 7 as infinite; IBA NICs as 7)
  uint8_t rnr_retry = 7;      // 7 = infinite, as the switch needs
  uint8_t min_rnr_timer = 12;
  uint8_t traffic_class = 0;
  uint8_t hop_limit = 64;
  uint8_t sl = 0;
  uint16_t pkey = vocab::kDefaultPkey;  // the P_Key the QP sends (its index in the port's table)
  // Idle memory registrations kept for reuse (mr_cache.h: only safe when
  // buffers are not freed and reallocated while the transport lives, or with
  // ODP). 0: a registration lives while work requests use it.
  uint32_t mr_cache_idle = 0;
};

class VerbsTransport : public host::Transport {
 public:
  // create() + connect(config.remote_ipv4, config.remote_qpn).
  static soft::io::Result<std::unique_ptr<VerbsTransport>> open(const VerbsConfig& config);
  // Device, port, GID, PD, CQ and the QP in INIT: qpn() is valid, nothing can
  // be posted yet.
  static soft::io::Result<std::unique_ptr<VerbsTransport>> create(const VerbsConfig& config);
  // RTR (the kernel resolves remote_ipv4's MAC here, by ARP) and RTS.
  soft::io::Status connect(uint32_t remote_ipv4, uint32_t remote_qpn);
  // The same with the path parameters a rendezvous answered after create() (inc-manager's
  // JoinGroup): they replace the config's sq_psn/rq_psn, pmtu and max_outstanding, and the
  // GRH traffic class when one is given.
  soft::io::Status connect(uint32_t remote_ipv4, uint32_t remote_qpn, uint32_t initial_psn,
                           uint16_t pmtu, uint32_t window,
                           std::optional<uint8_t> traffic_class = std::nullopt);
  // The local GID the QP uses (valid after create()); all zero if it cannot be read.
  std::array<uint8_t, 16> local_gid() const;

  ~VerbsTransport() override;
  VerbsTransport(const VerbsTransport&) = delete;
  VerbsTransport& operator=(const VerbsTransport&) = delete;

  std::string_view kind() const override { return "verbs"; }
  uint16_t pmtu() const override { return config_.pmtu; }
  bool post_send(const soft::SendWr& wr) override;
  bool post_recv(const soft::RecvWr& wr) override;
  std::optional<soft::Completion> poll_cq() override;
  // IBV_QPS_ERR, then waits (bounded) for the NIC's flush completions; a QP
  // that does not report them in time is destroyed, the only other guarantee
  // that the NIC no longer reads or writes the abandoned buffers.
  void flush() override;
  std::string describe() const override;
  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) override;
  const std::string& failure() const override { return failure_; }
  uint32_t qpn() const override;

  const VerbsConfig& config() const { return config_; }
  const std::string& device_name() const { return device_name_; }
  int gid_index() const { return gid_index_; }
  const MrCache& mr_cache() const { return *mrs_; }
  const SendWindow& window() const { return window_; }
  bool connected() const { return connected_; }

 private:
  struct SendSlot {
    soft::SendWr wr;
    std::optional<MrCache::Ref> mr;
  };
  struct RecvSlot {
    soft::RecvWr wr;
    std::optional<MrCache::Ref> mr;
  };

  explicit VerbsTransport(const VerbsConfig& config);
  soft::io::Status setup(const VerbsConfig& config);
  // Moves the sends that fit the window to the NIC.
  void post_queued();
  bool post_one(SendSlot& s);
  // ibv_poll_cq into ready_; returns the completions taken.
  int drain_cq();
  void on_wc(const ibv_wc& wc);
  // Waits (completion channel, async events) for at most `limit`.
  void wait_event(std::chrono::nanoseconds limit);
  void drain_async_events();
  void fail(const std::string& why);
  void flush_queued_if_drained();
  // sends_.front() completes with kWrFlushErr (the NIC no longer has it).
  void retire_front_send_flushed();

  VerbsConfig config_;
  std::string device_name_;
  int gid_index_ = -1;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  std::unique_ptr<MrCache> mrs_;
  SendWindow window_;
  bool connected_ = false;
  bool cq_armed_ = false;
  bool flushed_ = false;
  uint32_t unacked_cq_events_ = 0;

  // Every send not yet completed, in posting order: the first
  // window_.outstanding_sends() are on the NIC, the rest wait in the FIFO.
  std::deque<SendSlot> sends_;
  std::deque<RecvSlot> recvs_;  // posted receive buffers, in posting order
  uint64_t send_seq_ = 0;       // sequence of sends_.front() (the NIC's wr_id is seq << 1)
  uint64_t recv_seq_ = 0;
  std::deque<soft::Completion> ready_;

  std::string failure_;
  std::string last_wc_error_;  // ibv_wc_status_str of the first error completion (not a flush)
  bool last_wc_error_flush_ = false;
  uint64_t error_completions_ = 0;
};

// Names of the RDMA devices present (for --help and errors); empty without any.
std::vector<std::string> list_devices();

}  // namespace epic::verbs
