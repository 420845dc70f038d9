#include "host/fallback/host_collectives.h"

#include <algorithm>
#include <cstring>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kulisch.h"
#include "host/fallback/ring_links.h"
#include "host/fallback/ring_math.h"

namespace epic::host::fallback {

namespace {

constexpr size_t kAccBytes = 4;  // the widest arith::accum_bytes (int8 uses the first byte)

bool valid_dtype(DType t) { return vocab::dtype_from_code(static_cast<uint8_t>(t)).has_value(); }
bool valid_op(ReduceOp op) {
  return vocab::reduce_op_from_code(static_cast<uint8_t>(op)).has_value();
}

}  // namespace

std::string_view to_string(Code c) {
  switch (c) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kTransport:
      return "transport";
    case Code::kTimeout:
      return "timeout";
    case Code::kBroken:
      return "broken";
  }
  return "invalid";
}

namespace {
std::string check_options(const RingOptions& o) {
  if (o.message_bytes < kAccBytes || o.message_bytes % kAccBytes != 0 ||
      o.message_bytes > (1u << 30)) {
    return "host collectives: message_bytes must be a multiple of 4 in 4..2^30";
  }
  if (o.piece_bytes < o.message_bytes || o.piece_bytes / o.message_bytes > 128) {
    return "host collectives: piece_bytes must be 1..128 x message_bytes";
  }
  if (o.timeout.count() <= 0) {
    return "host collectives: timeout must be positive";
  }
  return "";
}
}  // namespace

Result<std::unique_ptr<HostCollectives>> HostCollectives::create(const RingOptions& o) {
  using R = Result<std::unique_ptr<HostCollectives>>;
  if (std::string e = check_options(o); !e.empty()) return R{nullptr, e};
  std::string error;
  std::unique_ptr<RingLinks> links;
  if (o.transport == "soft") {
    links = open_soft_links(o, error);
  } else if (o.transport == "verbs") {
    links = open_verbs_links(o, error);
  } else {
    error = "host collectives: transport \"" + o.transport + "\" is not soft or verbs";
  }
  if (!links) return R{nullptr, "host collectives: " + error};
  return create(o, std::move(links));
}

Result<std::unique_ptr<HostCollectives>> HostCollectives::create(const RingOptions& o,
                                                                 std::unique_ptr<RingLinks> links) {
  using R = Result<std::unique_ptr<HostCollectives>>;
  if (std::string e = check_options(o); !e.empty()) return R{nullptr, e};
  if (!links) return R{nullptr, "host collectives: no ring links"};
  return R{std::unique_ptr<HostCollectives>(new HostCollectives(o, std::move(links))), ""};
}

HostCollectives::HostCollectives(const RingOptions& options, std::unique_ptr<RingLinks> links)
    : options_(options), links_(std::move(links)) {}

HostCollectives::~HostCollectives() = default;

uint32_t HostCollectives::qpn_base() const { return links_->qpn_base(); }

Status HostCollectives::connect(uint16_t rank, const std::vector<RingMember>& members) {
  if (connected_) return {Code::kInvalidArgument, "connect: already connected"};
  if (members.empty() || members.size() > 0xFFFF || rank >= members.size()) {
    return {Code::kInvalidArgument, "connect: rank " + std::to_string(rank) + " of " +
                                        std::to_string(members.size()) + " members"};
  }
  rank_ = rank;
  members_ = members;
  const auto n = static_cast<uint16_t>(members.size());
  if (n > 1) {
    const RingMember& left = members[(rank + n - 1) % n];
    const RingMember& right = members[(rank + 1) % n];
    auto s = links_->connect(left, right);
    if (!s.ok()) {
      members_.clear();
      return {Code::kTransport, "connect: rank " + std::to_string(rank) + ": " + s.error};
    }
  }
  connected_ = true;
  return {};
}

Status HostCollectives::fail(Code code, const std::string& why) {
  broken_ = {code, why};
  abandon();
  return broken_;
}

void HostCollectives::abandon() {
  // Receives posted one step ahead point into the caller's buffers (AllGather's and
  // Broadcast's results) or acc_; unacknowledged sends read the caller's input. Both QPs go
  // to the error state before those buffers return to the caller: no later frame is placed.
  if (!connected_ || size() <= 1) return;
  links_->to_right().flush();
  links_->from_left().flush();
  while (links_->to_right().poll_cq()) {
  }
  while (links_->from_left().poll_cq()) {
  }
  expected_.clear();
}

Status HostCollectives::check_ready(DType t, ReduceOp op, size_t count, const void* send,
                                    const void* recv) {
  if (!broken_.ok()) return {Code::kBroken, broken_.message};
  if (!connected_) return {Code::kInvalidArgument, "not connected (call connect() first)"};
  if (!valid_dtype(t) || !valid_op(op)) return {Code::kInvalidArgument, "invalid dtype or op"};
  if (count > (size_t{1} << 40)) return {Code::kInvalidArgument, "count too large"};
  if (count > 0 && (send == nullptr || recv == nullptr)) {
    return {Code::kInvalidArgument, "null buffer with count " + std::to_string(count)};
  }
  return {};
}

// ---- progress ------------------------------------------------------------------------------

uint32_t HostCollectives::tag(uint32_t step) const {
  return (collective_ & 0xFFFFFFu) << 8 | (step & 0xFFu);
}

void HostCollectives::set_step(std::string what, uint32_t step) {
  phase_ = std::move(what);
  step_ = step;
}

size_t HostCollectives::post_sends(const uint8_t* data, size_t bytes, uint32_t imm) {
  size_t posted = 0;
  for (size_t off = 0; off < bytes; off += options_.message_bytes) {
    soft::SendWr wr;
    wr.wr_id = sends_posted_;
    wr.op = soft::SendOp::kSendWithImm;
    wr.data = data + off;
    wr.length = static_cast<uint32_t>(std::min(options_.message_bytes, bytes - off));
    wr.imm_data = imm;
    if (!links_->to_right().post_send(wr)) {
      poll_error_ = "post_send to the right neighbour refused (send queue full or QP in error)";
      return posted;
    }
    ++sends_posted_;
    ++posted;
  }
  return posted;
}

size_t HostCollectives::post_recvs(uint8_t* data, size_t bytes, uint32_t imm) {
  size_t posted = 0;
  for (size_t off = 0; off < bytes; off += options_.message_bytes) {
    soft::RecvWr wr;
    wr.wr_id = recvs_posted_;
    wr.data = data + off;
    wr.length = static_cast<uint32_t>(std::min(options_.message_bytes, bytes - off));
    if (!links_->from_left().post_recv(wr)) {
      poll_error_ = "post_recv from the left neighbour refused (receive queue full or QP in error)";
      return posted;
    }
    expected_.push_back({wr.length, imm});
    ++recvs_posted_;
    ++posted;
  }
  return posted;
}

void HostCollectives::poll() {
  while (auto c = links_->to_right().poll_cq()) {
    if (c->status != soft::WcStatus::kSuccess) {
      poll_error_ =
          "send to the right neighbour failed: " + std::string(soft::to_string(c->status));
      return;
    }
    if (c->opcode == soft::WcOpcode::kSend) ++sends_done_;
  }
  while (auto c = links_->from_left().poll_cq()) {
    if (c->status != soft::WcStatus::kSuccess) {
      poll_error_ =
          "receive from the left neighbour failed: " + std::string(soft::to_string(c->status));
      return;
    }
    if (c->opcode != soft::WcOpcode::kRecv) continue;
    if (expected_.empty()) {
      poll_error_ = "receive completion from the left neighbour without a posted receive";
      return;
    }
    const Expected want = expected_.front();
    expected_.pop_front();
    if (c->byte_len != want.length || !c->with_imm || c->imm_data != want.imm) {
      poll_error_ = "the left neighbour sent " + std::to_string(c->byte_len) + " bytes tagged " +
                    std::to_string(c->imm_data >> 8) + "/" + std::to_string(c->imm_data & 0xFF) +
                    ", expected " + std::to_string(want.length) + " bytes tagged " +
                    std::to_string(want.imm >> 8) + "/" + std::to_string(want.imm & 0xFF) +
                    " (collective/step): the ranks do not run the same collectives";
      return;
    }
    ++recvs_done_;
  }
}

Status HostCollectives::wait_until(const std::function<bool()>& goal) {
  if (!poll_error_.empty()) return fail(Code::kTransport, describe() + ": " + poll_error_);
  const bool done = links_->run_until(
      [&] {
        poll();
        return !poll_error_.empty() || goal();
      },
      options_.timeout);
  if (!poll_error_.empty()) return fail(Code::kTransport, describe() + ": " + poll_error_);
  if (done) return {};
  const std::string f = links_->failure();
  if (!f.empty()) return fail(Code::kTransport, describe() + ": " + f);
  return fail(Code::kTimeout,
              "timed out after " + std::to_string(options_.timeout.count()) + " ms: " + describe());
}

Status HostCollectives::wait_step(uint64_t recv_goal) {
  recv_goal_ = recv_goal;
  return wait_until([&] { return sends_done_ == sends_posted_ && recvs_done_ >= recv_goal_; });
}

void HostCollectives::linger(std::chrono::milliseconds d) {
  // After a failure the QPs are flushed: nothing left to acknowledge. After a success every
  // posted receive has completed, so lingering only re-ACKs duplicates and never places
  // data; should one still be posted, it is withdrawn rather than left pointing at memory
  // the caller owns again.
  if (!broken_.ok() || !connected_ || size() <= 1) return;
  if (!expected_.empty()) {
    fail(Code::kBroken, describe() + ": receives still posted after the last collective");
    return;
  }
  links_->run_until([] { return false; }, d);
}

std::string HostCollectives::describe() const {
  const uint16_t n = size();
  std::string s = "host-fallback rank " + std::to_string(rank_) + "/" + std::to_string(n) +
                  " collective " + std::to_string(collective_) + " " + phase_ + " step " +
                  std::to_string(step_);
  if (!broken_.ok()) s += " broken";
  if (n <= 1 || !connected_) return s;
  const uint16_t left = static_cast<uint16_t>((rank_ + n - 1) % n);
  const uint16_t right = static_cast<uint16_t>((rank_ + 1) % n);
  s += ": to right rank " + std::to_string(right) + " sends acked " + std::to_string(sends_done_) +
       "/" + std::to_string(sends_posted_) + " [" + links_->to_right().describe() + "]";
  s += "; from left rank " + std::to_string(left) + " received " + std::to_string(recvs_done_) +
       "/" + std::to_string(recv_goal_) + " [" + links_->from_left().describe() + "]";
  return s;
}

// ---- ring algorithms -------------------------------------------------------------------------

Status HostCollectives::ring_reduce_scatter(const std::vector<ChunkIn>& in, uint8_t* out, DType t,
                                            ReduceOp op) {
  const uint16_t n = size();
  size_t max_n = 0;
  for (const ChunkIn& c : in) max_n = std::max(max_n, c.n);
  // An exact group's ring passes Kulisch accumulators (datapath/arith/kulisch.h): every step
  // deposits this rank's values exactly, and the last rounds once.
  const bool exact = vocab::uses_kulisch(options_.arith.profile, t, op);
  const auto acc_bytes = [&](size_t elements) {
    return exact ? arith::kulisch::accum_bytes(t, n, elements) : elements * kAccBytes;
  };
  const auto load = [&](uint8_t* acc, const uint8_t* data, size_t elements) {
    exact ? arith::kulisch::load(t, n, acc, data, elements)
          : arith::reference::load(t, acc, data, elements);
  };
  const auto store = [&](uint8_t* wire, const uint8_t* acc, size_t elements) {
    exact ? arith::kulisch::store(t, n, wire, acc, elements)
          : arith::reference::store(t, wire, acc, elements);
  };
  for (auto& b : acc_) b.resize(std::max<size_t>(b.size(), acc_bytes(max_n)));
  if (n == 1) {
    load(acc_[0].data(), in[0].data, in[0].n);
    store(out, acc_[0].data(), in[0].n);
    return {};
  }
  const uint32_t steps = n - 1u;
  const auto post_recv_step = [&](uint32_t s) {
    const ChunkIn& c = in[rs_recv_chunk(rank_, n, s)];
    post_recvs(acc_[s % 3].data(), acc_bytes(c.n), tag(s));
  };
  // Step s receives into acc_[s % 3] and sends from acc_[(s + 2) % 3]; the
  // receive of step s + 1 is posted before step s is waited for.
  const ChunkIn& first = in[rs_send_chunk(rank_, n, 0)];
  load(acc_[2].data(), first.data, first.n);
  post_recv_step(0);
  for (uint32_t s = 0; s < steps; ++s) {
    set_step("reduce-scatter", s);
    const uint64_t goal = recvs_posted_;
    if (s + 1 < steps) post_recv_step(s + 1);
    post_sends(acc_[(s + 2) % 3].data(), acc_bytes(in[rs_send_chunk(rank_, n, s)].n), tag(s));
    if (Status st = wait_step(goal); !st.ok()) return st;
    const ChunkIn& c = in[rs_recv_chunk(rank_, n, s)];
    if (exact) {
      arith::kulisch::deposit(t, n, acc_[s % 3].data(), c.data, c.n);
    } else {
      arith::reference::combine(t, op, acc_[s % 3].data(), c.data, c.n);
    }
  }
  store(out, acc_[(steps - 1) % 3].data(), in[rank_].n);
  return {};
}

Status HostCollectives::ring_allgather(const std::vector<ChunkOut>& out, size_t wire_bytes) {
  const uint16_t n = size();
  if (n == 1) return {};
  const uint32_t steps = n - 1u;
  const uint32_t base = 0x80;  // allgather steps' tags, apart from reduce-scatter's
  const auto post_recv_step = [&](uint32_t s) {
    const ChunkOut& c = out[ag_recv_chunk(rank_, n, s)];
    post_recvs(c.data, c.n * wire_bytes, tag(base + s));
  };
  post_recv_step(0);
  for (uint32_t s = 0; s < steps; ++s) {
    set_step("allgather", s);
    const uint64_t goal = recvs_posted_;
    if (s + 1 < steps) post_recv_step(s + 1);
    const ChunkOut& c = out[ag_send_chunk(rank_, n, s)];
    post_sends(c.data, c.n * wire_bytes, tag(base + s));
    if (Status st = wait_step(goal); !st.ok()) return st;
  }
  return {};
}

Status HostCollectives::chain_broadcast(uint8_t* buf, size_t bytes, uint16_t root) {
  const uint16_t n = size();
  if (n == 1 || bytes == 0) return {};
  const auto d = static_cast<uint16_t>((rank_ + n - root) % n);  // hops from the root
  set_step("broadcast from rank " + std::to_string(root), d);
  const uint32_t imm = tag(0xB0);
  if (d == 0) {
    post_sends(buf, bytes, imm);
    return wait_step(recvs_posted_);
  }
  const uint64_t first = recvs_done_;
  post_recvs(buf, bytes, imm);
  const uint64_t goal = recvs_posted_;
  if (d == n - 1) return wait_step(goal);
  // Forward each message as soon as it has arrived (a pipelined chain).
  uint64_t forwarded = first;
  recv_goal_ = goal;
  return wait_until([&] {
    while (forwarded < recvs_done_ && poll_error_.empty()) {
      const size_t off = (forwarded - first) * options_.message_bytes;
      post_sends(buf + off, std::min(options_.message_bytes, bytes - off), imm);
      ++forwarded;
    }
    return recvs_done_ >= goal && forwarded == goal && sends_done_ == sends_posted_;
  });
}

Status HostCollectives::allreduce_piece(const uint8_t* send, uint8_t* recv, size_t count, DType t,
                                        ReduceOp op) {
  const uint16_t n = size();
  const size_t wb = vocab::wire_bytes(t);
  std::vector<ChunkIn> in(n);
  std::vector<ChunkOut> out(n);
  for (uint16_t q = 0; q < n; ++q) {
    const ChunkSpan c = chunk_of(count, n, q);
    in[q] = {send + c.offset * wb, c.n};
    out[q] = {recv + c.offset * wb, c.n};
  }
  ++collective_;
  if (Status s = ring_reduce_scatter(in, out[rank_].data, t, op); !s.ok()) return s;
  return ring_allgather(out, wb);
}

// ---- the primitives ------------------------------------------------------------------------

Status HostCollectives::allreduce(const void* send, void* recv, size_t count, DType t,
                                  ReduceOp op) {
  if (Status s = check_ready(t, op, count, send, recv); !s.ok()) return s;
  const size_t wb = vocab::wire_bytes(t);
  for (const ChunkSpan& p : pieces_of(count, options_.piece_bytes / wb)) {
    Status s = allreduce_piece(static_cast<const uint8_t*>(send) + p.offset * wb,
                               static_cast<uint8_t*>(recv) + p.offset * wb, p.n, t, op);
    if (!s.ok()) return s;
  }
  return {};
}

Status HostCollectives::reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op,
                               uint16_t root) {
  const bool is_root = root == rank_;
  if (Status s = check_ready(t, op, count, send, is_root ? recv : send); !s.ok()) return s;
  if (root >= size()) return {Code::kInvalidArgument, "reduce: root " + std::to_string(root)};
  const size_t wb = vocab::wire_bytes(t);
  for (const ChunkSpan& p : pieces_of(count, options_.piece_bytes / wb)) {
    uint8_t* out = nullptr;
    if (is_root) {
      out = static_cast<uint8_t*>(recv) + p.offset * wb;
    } else {
      scratch_.resize(std::max(scratch_.size(), p.n * wb));
      out = scratch_.data();
    }
    Status s = allreduce_piece(static_cast<const uint8_t*>(send) + p.offset * wb, out, p.n, t, op);
    if (!s.ok()) return s;
  }
  return {};
}

Status HostCollectives::broadcast(void* buf, size_t count, DType t, uint16_t root) {
  if (Status s = check_ready(t, ReduceOp::kSum, count, buf, buf); !s.ok()) return s;
  if (root >= size()) return {Code::kInvalidArgument, "broadcast: root " + std::to_string(root)};
  const size_t wb = vocab::wire_bytes(t);
  for (const ChunkSpan& p : pieces_of(count, options_.piece_bytes / wb)) {
    ++collective_;
    Status s = chain_broadcast(static_cast<uint8_t*>(buf) + p.offset * wb, p.n * wb, root);
    if (!s.ok()) return s;
  }
  return {};
}

Status HostCollectives::barrier() {
  // One int32 per rank: every chunk non-empty, so every link carries a message.
  const size_t n = size();
  scratch_.assign(std::max(scratch_.size(), 2 * n * sizeof(int32_t)), 0);
  if (Status s = check_ready(DType::kInt32, ReduceOp::kSum, n, scratch_.data(), scratch_.data());
      !s.ok()) {
    return s;
  }
  std::memset(scratch_.data(), 0, 2 * n * sizeof(int32_t));
  return allreduce_piece(scratch_.data(), scratch_.data() + n * sizeof(int32_t), n, DType::kInt32,
                         ReduceOp::kSum);
}

Status HostCollectives::reduce_scatter(const void* send, void* recv, size_t recv_count, DType t,
                                       ReduceOp op) {
  if (Status s = check_ready(t, op, recv_count, send, recv); !s.ok()) return s;
  const uint16_t n = size();
  const size_t wb = vocab::wire_bytes(t);
  const auto* in = static_cast<const uint8_t*>(send);
  auto* out = static_cast<uint8_t*>(recv);
  for (const ChunkSpan& p :
       pieces_of(recv_count, std::max<size_t>(1, options_.piece_bytes / wb / n))) {
    std::vector<ChunkIn> chunks(n);
    for (uint16_t q = 0; q < n; ++q) chunks[q] = {in + (q * recv_count + p.offset) * wb, p.n};
    ++collective_;
    if (Status s = ring_reduce_scatter(chunks, out + p.offset * wb, t, op); !s.ok()) return s;
  }
  return {};
}

Status HostCollectives::allgather(const void* send, void* recv, size_t send_count, DType t) {
  if (Status s = check_ready(t, ReduceOp::kSum, send_count, send, recv); !s.ok()) return s;
  const uint16_t n = size();
  const size_t wb = vocab::wire_bytes(t);
  const auto* in = static_cast<const uint8_t*>(send);
  auto* out = static_cast<uint8_t*>(recv);
  for (const ChunkSpan& p :
       pieces_of(send_count, std::max<size_t>(1, options_.piece_bytes / wb / n))) {
    std::vector<ChunkOut> chunks(n);
    for (uint16_t q = 0; q < n; ++q) chunks[q] = {out + (q * send_count + p.offset) * wb, p.n};
    std::memmove(chunks[rank_].data, in + p.offset * wb, p.n * wb);
    ++collective_;
    if (Status s = ring_allgather(chunks, wb); !s.ok()) return s;
  }
  return {};
}

Status HostCollectives::run(const vocab::CollectiveDescriptor& d, const void* send, void* recv) {
  using T = vocab::CollectiveType;
  switch (d.type) {
    case T::kAllReduce:
      return allreduce(send, recv, d.count, d.dtype, d.op);
    case T::kReduce:
      return reduce(send, recv, d.count, d.dtype, d.op, d.root);
    case T::kBroadcast:
      return broadcast(recv, d.count, d.dtype, d.root);
    case T::kReduceScatter:
      return reduce_scatter(send, recv, d.count, d.dtype, d.op);
    case T::kAllGather:
      return allgather(send, recv, d.count, d.dtype);
    case T::kBarrier:
      return barrier();
  }
  return {Code::kInvalidArgument, "invalid collective type"};
}

}  // namespace epic::host::fallback
