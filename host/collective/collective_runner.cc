#include "host/collective/collective_runner.h"

#include <algorithm>
#include <cstring>

#include "host/collective/layout.h"
#include "host/collective/plan.h"

namespace epic::host {

namespace s = epic::soft;

namespace {

// wr_id = collective index << 16 | message: 0 the control message (and its
// result), 1.. the data messages in send / receive order.
constexpr unsigned kMessageBits = 16;
uint64_t wr_id(uint64_t index, uint32_t message) { return index << kMessageBits | message; }

}  // namespace

CollectiveRunner::CollectiveRunner(Endpoint& qp, uint16_t rank, uint16_t ranks)
    : qp_(qp), rank_(rank), ranks_(ranks) {}

bool CollectiveRunner::start(const vocab::CollectiveDescriptor& d, std::span<const uint8_t> send,
                             std::span<uint8_t> recv) {
  if (!error_.empty()) return false;
  if (active_) {
    fail("start(" + format_collective(d) + ") while " + describe(started_ - 1) + " is in progress");
    return false;
  }
  if (const vocab::CollectiveFault f = vocab::check_collective(d, ranks_, qp_.pmtu());
      f != vocab::CollectiveFault::kNone) {
    fail("start(" + format_collective(d) + ") in a group of " + std::to_string(ranks_) +
         " at path MTU " + std::to_string(qp_.pmtu()) + ": " + std::string(vocab::to_string(f)));
    return false;
  }
  const vocab::CollectiveShape sh = vocab::shape_of(d, ranks_, qp_.pmtu());
  const uint32_t chunk = sh.chunk_bytes;
  const uint32_t sends = sh.n_data == 0 ? 0 : sh.send_count(rank_) / sh.chunk_packets;
  const uint32_t recvs = sh.n_data == 0 ? 0 : sh.recv_count(rank_) / sh.chunk_packets;
  // The root of a Broadcast keeps its own data; an AllGather rank its own chunk.
  const bool local_part =
      chunk > 0 && ((d.type == vocab::CollectiveType::kBroadcast && rank_ == d.root) ||
                    d.type == vocab::CollectiveType::kAllGather);
  const size_t need_send = sends > 0 || local_part ? send_bytes(d, ranks_) : 0;
  const size_t need_recv = recv_bytes(d, rank_, ranks_);
  if (send.size() < need_send || recv.size() < need_recv) {
    fail(format_collective(d) + " as collective " + std::to_string(started_) + ": buffers of " +
         std::to_string(send.size()) + " / " + std::to_string(recv.size()) + " bytes, rank " +
         std::to_string(rank_) + " needs " + std::to_string(need_send) + " to send and " +
         std::to_string(need_recv) + " to receive");
    return false;
  }
  const uint64_t index = started_++;
  active_ = true;
  shape_ = sh;
  send_ = send;
  recv_ = recv;
  result_messages_ = recvs;
  results_in_ = 0;
  control_in_ = false;

  if (local_part) {
    const size_t at = d.type == vocab::CollectiveType::kAllGather ? size_t{rank_} * chunk : 0;
    std::memmove(recv.data() + at, send.data(), chunk);
  }
  Upload& up = uploads_.emplace_back();
  up.index = index;
  up.desc = d;
  up.sends_left = 1 + sends;
  vocab::encode_control(d, up.control.data());

  bool ok = qp_.post_recv({wr_id(index, 0), control_result_.data(), vocab::kControlPayloadBytes});
  for (uint32_t m = 0; m < recvs; ++m) {
    // AllGather results are the other ranks' chunks in rank order, each at its own offset.
    const uint32_t from = d.type == vocab::CollectiveType::kAllGather && m >= rank_ ? m + 1 : m;
    const size_t at = d.type == vocab::CollectiveType::kAllGather ? size_t{from} * chunk : 0;
    ok = ok && qp_.post_recv({wr_id(index, 1 + m), recv.data() + at, chunk});
  }
  ok = ok && qp_.post_send({wr_id(index, 0), s::SendOp::kSendWithImm, up.control.data(),
                            vocab::kControlPayloadBytes, vocab::kControlImm});
  deferred_ = !sh.multi_source() && sends > 0;
  if (ok && !deferred_) ok = post_data();
  if (!ok) {
    fail("the QP refused a work request (queue full or QP in error) for " + describe(index));
    return false;
  }
  return true;
}

bool CollectiveRunner::post_data() {
  const uint64_t index = started_ - 1;
  const uint32_t chunk = shape_.chunk_bytes;
  const uint32_t sends = shape_.n_data == 0 ? 0 : shape_.send_count(rank_) / shape_.chunk_packets;
  bool ok = true;
  for (uint32_t m = 0; m < sends && ok; ++m) {
    // ReduceScatter sends every chunk of its input; the others send their whole input once.
    const size_t at =
        shape_.desc.type == vocab::CollectiveType::kReduceScatter ? size_t{m} * chunk : 0;
    ok = qp_.post_send({wr_id(index, 1 + m), s::SendOp::kSend, send_.data() + at, chunk});
  }
  return ok;
}

void CollectiveRunner::maybe_send_deferred() {
  if (!deferred_ || !control_in_) return;
  if (shape_.desc.type == vocab::CollectiveType::kAllGather && results_in_ < rank_) return;
  deferred_ = false;
  if (!post_data()) {
    fail("the QP refused the deferred data of " + describe(started_ - 1));
  }
}

void CollectiveRunner::poll() {
  while (auto c = qp_.poll_cq()) {
    if (error_.empty()) on_completion(*c);
  }
}

void CollectiveRunner::on_completion(const s::Completion& c) {
  const uint64_t index = c.wr_id >> kMessageBits;
  const auto message = static_cast<uint32_t>(c.wr_id & ((1u << kMessageBits) - 1));
  const bool is_send = c.opcode == s::WcOpcode::kSend || c.opcode == s::WcOpcode::kRdmaWrite;
  if (c.status != s::WcStatus::kSuccess) {
    fail(describe(index) + ": " + (is_send ? "send" : "receive") + " of " +
         (message == 0 ? std::string("the control message")
                       : "data message " + std::to_string(message - 1)) +
         " completed with " + std::string(s::to_string(c.status)));
    return;
  }
  if (!is_send) {
    on_receive(index, message, c);
    return;
  }
  auto up = std::find_if(uploads_.begin(), uploads_.end(),
                         [&](const Upload& u) { return u.index == index; });
  if (up == uploads_.end() || up->sends_left == 0) {
    fail("a send completion (wr_id " + std::to_string(c.wr_id) + ") for nothing posted");
    return;
  }
  --up->sends_left;
  while (!uploads_.empty() && uploads_.front().sends_left == 0) uploads_.pop_front();
}

void CollectiveRunner::on_receive(uint64_t index, uint32_t message, const s::Completion& c) {
  if (!active_ || index != started_ - 1) {
    fail("a receive completion for collective " + std::to_string(index) + " while " +
         (active_ ? describe(started_ - 1) + " is in progress" : std::string("idle")));
    return;
  }
  if (message == 0) {
    std::array<uint8_t, vocab::kControlPayloadBytes> sent{};
    vocab::encode_control(shape_.desc, sent.data());
    if (!c.with_imm || c.imm_data != vocab::kControlImm ||
        c.byte_len != vocab::kControlPayloadBytes || sent != control_result_) {
      const auto got = vocab::decode_control(control_result_.data(), c.byte_len);
      fail(describe(index) + ": the switch returned a different control result (" +
           (got ? format_collective(*got)
                : "undecodable, " + std::to_string(c.byte_len) + " bytes") +
           (c.with_imm ? "" : ", no immediate") + ")");
      return;
    }
    control_in_ = true;
  } else {
    if (c.byte_len != shape_.chunk_bytes) {
      fail(describe(index) + ": result message " + std::to_string(message - 1) + " has " +
           std::to_string(c.byte_len) + " bytes, expected " + std::to_string(shape_.chunk_bytes));
      return;
    }
    ++results_in_;
  }
  maybe_send_deferred();
  if (control_in_ && results_in_ == result_messages_ && error_.empty()) active_ = false;
}

uint64_t CollectiveRunner::sends_busy_from() const {
  return uploads_.empty() ? started_ : uploads_.front().index;
}

void CollectiveRunner::fail(const std::string& why) {
  if (error_.empty()) error_ = why + "\n  " + dump();
}

std::string CollectiveRunner::describe(uint64_t index) const {
  std::string what = "collective " + std::to_string(index);
  if (active_ && index == started_ - 1) return what + " (" + format_collective(shape_.desc) + ")";
  for (const Upload& u : uploads_) {
    if (u.index == index) return what + " (" + format_collective(u.desc) + ")";
  }
  return what;
}

std::string CollectiveRunner::dump() const {
  std::string o = "rank " + std::to_string(rank_) + "/" + std::to_string(ranks_) + ": ";
  if (active_) {
    o += describe(started_ - 1) + " waits for " + (control_in_ ? "" : "the control result and ") +
         std::to_string(result_messages_ - results_in_) + " of " +
         std::to_string(result_messages_) + " result messages (downlink, switch to rank)";
    if (deferred_) o += ", its data not yet sent (deferred)";
  } else {
    o += "idle after " + std::to_string(started_) + " collectives";
  }
  o += "; unacknowledged uploads of " + std::to_string(uploads_.size()) + " collectives" +
       (uploads_.empty() ? "" : " from " + std::to_string(uploads_.front().index)) +
       " (uplink, rank to switch); " + qp_.describe();
  return o;
}

}  // namespace epic::host
