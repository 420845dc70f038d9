// Value types of the user-space RoCEv2 RC endpoint (host/transport/soft):
// work requests, completions, memory regions and the QP's configuration.
// Names follow verbs (ibv_send_wr, ibv_wc, ibv_qp_attr) so that users of
// rdma-core recognise them. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string_view>

#include "datapath/wire/packet_view.h"
#include "datapath/wire/roce_packet.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/pkey.h"

namespace epic::soft {

// Where this QP's packets go and come from (the "address vector").
struct PathConfig {
  vocab::MacAddr local_mac{};
  vocab::MacAddr remote_mac{};  // resolved by ARP in the I/O backend
  wire::IpVersion ip_version = wire::IpVersion::kV4;
  uint32_t local_ipv4 = 0;  // host order
  uint32_t remote_ipv4 = 0;
  vocab::Ipv6Addr local_ipv6{};
  vocab::Ipv6Addr remote_ipv6{};
  uint16_t udp_src_port = 0xC000;  // flow entropy; rxe uses a per-QP port
  uint8_t tos = 0;                 // DSCP(7:2) ECN(1:0) of every packet sent
  uint8_t ttl = 64;
};

struct QpConfig {
  uint32_t qpn = 0;         // local QP number (24 bits)
  uint32_t remote_qpn = 0;  // destination QP of every request and ACK we send
  uint32_t sq_psn = 0;      // first PSN our requester sends
  uint32_t rq_psn = 0;      // first PSN our responder expects (the peer's sq_psn)
  uint16_t pkey = vocab::kDefaultPkey;
  uint16_t pmtu = vocab::kDefaultPmtu;  // path MTU (vocab::valid_pmtu)
  uint32_t max_outstanding = 128;       // EPIC's MW: request packets in flight, unacknowledged
  uint32_t ack_req_every = 64;          // AckReq on every LAST/ONLY and every Nth packet (rxe: 64)
  uint64_t retransmit_timeout_ns = 20'000'000;  // local ACK timeout
  // After a local ACK timeout resend the oldest unacknowledged packet alone (a probe, with
  // AckReq) and go back only if the answer shows that the responder dropped what followed,
  // instead of the whole window (go-back-N, a NIC's way). For EPIC switch peers, which hold
  // a rank's uploads until the slowest rank has contributed (docs/soft-rc-endpoint.md).
  bool probe_on_timeout = false;
  uint8_t retry_count = 7;      // retransmissions after a timeout or NAK-sequence-error
  uint8_t rnr_retry = 7;        // 7 = retry forever, as in IBA
  uint64_t rnr_delay_ns = 0;    // minimum wait after an RNR NAK (the NAK's timer code applies too)
  uint8_t rnr_timer_code = 14;  // min RNR timer we advertise in our RNR NAKs (IBA table)
  uint64_t cnp_interval_ns = 4'000;  // at most one CNP per interval (ConnectX default 4 us)
  uint32_t max_send_wr = 1024;
  uint32_t max_recv_wr = 1024;
  PathConfig path;
};

// One registered memory region a peer may RDMA WRITE into.
struct MemoryRegion {
  uint64_t va = 0;  // virtual address the peer uses in its RETH
  uint8_t* data = nullptr;
  uint64_t length = 0;
  uint32_t rkey = 0;
};

enum class SendOp : uint8_t { kSend, kSendWithImm, kRdmaWrite, kRdmaWriteWithImm };

struct SendWr {
  uint64_t wr_id = 0;
  SendOp op = SendOp::kSend;
  const uint8_t* data = nullptr;  // must stay valid until the completion
  uint32_t length = 0;
  uint32_t imm_data =
      0;  // value of the ImmDt field as read big-endian (= ntohl of ibv_send_wr.imm_data)
  uint64_t remote_va = 0;  // RDMA WRITE only
  uint32_t rkey = 0;       // RDMA WRITE only
  bool signaled = true;    // false: no completion on success (errors always complete)
};

struct RecvWr {
  uint64_t wr_id = 0;
  uint8_t* data = nullptr;  // must stay valid until the completion
  uint32_t length = 0;
};

enum class WcOpcode : uint8_t { kSend, kRdmaWrite, kRecv, kRecvRdmaWithImm };

// Completion status, named after ibv_wc_status.
enum class WcStatus : uint8_t {
  kSuccess,
  kLocLenErr,       // a received SEND is longer than the posted receive buffer
  kRemInvReqErr,    // peer NAK: invalid request
  kRemAccessErr,    // peer NAK: remote access error (bad rkey / range)
  kRemOpErr,        // peer NAK: remote operational error
  kRetryExcErr,     // no ACK after retry_count retransmissions
  kRnrRetryExcErr,  // peer kept answering RNR NAK
  kWrFlushErr,      // QP entered the error state before this work request finished
};
std::string_view to_string(WcStatus s);

struct Completion {
  uint64_t wr_id = 0;
  WcOpcode opcode = WcOpcode::kSend;
  WcStatus status = WcStatus::kSuccess;
  uint32_t byte_len = 0;  // received bytes (receives); message length (sends)
  bool with_imm = false;
  uint32_t imm_data = 0;  // value of the ImmDt field, as SendWr::imm_data
  friend bool operator==(const Completion&, const Completion&) = default;
};

enum class QpState : uint8_t { kRts, kError };

}  // namespace epic::soft
