#include "host/inc/communicator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "host/collective/collective_runner.h"
#include "host/collective/layout.h"
#include "host/collective/piece_size.h"
#include "host/collective/plan.h"
#include "host/fallback/host_collectives.h"
#include "host/transport/endpoint.h"

namespace epic::inc {

using vocab::CollectiveType;

std::string_view to_string(Code c) {
  switch (c) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kTransport:
      return "transport error";
    case Code::kTimeout:
      return "timeout";
    case Code::kBroken:
      return "communicator broken";
  }
  return "?";
}

Communicator::Created Communicator::create(const CommConfig& config) {
  if (config.ranks == 0 || config.rank >= config.ranks) {
    return {nullptr, "rank " + std::to_string(config.rank) + " of a group of " +
                         std::to_string(config.ranks) + " ranks"};
  }
  std::unique_ptr<Communicator> c(new Communicator(config));
  if (config.manager.enabled()) {
    if (std::string error = c->join_manager(); !error.empty()) return {nullptr, error};
    return {std::move(c), ""};
  }
  auto t = host::open_transport(config.transport);
  if (!t.ok()) return {nullptr, t.error};
  c->transport_ = std::move(t.value);
  c->runner_ = std::make_unique<host::CollectiveRunner>(*c->transport_, config.rank, config.ranks);
  return {std::move(c), ""};
}

Communicator::Communicator(const CommConfig& config) : config_(config) {}

Communicator::~Communicator() { close(); }

std::string_view Communicator::transport() const {
  return host_ ? std::string_view(host_kind_) : transport_->kind();
}

Status Communicator::invalid(const std::string& why) {
  last_error_ = {Code::kInvalidArgument, why};
  return last_error_;
}

void Communicator::break_with(Code code, const std::string& why) {
  if (!broken_.ok()) return;
  broken_ = {code, why};
  // The runner's receives point into the callers' result buffers and its unacknowledged
  // sends read their inputs (and ops_' staging, freed below): withdraw them all before any
  // request reports its failure and its buffers go back to the caller.
  if (transport_) transport_->flush();
  for (const Op& op : ops_) finished_[op.id] = {code, op.what + ": " + why};
  ops_.clear();
  ++progress_epoch_;
}

Request Communicator::post(CollectiveType type, DType t, ReduceOp op, uint16_t root,
                           const void* send_v, void* recv_v, size_t count) {
  const auto* send = static_cast<const uint8_t*>(send_v);
  auto* recv = static_cast<uint8_t*>(recv_v);
  const std::string name(vocab::to_string(type));
  if (!broken_.ok()) {
    last_error_ = {Code::kBroken, broken_.message};
    return {};
  }
  if (closed_) {
    invalid(name + " on a closed communicator");
    return {};
  }
  if (vocab::dtype_from_code(static_cast<uint8_t>(t)) == std::nullopt) {
    invalid(name + ": unknown data type code " + std::to_string(static_cast<int>(t)));
    return {};
  }
  if (vocab::reduce_op_from_code(static_cast<uint8_t>(op)) == std::nullopt) {
    invalid(name + ": unknown reduce operation code " + std::to_string(static_cast<int>(op)));
    return {};
  }
  const uint16_t R = config_.ranks;
  const uint16_t me = config_.rank;
  // The group's slots hold this reduction's accumulator (the switch refuses it otherwise).
  const bool reduces = type == CollectiveType::kAllReduce || type == CollectiveType::kReduce ||
                       type == CollectiveType::kReduceScatter;
  if (reduces && !vocab::collective_fits(config_.transport.pmtu, config_.arith, R, t, op)) {
    invalid(name + " of " + std::string(vocab::to_string(t)) + " " +
            std::string(vocab::to_string(op)) + ": its accumulator does not fit the slots of " +
            "this group's arithmetic (" + std::string(vocab::to_string(config_.arith.profile)) +
            (config_.arith.dtype ? ", dtype " + std::string(vocab::to_string(*config_.arith.dtype))
                                 : ", no dtype named: every type but fp8") +
            "; docs/arithmetic.md): create the group with INC_DTYPE for this type");
    return {};
  }
  const bool rooted = type == CollectiveType::kReduce || type == CollectiveType::kBroadcast;
  if (rooted && root >= R) {
    invalid(name + ": root " + std::to_string(root) + " is not a rank of this group of " +
            std::to_string(R));
    return {};
  }
  if (type != CollectiveType::kBarrier && count == 0) {
    invalid(name + ": count is 0 (nothing to do: skip the call)");
    return {};
  }
  const bool needs_send = type == CollectiveType::kAllReduce || type == CollectiveType::kReduce ||
                          type == CollectiveType::kReduceScatter ||
                          type == CollectiveType::kAllGather ||
                          (type == CollectiveType::kBroadcast && me == root);
  const bool needs_recv =
      type != CollectiveType::kBarrier && (type != CollectiveType::kReduce || me == root);
  if ((needs_send && send == nullptr) || (needs_recv && recv == nullptr)) {
    invalid(name + ": " + (needs_send && send == nullptr ? "send" : "receive") + " buffer is null");
    return {};
  }
  const size_t esz = vocab::wire_bytes(t);
  if (count > std::numeric_limits<size_t>::max() / esz / R) {
    invalid(name + ": count " + std::to_string(count) + " overflows the buffer size");
    return {};
  }
  if (host_) return post_host(type, t, op, root, send, recv, count);

  Op o;
  o.id = next_id_++;
  // Built by append: GCC 12 -O3 warns falsely (-Wrestrict) on `const char* + std::string`.
  o.what = name;
  o.what.append("(").append(vocab::to_string(t));
  if (type != CollectiveType::kBarrier && type != CollectiveType::kBroadcast &&
      type != CollectiveType::kAllGather) {
    o.what.append(" ").append(vocab::to_string(op));
  }
  if (rooted) o.what.append(", root ").append(std::to_string(root));
  o.what.append(", ").append(std::to_string(count)).append(" elements)");
  // Elements per collective (piece_size.h): within max_collective_bytes, and for a verbs NIC,
  // which sends a whole message at once, every RC message within the window MW.
  const size_t max_message = transport_->kind() == "verbs"
                                 ? size_t{config_.transport.window} * config_.transport.pmtu
                                 : SIZE_MAX;
  const size_t piece =
      host::piece_elements(type, esz, R, config_.max_collective_bytes, max_message);
  o.split = host::split_call(vocab::CollectiveDescriptor{type, t, op, rooted ? root : uint16_t{0},
                                                         static_cast<uint32_t>(count)},
                             me, R, send, recv, piece);
  // Small inputs are copied: the request then completes when its results are in, while the
  // copy stays until the switch acknowledged the uploads (retired_inputs_).
  // (A split ReduceScatter already reads a packed copy.)
  std::vector<uint8_t>& staging = o.split.send_staging;
  size_t user_bytes = 0;
  if (staging.empty()) {
    for (const host::CollectivePiece& p : o.split.pieces) user_bytes += p.send_len;
  }
  if (user_bytes > 0 && user_bytes <= config_.copy_send_bytes && staging.empty()) {
    staging.resize(user_bytes);
    size_t at = 0;
    for (host::CollectivePiece& p : o.split.pieces) {
      if (p.send_len == 0) continue;
      std::memcpy(staging.data() + at, p.send, p.send_len);
      p.send = staging.data() + at;
      at += p.send_len;
    }
    user_bytes = 0;
  }
  o.user_send = user_bytes > 0;
  ops_.push_back(std::move(o));
  const Request r{ops_.back().id};
  progress();  // start it now when the runner is idle
  return r;
}

void Communicator::progress() {
  if (!runner_) return;  // host mode: calls complete when posted
  if (!broken_.ok()) return;
  runner_->poll();
  if (!runner_->error().empty()) {
    break_with(Code::kTransport, runner_->error());
    return;
  }
  if (!transport_->failure().empty()) {
    break_with(Code::kTransport, transport_->failure() + "\n  " + runner_->dump());
    return;
  }
  const uint64_t finished_pieces = runner_->started() - (runner_->done() ? 0 : 1);
  if (finished_pieces != pieces_done_) {
    pieces_done_ = finished_pieces;
    ++progress_epoch_;
  }
  // Start the next piece as soon as the previous collective has its results.
  while (runner_->done()) {
    auto op = std::find_if(ops_.begin(), ops_.end(),
                           [](const Op& o) { return o.started < o.split.pieces.size(); });
    if (op == ops_.end()) break;
    const host::CollectivePiece& p = op->split.pieces[op->started];
    if (!runner_->start(p.desc, {p.send, p.send_len}, {p.recv, p.recv_len})) {
      break_with(Code::kTransport, op->what + ": " + runner_->error());
      return;
    }
    op->last_index = runner_->started() - 1;
    ++op->started;
    runner_->poll();
  }
  // A request is complete when its last result is in and its send buffers are free
  // (Mode-II acknowledges an upload once its receivers acknowledged the result).
  while (!ops_.empty()) {
    Op& op = ops_.front();
    if (op.started < op.split.pieces.size()) break;
    const bool results_in = runner_->done() || runner_->started() > op.last_index + 1;
    const bool uploads_acked = runner_->sends_busy_from() > op.last_index;
    if (!results_in || (op.user_send && !uploads_acked)) break;
    op.split.finish();  // an AllGather split: its results to the caller's buffer
    if (!uploads_acked && !op.split.send_staging.empty()) {
      retired_inputs_.emplace_back(op.last_index, std::move(op.split.send_staging));
    }
    finished_[op.id] = {};
    ops_.pop_front();
    ++progress_epoch_;
  }
  while (!retired_inputs_.empty() && runner_->sends_busy_from() > retired_inputs_.front().first) {
    retired_inputs_.pop_front();
  }
}

bool Communicator::complete(uint64_t id) const { return finished_.count(id) != 0; }

Status Communicator::drive(uint64_t id) {
  if (id == 0 || id >= next_id_) return invalid("wait on an unknown request");
  auto pending = [&] {
    return std::any_of(ops_.begin(), ops_.end(), [&](const Op& o) { return o.id == id; });
  };
  if (!complete(id) && !pending()) return invalid("wait on a request already reported");
  uint64_t seen = progress_epoch_;
  while (!complete(id)) {
    const bool moved = transport_->run_until(
        [&] {
          progress();
          return complete(id) || progress_epoch_ != seen;
        },
        config_.timeout);
    if (moved) {
      seen = progress_epoch_;
      continue;
    }
    const std::string& why = transport_->failure();
    auto op = std::find_if(ops_.begin(), ops_.end(), [&](const Op& o) { return o.id == id; });
    const std::string what = op != ops_.end() ? op->what : "request";
    if (!why.empty()) {
      break_with(Code::kTransport, why + "\n  " + runner_->dump());
    } else {
      break_with(Code::kTimeout, "no collective finished for " +
                                     std::to_string(config_.timeout.count()) + " ms (rank " +
                                     std::to_string(config_.rank) + " of " +
                                     std::to_string(config_.ranks) + ", transport " +
                                     std::string(transport_->kind()) + ")\n  " + runner_->dump());
    }
  }
  Status s = finished_[id];
  finished_.erase(id);
  if (!s.ok()) last_error_ = s;
  return s;
}

bool Communicator::test(Request r) {
  progress();
  return complete(r.id) || (!broken_.ok() && r.id != 0 && r.id < next_id_);
}

Status Communicator::wait(Request r) { return drive(r.id); }

Status Communicator::close() {
  if (closed_) return broken_;
  closed_ = true;
  if (host_) {
    if (broken_.ok()) host_->linger(config_.linger);
    return broken_;
  }
  if (!broken_.ok() || !transport_) {
    leave_manager();
    return broken_;
  }
  transport_->run_until(
      [&] {
        progress();
        return (ops_.empty() && runner_->sends_complete()) || !broken_.ok();
      },
      config_.timeout);
  if (broken_.ok() && !ops_.empty()) {
    break_with(Code::kTimeout, "close: requests still pending after " +
                                   std::to_string(config_.timeout.count()) + " ms\n  " +
                                   runner_->dump());
  }
  // Our last ACKs may be lost: stay to acknowledge the switch's repeated results.
  transport_->run_until([] { return false; }, config_.linger);
  leave_manager();  // after our last ACKs: the last rank to leave tears the group down
  return broken_;
}

std::string Communicator::describe() const {
  if (host_) return host_->describe();
  return "rank " + std::to_string(config_.rank) + "/" + std::to_string(config_.ranks) + " (" +
         std::string(transport_->kind()) + "): " + std::to_string(ops_.size()) +
         " requests pending; " + runner_->dump();
}

#define INC_BLOCKING(call)           \
  const Request r = call;            \
  if (r.id == 0) return last_error_; \
  return wait(r)

Status Communicator::allreduce(const void* s, void* d, size_t n, DType t, ReduceOp op) {
  INC_BLOCKING(iallreduce(s, d, n, t, op));
}
Status Communicator::reduce(const void* s, void* d, size_t n, DType t, ReduceOp op, uint16_t root) {
  INC_BLOCKING(ireduce(s, d, n, t, op, root));
}
Status Communicator::broadcast(void* b, size_t n, DType t, uint16_t root) {
  INC_BLOCKING(ibroadcast(b, n, t, root));
}
Status Communicator::barrier() { INC_BLOCKING(ibarrier()); }
Status Communicator::reduce_scatter(const void* s, void* d, size_t n, DType t, ReduceOp op) {
  INC_BLOCKING(ireduce_scatter(s, d, n, t, op));
}
Status Communicator::allgather(const void* s, void* d, size_t n, DType t) {
  INC_BLOCKING(iallgather(s, d, n, t));
}
#undef INC_BLOCKING

Request Communicator::iallreduce(const void* s, void* d, size_t n, DType t, ReduceOp op) {
  return post(CollectiveType::kAllReduce, t, op, 0, s, d, n);
}
Request Communicator::ireduce(const void* s, void* d, size_t n, DType t, ReduceOp op,
                              uint16_t root) {
  return post(CollectiveType::kReduce, t, op, root, s, d, n);
}
Request Communicator::ibroadcast(void* b, size_t n, DType t, uint16_t root) {
  return post(CollectiveType::kBroadcast, t, ReduceOp::kSum, root, b, b, n);
}
Request Communicator::ibarrier() {
  return post(CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, nullptr, nullptr, 0);
}
Request Communicator::ireduce_scatter(const void* s, void* d, size_t n, DType t, ReduceOp op) {
  return post(CollectiveType::kReduceScatter, t, op, 0, s, d, n);
}
Request Communicator::iallgather(const void* s, void* d, size_t n, DType t) {
  return post(CollectiveType::kAllGather, t, ReduceOp::kSum, 0, s, d, n);
}

}  // namespace epic::inc
