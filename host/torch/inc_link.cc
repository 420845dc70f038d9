#include "host/torch/inc_link.h"

#include <stdexcept>

#include "host/inc/communicator.h"
#include "host/torch/pg_config.h"

namespace epic::torch_backend {

namespace {

// Indexed by Elem and Reduction (inc_link.h lists them in this order).
constexpr inc::DType kDTypes[] = {inc::DType::kInt32, inc::DType::kFp32, inc::DType::kFp16,
                                  inc::DType::kBf16, inc::DType::kInt8};
constexpr inc::ReduceOp kOps[] = {inc::ReduceOp::kSum, inc::ReduceOp::kMin, inc::ReduceOp::kMax};

inc::DType dtype_of(Elem t) { return kDTypes[static_cast<size_t>(t)]; }
inc::ReduceOp op_of(Reduction op) { return kOps[static_cast<size_t>(op)]; }

// "" when done; libinc's refusal (nothing sent); throws when the collective failed.
std::string outcome(const char* what, const inc::Status& s) {
  if (s.ok()) return "";
  if (s.code == inc::Code::kInvalidArgument) return s.message;
  throw std::runtime_error(std::string("epic_torch: ") + what + " failed on EPIC (" +
                           std::string(inc::to_string(s.code)) + "): " + s.message);
}

}  // namespace

struct IncLink::State {
  inc::CommConfig config;
  std::unique_ptr<inc::Communicator> comm;
};

IncLink::IncLink() : s_(std::make_unique<State>()) {}
IncLink::~IncLink() = default;

std::unique_ptr<IncLink> IncLink::configure(const PgIdentity& id) {
  std::unique_ptr<IncLink> link(new IncLink());
  PgConfig cfg = pg_config_from_env(id);
  link->error_ = cfg.error;
  link->notes_ = cfg.notes;
  link->s_->config = cfg.config;
  return link;
}

std::string IncLink::join() {
  if (!error_.empty()) return error_;
  inc::Communicator::Created created = inc::Communicator::create(s_->config);
  if (!created.ok()) return created.error;
  s_->comm = std::move(created.value);
  return "";
}

bool IncLink::joined() const { return s_->comm != nullptr; }

std::chrono::milliseconds IncLink::join_timeout() const { return s_->config.manager.join_timeout; }

std::string IncLink::close() {
  if (!s_->comm) return "";
  const inc::Status s = s_->comm->close();
  return s.ok() ? "" : s.message;
}

std::string IncLink::describe() const {
  if (!s_->comm) return "not joined";
  const auto& a = s_->comm->arith();
  std::string d = "mode " + std::string(s_->comm->mode()) + ", transport " +
                  std::string(s_->comm->transport()) + ", accumulator " +
                  std::string(vocab::to_string(a.profile));
  if (a.dtype) d += " dtype " + std::string(vocab::to_string(*a.dtype));
  return d;
}

std::string IncLink::allreduce(const void* send, void* recv, size_t count, Elem t, Reduction op) {
  return outcome("allreduce", s_->comm->allreduce(send, recv, count, dtype_of(t), op_of(op)));
}

std::string IncLink::reduce(const void* send, void* recv, size_t count, Elem t, Reduction op,
                            uint16_t root) {
  return outcome("reduce", s_->comm->reduce(send, recv, count, dtype_of(t), op_of(op), root));
}

std::string IncLink::broadcast_bytes(void* buf, size_t bytes, uint16_t root) {
  return outcome("broadcast", s_->comm->broadcast(buf, bytes, inc::DType::kInt8, root));
}

std::string IncLink::barrier() { return outcome("barrier", s_->comm->barrier()); }

std::string IncLink::reduce_scatter(const void* send, void* recv, size_t recv_count, Elem t,
                                    Reduction op) {
  return outcome("reduce_scatter",
                 s_->comm->reduce_scatter(send, recv, recv_count, dtype_of(t), op_of(op)));
}

std::string IncLink::allgather_bytes(const void* send, void* recv, size_t send_bytes) {
  return outcome("allgather", s_->comm->allgather(send, recv, send_bytes, inc::DType::kInt8));
}

}  // namespace epic::torch_backend
