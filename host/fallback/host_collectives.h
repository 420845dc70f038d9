// HostCollectives: EPIC's host-based collectives — what libinc runs when the
// switch has no INC memory for a group (inc-manager answers "no INC memory").
// The same primitives, arguments and buffer contract as inc::Communicator
// (host/inc/communicator.h, host/collective/layout.h), computed by the ranks
// themselves on a ring over the same transports (soft or verbs), the frames
// crossing incd as ordinary L2-switched RoCEv2 traffic.
//
// Each rank holds two RC QPs: qpn_base() (its LEFT neighbour's right QP
// connects to it) and qpn_base() + 1 (connects to its RIGHT neighbour's
// qpn_base). Data only flows rightwards: SENDs on the right QP, receives on
// the left QP. Algorithms (docs/host-fallback.md):
//
//   AllReduce      ring reduce-scatter, then ring allgather (bandwidth-optimal)
//   ReduceScatter  ring reduce-scatter
//   AllGather      ring allgather
//   Reduce         AllReduce, the result kept at the root only
//   Broadcast      a pipelined chain from the root rightwards, message by message
//   Barrier        an AllReduce of one int32 per rank
//
// Arithmetic is arith::reference (load / combine / store, datapath/arith):
// partial sums travel as accumulators (4 bytes an element, so fp16/bf16 are
// rounded once, at the end, as on the switch). Integer results and min/max are
// bit-identical to the switch's; a float sum is combined in ring order — chunk
// q as x[q+1], then x[q+2], ..., then x[q] (ring_order() in ring_math.h) —
// while the switch adds in arrival order, so neither is order-independent.
//
// Calls are split into pieces of at most RingOptions::piece_bytes per rank and
// each piece's transfers into SENDs of at most RingOptions::message_bytes,
// received into buffers posted one step ahead: memory is bounded by
// ~3 x piece_bytes / ranks (+ piece_bytes for a non-root Reduce). Every SEND
// carries an immediate naming its collective and step, so a neighbour running
// another collective is reported, never reduced into a wrong result. A
// timeout or transport failure breaks the object: later calls fail with the
// same report (describe()), and both QPs are flushed before the failed call
// returns, so no frame is placed into (or read from) its buffers afterwards.
//
// Thread-safety: none; one thread owns an object and calls it blocking.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/transport/soft/io/status.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/collective.h"
#include "proto/vocab/dtype.h"
#include "proto/vocab/limits.h"

namespace epic::host::fallback {

using vocab::DType;
using vocab::ReduceOp;

// The same codes, in the same order, as inc::Code (host/inc/communicator.h).
enum class Code : uint8_t { kOk, kInvalidArgument, kTransport, kTimeout, kBroken };
std::string_view to_string(Code c);

struct Status {
  Code code = Code::kOk;
  std::string message;
  bool ok() const { return code == Code::kOk; }
};

// value + error ("" = ok), as the transports' open()/create().
template <typename T>
using Result = soft::io::Result<T>;

struct RingMember {
  uint32_t ipv4 = 0;              // host order
  std::array<uint8_t, 6> mac{};   // soft: all zero = resolve by ARP; verbs: unused
  std::array<uint8_t, 16> gid{};  // verbs: must be ::ffff:ipv4 (see RingOptions)
  uint32_t qpn_base = 0;          // this rank's left QP; its right QP is qpn_base + 1
};

struct RingOptions {
  std::string transport = "soft";  // "soft" | "verbs"
  // soft: the interface and this endpoint's own identity (SoftNicConfig).
  std::string ifname;
  uint32_t ipv4 = 0;  // host order; not the kernel's address on ifname
  std::array<uint8_t, 6> mac{};
  uint32_t soft_qpn_base = 0x100;  // soft QPNs are ours to choose: base and base + 1
  std::chrono::milliseconds arp_timeout{3000};
  // verbs (VerbsConfig): "" = the first active RoCEv2 device; -1 = the GID of ipv4.
  std::string device;
  uint8_t port = 1;
  int gid_index = -1;
  // both
  uint16_t pmtu = vocab::kDefaultPmtu;
  // The group's arithmetic: an exact group (KULISCH_FIXED) reduces its float sums exactly on the
  // host path too — the ring passes Kulisch accumulators and rounds once at the end — so falling
  // back never changes a result's bits (docs/host-fallback.md).
  vocab::GroupArith arith{};
  uint32_t initial_psn = 0;                  // sq_psn and rq_psn of both QPs (every rank the same)
  std::chrono::milliseconds timeout{60000};  // one ring step waits at most this long
  size_t message_bytes = 256 * 1024;         // largest SEND (multiple of 4)
  size_t piece_bytes = 16 * 1024 * 1024;     // per rank per ring pass; <= 128 messages
  uint32_t max_outstanding = 128;            // packets in flight per QP (MW)
};

class RingLinks;

class HostCollectives {
 public:
  // Opens the transport and creates both QPs, unconnected; qpn_base() is known after.
  static Result<std::unique_ptr<HostCollectives>> create(const RingOptions& options);
  // Over links someone else provides (tests' in-memory ring; ring_links.h);
  // options.transport and its transport fields are ignored.
  static Result<std::unique_ptr<HostCollectives>> create(const RingOptions& options,
                                                         std::unique_ptr<RingLinks> links);
  ~HostCollectives();
  HostCollectives(const HostCollectives&) = delete;
  HostCollectives& operator=(const HostCollectives&) = delete;

  uint32_t qpn_base() const;
  // members[rank] is this rank; N == 1 needs no QPs. Once only.
  Status connect(uint16_t rank, const std::vector<RingMember>& members);

  uint16_t rank() const { return rank_; }
  uint16_t size() const { return static_cast<uint16_t>(members_.size()); }

  // Blocking; the buffer contract of inc::Communicator.
  Status allreduce(const void* send, void* recv, size_t count, DType t, ReduceOp op);
  Status reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, uint16_t root);
  Status broadcast(void* buf, size_t count, DType t, uint16_t root);
  Status barrier();
  Status reduce_scatter(const void* send, void* recv, size_t recv_count, DType t, ReduceOp op);
  Status allgather(const void* send, void* recv, size_t send_count, DType t);

  // The primitive `d` names (d.count as layout.h counts it), dispatched to the
  // calls above; Broadcast runs in place in `recv` (the root's input there).
  Status run(const vocab::CollectiveDescriptor& d, const void* send, void* recv);

  // Keeps answering the neighbours (ACKs of retransmitted requests) for `d`,
  // e.g. before the process exits, as a NIC would after the last completion.
  // Never places data: no receive is posted between collectives, and after a
  // failure (broken) it does nothing.
  void linger(std::chrono::milliseconds d);

  // One line: rank, the step in progress, what is awaited from which neighbour, both QPs.
  std::string describe() const;

 private:
  struct ChunkIn {
    const uint8_t* data = nullptr;
    size_t n = 0;  // elements
  };
  struct ChunkOut {
    uint8_t* data = nullptr;
    size_t n = 0;
  };
  struct Expected {
    uint32_t length = 0;
    uint32_t imm = 0;
  };

  explicit HostCollectives(const RingOptions& options, std::unique_ptr<RingLinks> links);
  Status check_ready(DType t, ReduceOp op, size_t count, const void* send, const void* recv);
  // Breaks the object with `why` and abandon()s the work in flight.
  Status fail(Code code, const std::string& why);
  // Flushes both QPs (Endpoint::flush): no posted work request refers to a
  // caller's buffer when a failed call returns.
  void abandon();

  Status allreduce_piece(const uint8_t* send, uint8_t* recv, size_t n, DType t, ReduceOp op);
  Status ring_reduce_scatter(const std::vector<ChunkIn>& in, uint8_t* out, DType t, ReduceOp op);
  Status ring_allgather(const std::vector<ChunkOut>& out, size_t wire_bytes);
  Status chain_broadcast(uint8_t* buf, size_t bytes, uint16_t root);

  uint32_t tag(uint32_t step) const;
  void set_step(std::string what, uint32_t step);
  size_t post_sends(const uint8_t* data, size_t bytes, uint32_t imm);
  size_t post_recvs(uint8_t* data, size_t bytes, uint32_t imm);
  void poll();
  Status wait_until(const std::function<bool()>& goal);
  Status wait_step(uint64_t recv_goal);

  RingOptions options_;
  std::unique_ptr<RingLinks> links_;
  uint16_t rank_ = 0;
  std::vector<RingMember> members_;
  bool connected_ = false;

  std::array<std::vector<uint8_t>, 3> acc_;  // ring reduce-scatter staging
  std::vector<uint8_t> scratch_;             // a non-root Reduce's piece result, Barrier

  uint32_t collective_ = 0;  // pieces run, for the SENDs' immediates
  std::string phase_ = "idle";
  uint32_t step_ = 0;
  uint64_t sends_posted_ = 0, sends_done_ = 0;
  uint64_t recvs_posted_ = 0, recvs_done_ = 0;
  uint64_t recv_goal_ = 0;
  std::deque<Expected> expected_;  // posted receives, oldest first
  std::string poll_error_;
  Status broken_;
};

}  // namespace epic::host::fallback
