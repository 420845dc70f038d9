#include "host/torch/process_group_epic.h"

#include <ATen/core/ivalue.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>

namespace epic::torch_backend {

namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

std::optional<Elem> epic_dtype(at::ScalarType s) {
  switch (s) {
    case at::kInt:
      return Elem::kInt32;
    case at::kFloat:
      return Elem::kFp32;
    case at::kHalf:
      return Elem::kFp16;
    case at::kBFloat16:
      return Elem::kBf16;
    case at::kChar:
      return Elem::kInt8;
    default:
      return std::nullopt;
  }
}

std::optional<Reduction> epic_op(c10d::ReduceOp op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return Reduction::kSum;
    case c10d::ReduceOp::MIN:
      return Reduction::kMin;
    case c10d::ReduceOp::MAX:
      return Reduction::kMax;
    default:
      return std::nullopt;
  }
}

const char* op_name(c10d::ReduceOp op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return "SUM";
    case c10d::ReduceOp::AVG:
      return "AVG";
    case c10d::ReduceOp::PRODUCT:
      return "PRODUCT";
    case c10d::ReduceOp::MIN:
      return "MIN";
    case c10d::ReduceOp::MAX:
      return "MAX";
    case c10d::ReduceOp::BAND:
      return "BAND";
    case c10d::ReduceOp::BOR:
      return "BOR";
    case c10d::ReduceOp::BXOR:
      return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM:
      return "PREMUL_SUM";
    default:
      return "UNKNOWN";
  }
}

std::string random_id() {
  std::random_device rd;
  std::uniform_int_distribution<uint64_t> dist;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(dist(rd)));
  return buf;
}

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }
std::string string_of(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

void check_one(const std::vector<at::Tensor>& tensors, const char* what) {
  TORCH_CHECK(tensors.size() == 1, "epic: ", what, " takes one tensor per process, got ",
              tensors.size());
}

void gloo_wait(const c10::intrusive_ptr<c10d::Work>& w) { w->wait(); }

}  // namespace

BackendOptions BackendOptions::from_env() {
  BackendOptions o;
  o.log_every_call = env_flag("EPIC_TORCH_LOG");
  o.strict = env_flag("EPIC_TORCH_STRICT");
  return o;
}

// A collective's handle: completed by the worker; its future carries the output tensors (the
// DDP reducer reads an allreduce's result through getFuture()).
class ProcessGroupEpic::EpicWork : public c10d::Work {
 public:
  EpicWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
      : Work(rank, type),
        outputs_(std::move(outputs)),
        future_(c10::make_intrusive<at::ivalue::Future>(
            c10::ListType::create(c10::TensorType::get()))) {}

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  void complete(const std::exception_ptr& error) {
    if (error) {
      future_->setError(error);
    } else {
      future_->markCompleted(c10::IValue(outputs_));
    }
    finish(error);
  }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<at::ivalue::Future> future_;
};

ProcessGroupEpic::ProcessGroupEpic(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout,
                                   c10::intrusive_ptr<c10d::ProcessGroup> gloo,
                                   const std::string& torch_group, uint32_t pg_index,
                                   BackendOptions options)
    : ProcessGroup(rank, size), options_(options), gloo_(std::move(gloo)) {
  TORCH_CHECK(gloo_, "epic: a Gloo process group for the fallback is required");
  TORCH_CHECK(size >= 1 && size <= 65535, "epic: group size ", size, " is not 1..65535");
  init();
  join(store, torch_group, pg_index, timeout);
  worker_ = std::thread([this] { worker_loop(); });
}

ProcessGroupEpic::~ProcessGroupEpic() { shutdown(); }

void ProcessGroupEpic::join(const c10::intrusive_ptr<c10d::Store>& store,
                            const std::string& torch_group, uint32_t pg_index,
                            std::chrono::milliseconds timeout) {
  // Members agree on the manager group's name through the store: rank 0 of every creation
  // ("generation": torch reuses its group names after destroy_process_group) writes a random id.
  const int64_t arrival = store->add("epic/arrivals", 1);
  const std::string gen = "epic/" + std::to_string((arrival - 1) / size_) + "/";
  if (rank_ == 0) store->set(gen + "id", bytes_of(random_id()));
  store->wait({gen + "id"}, timeout);
  const char* prefix = std::getenv("INC_GROUP");
  group_name_ = std::string(prefix != nullptr && prefix[0] != '\0' ? prefix : "torch") + "/" +
                string_of(store->get(gen + "id")) + "/pg" + torch_group;
  const std::string label = "pg " + torch_group + " (" + group_name_ + ", rank " +
                            std::to_string(rank_) + " of " + std::to_string(size_) + ")";
  stats_ = std::make_shared<OffloadStats>(label, options_.log_every_call);

  // A configuration error on any member is an error on every member (nobody is left waiting
  // in a rendezvous the others never join).
  std::unique_ptr<IncLink> link = IncLink::configure(
      {static_cast<uint16_t>(rank_), static_cast<uint16_t>(size_), pg_index, group_name_});
  store->set(gen + "config/" + std::to_string(rank_),
             bytes_of(link->error().empty() ? "ok" : link->error()));
  std::vector<std::string> keys;
  for (int q = 0; q < size_; ++q) keys.push_back(gen + "config/" + std::to_string(q));
  store->wait(keys, timeout);
  for (int q = 0; q < size_; ++q) {
    const std::string e = string_of(store->get(keys[q]));
    TORCH_CHECK(e == "ok", "epic: bad EPIC configuration on rank ", q, " of ", label, ": ", e);
  }
  if (!link->notes().empty() && (rank_ == 0 || options_.log_every_call)) {
    std::fprintf(stderr, "epic_torch: %s: %s\n", label.c_str(), link->notes().c_str());
  }

  // The join blocks until every member arrived and the manager answered (INC_JOIN_TIMEOUT_MS).
  const std::string joined = link->join();
  store->set(gen + "join/" + std::to_string(rank_), bytes_of(joined.empty() ? "ok" : joined));
  keys.clear();
  for (int q = 0; q < size_; ++q) keys.push_back(gen + "join/" + std::to_string(q));
  const auto join_wait = link->join_timeout() + std::chrono::seconds(30);
  store->wait(keys, std::min<std::chrono::milliseconds>(timeout, join_wait));
  for (int q = 0; q < size_ && join_reason_.empty(); ++q) {
    const std::string e = string_of(store->get(keys[q]));
    if (e != "ok")
      join_reason_ = "the group is not on EPIC (rank " + std::to_string(q) + ": " + e + ")";
  }
  if (join_reason_.empty()) {
    link_ = std::move(link);
    stats_->set_state("inc", "");
    if (rank_ == 0 || options_.log_every_call) {
      std::fprintf(stderr, "epic_torch: %s: offloading: %s\n", label.c_str(), describe().c_str());
    }
    return;
  }
  link->close();  // a member failed: leave the group if this rank joined it
  stats_->set_state("gloo", join_reason_);
  TORCH_CHECK(!options_.strict, "epic: EPIC_TORCH_STRICT=1 and ", label, ": ", join_reason_);
  std::fprintf(stderr, "epic_torch: %s: every collective of this group falls back to Gloo: %s\n",
               label.c_str(), join_reason_.c_str());
}

std::string ProcessGroupEpic::describe() const {
  if (!link_) return "gloo fallback: " + join_reason_;
  return "manager group " + group_name_ + ", " + link_->describe();
}

void ProcessGroupEpic::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  // link_ stays (closed) until the destructor: callers read it without the lock.
  if (link_) {
    const std::string e = link_->close();
    if (!e.empty())
      std::fprintf(stderr, "epic_torch: %s: close: %s\n", stats_->label().c_str(), e.c_str());
  }
  if (stats_) stats_->set_state("closed", join_reason_);
}

uint8_t* ProcessGroupEpic::staging(size_t bytes, int which) {
  auto& v = staging_[which];
  if (v.size() < bytes) v.resize(bytes);
  return v.data();
}

std::string ProcessGroupEpic::refuse_bytes(const at::Tensor& t) const {
  if (!link_) return join_reason_;
  if (!t.device().is_cpu())
    return "tensor on " + t.device().str() + " (EPIC ranks use host memory)";
  if (t.layout() != at::kStrided) return "sparse tensor";
  if (!t.is_contiguous()) return "non-contiguous tensor";
  return "";
}

std::string ProcessGroupEpic::refuse_reduction(const at::Tensor& t, c10d::ReduceOp op) const {
  std::string why = refuse_bytes(t);
  if (!why.empty()) return why;
  if (!epic_dtype(t.scalar_type())) {
    return std::string("dtype ") + c10::toString(t.scalar_type()) +
           " is not one EPIC reduces (int32, float32, float16, bfloat16, int8)";
  }
  if (!epic_op(op))
    return std::string("ReduceOp.") + op_name(op) + " is not one of EPIC's (SUM, MIN, MAX)";
  return "";
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::submit(c10d::OpType type,
                                                        const std::string& collective,
                                                        std::string reason, uint64_t bytes,
                                                        std::vector<at::Tensor> outputs,
                                                        Offload offload, Fallback fallback) {
  auto work = c10::make_intrusive<EpicWork>(rank_, type, std::move(outputs));
  {
    std::lock_guard<std::mutex> lock(mu_);
    TORCH_CHECK(!stopping_, "epic: ", collective, " on ", stats_->label(), " after shutdown");
    queue_.push_back(
        Task{work, collective, std::move(reason), bytes, std::move(offload), std::move(fallback)});
  }
  cv_.notify_one();
  return work;
}

void ProcessGroupEpic::worker_loop() {
  // Results are written into the user's tensors (copies of gathers included), never recorded
  // by autograd: as Gloo's worker threads do.
  at::NoGradGuard no_grad;
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      run_task(task);
    } catch (...) {
      error = std::current_exception();
    }
    task.work->complete(error);
  }
}

void ProcessGroupEpic::run_task(Task& task) {
  std::string why = task.reason;
  if (why.empty()) {
    std::string refused;
    try {
      refused = task.offload();
    } catch (const std::exception& e) {
      stats_->record(task.collective, Path::kFailed, e.what(), task.bytes);
      throw;
    }
    if (refused.empty()) {
      stats_->record(task.collective, Path::kOffloaded, "", task.bytes);
      return;
    }
    why = "libinc refused it: " + refused;
  }
  if (options_.strict) {
    stats_->record(task.collective, Path::kFailed, why, task.bytes);
    throw std::runtime_error("epic_torch: " + task.collective + " on " + stats_->label() +
                             " cannot run on EPIC and EPIC_TORCH_STRICT=1 forbids the Gloo "
                             "fallback: " +
                             why);
  }
  stats_->record(task.collective, Path::kFallback, why, task.bytes);
  task.fallback();
}

void ProcessGroupEpic::direct_to_gloo(const std::string& collective, uint64_t bytes) {
  const std::string why = collective + " is not a collective EPIC offloads";
  if (options_.strict) {
    stats_->record(collective, Path::kFailed, why, bytes);
    TORCH_CHECK(false, "epic: EPIC_TORCH_STRICT=1 forbids the Gloo fallback: ", why);
  }
  stats_->record(collective, Path::kFallback, why, bytes);
}

std::string ProcessGroupEpic::reduce_into(const at::Tensor& t, bool keep,
                                          const std::function<std::string(uint8_t*)>& call) {
  if (t.numel() == 0) return "";
  // Into a staging buffer, not in place: a large input is read until the switch acknowledges
  // it, after the results arrived.
  uint8_t* out = staging(t.nbytes(), 1);
  const std::string r = call(out);
  if (r.empty() && keep) std::memcpy(t.data_ptr(), out, t.nbytes());
  return r;
}

void ProcessGroupEpic::check_root(int64_t root, const char* what) const {
  TORCH_CHECK(root >= 0 && root < size_, "epic: ", what, ": root ", root,
              " is not a rank of this group of ", size_);
}

// --- the collectives EPIC runs ------------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  check_one(tensors, "allreduce");
  at::Tensor t = tensors[0];
  std::string why = refuse_reduction(t, opts.reduceOp);
  auto offload = [this, t, op = opts.reduceOp]() {
    return reduce_into(t, true, [&](uint8_t* out) {
      return link_->allreduce(t.data_ptr(), out, t.numel(), *epic_dtype(t.scalar_type()),
                              *epic_op(op));
    });
  };
  auto fallback = [this, tensors, opts]() mutable { gloo_wait(gloo_->allreduce(tensors, opts)); };
  return submit(c10d::OpType::ALLREDUCE, "allreduce", why, t.nbytes(), tensors, offload, fallback);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  check_one(tensors, "reduce");
  check_root(opts.rootRank, "reduce");
  at::Tensor t = tensors[0];
  std::string why = refuse_reduction(t, opts.reduceOp);
  auto offload = [this, t, opts]() {
    return reduce_into(t, opts.rootRank == rank_, [&](uint8_t* out) {
      return link_->reduce(t.data_ptr(), out, t.numel(), *epic_dtype(t.scalar_type()),
                           *epic_op(opts.reduceOp), static_cast<uint16_t>(opts.rootRank));
    });
  };
  auto fallback = [this, tensors, opts]() mutable { gloo_wait(gloo_->reduce(tensors, opts)); };
  return submit(c10d::OpType::REDUCE, "reduce", why, t.nbytes(), tensors, offload, fallback);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  check_one(tensors, "broadcast");
  check_root(opts.rootRank, "broadcast");
  at::Tensor t = tensors[0];
  // Broadcast moves bytes: every dtype is offloaded (as int8 elements).
  std::string why = refuse_bytes(t);
  auto offload = [this, t, root = opts.rootRank]() -> std::string {
    if (t.nbytes() == 0) return "";
    return link_->broadcast_bytes(t.data_ptr(), t.nbytes(), static_cast<uint16_t>(root));
  };
  auto fallback = [this, tensors, opts]() mutable { gloo_wait(gloo_->broadcast(tensors, opts)); };
  return submit(c10d::OpType::BROADCAST, "broadcast", why, t.nbytes(), tensors, offload, fallback);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::barrier(const c10d::BarrierOptions& opts) {
  auto offload = [this]() { return link_->barrier(); };
  auto fallback = [this, opts]() { gloo_wait(gloo_->barrier(opts)); };
  return submit(c10d::OpType::BARRIER, "barrier", link_ ? "" : join_reason_, 0, {}, offload,
                fallback);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  check_one(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_),
              "epic: allgather: expected one list of ", size_, " output tensors");
  at::Tensor in = inputs[0];
  std::vector<at::Tensor> flat;
  for (const auto& o : outputs[0]) {
    TORCH_CHECK(o.numel() == in.numel() && o.scalar_type() == in.scalar_type(),
                "epic: allgather: every output tensor must have the input's size and dtype");
    flat.push_back(o);
  }
  // AllGather moves bytes: every dtype is offloaded; outputs may be any layout (copied out).
  std::string why = refuse_bytes(in);
  auto offload = [this, in, flat]() -> std::string {
    const size_t nb = in.nbytes();
    if (nb == 0) return "";
    uint8_t* all = staging(nb * size_, 0);
    const std::string r = link_->allgather_bytes(in.data_ptr(), all, nb);
    if (!r.empty()) return r;
    for (int q = 0; q < size_; ++q) {
      flat[q].copy_(at::from_blob(all + nb * q, flat[q].sizes(), in.options()));
    }
    return "";
  };
  auto fallback = [this, outputs, inputs, opts]() mutable {
    gloo_wait(gloo_->allgather(outputs, inputs, opts));
  };
  return submit(c10d::OpType::ALLGATHER, "allgather", why, in.nbytes(), flat, offload, fallback);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(
      output.numel() == input.numel() * size_ && output.scalar_type() == input.scalar_type(),
      "epic: _allgather_base: the output must hold ", size_, " times the input (", input.numel(),
      " elements of ", c10::toString(input.scalar_type()), "), got ", output.numel(), " of ",
      c10::toString(output.scalar_type()));
  std::string why = refuse_bytes(input);
  if (why.empty()) why = refuse_bytes(output);
  auto offload = [this, output, input]() -> std::string {
    if (input.nbytes() == 0) return "";
    return link_->allgather_bytes(input.data_ptr(), output.data_ptr(), input.nbytes());
  };
  // Gloo has no _allgather_base (1.13): its list form into views of the output.
  auto fallback = [this, output, input, opts]() mutable {
    std::vector<std::vector<at::Tensor>> outs(1);
    at::Tensor flat = output.view(-1);
    for (int q = 0; q < size_; ++q) {
      outs[0].push_back(flat.narrow(0, q * input.numel(), input.numel()).view(input.sizes()));
    }
    std::vector<at::Tensor> ins{input};
    gloo_wait(gloo_->allgather(outs, ins, opts));
  };
  return submit(c10d::OpType::_ALLGATHER_BASE, "_allgather_base", why, input.nbytes(), {output},
                offload, fallback);
}

// Gloo (1.13) has no ReduceScatter: the fallback is its AllReduce of the whole input, of which
// this rank keeps its chunk.
namespace {
void reduce_scatter_on_gloo(c10d::ProcessGroup& gloo, int rank, at::Tensor whole, at::Tensor output,
                            c10d::ReduceOp op) {
  std::vector<at::Tensor> t{whole};
  c10d::AllreduceOptions o;
  o.reduceOp = op;
  gloo_wait(gloo.allreduce(t, o));
  output.copy_(whole.narrow(0, rank * output.numel(), output.numel()).view(output.sizes()));
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  check_one(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_),
              "epic: reduce_scatter: expected one list of ", size_, " input tensors");
  at::Tensor out = outputs[0];
  std::vector<at::Tensor> ins = inputs[0];
  for (const auto& i : ins) {
    TORCH_CHECK(i.numel() == out.numel() && i.scalar_type() == out.scalar_type(),
                "epic: reduce_scatter: every input tensor must have the output's size and dtype");
  }
  // The inputs are packed into one buffer, so only the output's form matters.
  std::string why = refuse_reduction(out, opts.reduceOp);
  auto offload = [this, out, ins, op = opts.reduceOp]() {
    const size_t nb = out.nbytes();
    uint8_t* send = staging(nb * size_, 0);
    for (int q = 0; q < size_; ++q) {
      at::from_blob(send + nb * q, ins[q].sizes(), out.options()).copy_(ins[q]);
    }
    return reduce_into(out, true, [&](uint8_t* recv) {
      return link_->reduce_scatter(send, recv, out.numel(), *epic_dtype(out.scalar_type()),
                                   *epic_op(op));
    });
  };
  auto fallback = [this, out, ins, op = opts.reduceOp]() {
    std::vector<at::Tensor> flat;
    for (const auto& i : ins) flat.push_back(i.reshape(-1));
    reduce_scatter_on_gloo(*gloo_, rank_, at::cat(flat), out, op);
  };
  return submit(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", why, out.nbytes() * size_, {out},
                offload, fallback);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(
      input.numel() == output.numel() * size_ && output.scalar_type() == input.scalar_type(),
      "epic: _reduce_scatter_base: the input must hold ", size_, " times the output (",
      output.numel(), " elements of ", c10::toString(output.scalar_type()), "), got ",
      input.numel(), " of ", c10::toString(input.scalar_type()));
  std::string why = refuse_reduction(input, opts.reduceOp);
  if (why.empty()) why = refuse_bytes(output);
  auto offload = [this, output, input, op = opts.reduceOp]() {
    return reduce_into(output, true, [&](uint8_t* out) {
      return link_->reduce_scatter(input.data_ptr(), out, output.numel(),
                                   *epic_dtype(input.scalar_type()), *epic_op(op));
    });
  };
  auto fallback = [this, output, input, op = opts.reduceOp]() {
    reduce_scatter_on_gloo(*gloo_, rank_, input.reshape(-1).clone(), output, op);
  };
  return submit(c10d::OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", why, input.nbytes(),
                {output}, offload, fallback);
}

// --- collectives Gloo runs, in the group's order ---------------------------------------------

namespace {
std::vector<at::Tensor> flatten(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<at::Tensor> all;
  for (const auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  return all;
}
uint64_t nbytes_of(const std::vector<at::Tensor>& ts) {
  uint64_t b = 0;
  for (const auto& t : ts) b += t.nbytes();
  return b;
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::gloo_only(c10d::OpType type,
                                                           const std::string& collective,
                                                           std::vector<at::Tensor> outputs,
                                                           uint64_t bytes, Fallback fallback) {
  return submit(
      type, collective, collective + " is not a collective EPIC offloads", bytes,
      std::move(outputs), [] { return std::string(); }, std::move(fallback));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  return gloo_only(
      c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors, nbytes_of(tensors),
      [this, tensors, opts]() mutable { gloo_wait(gloo_->allreduce_coalesced(tensors, opts)); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  return gloo_only(c10d::OpType::ALLGATHER_COALESCED, "allgather_coalesced", flatten(outputs),
                   nbytes_of(inputs), [this, outputs, inputs, opts]() mutable {
                     gloo_wait(gloo_->allgather_coalesced(outputs, inputs, opts));
                   });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  return gloo_only(
      c10d::OpType::GATHER, "gather", flatten(outputs), nbytes_of(inputs),
      [this, outputs, inputs, opts]() mutable { gloo_wait(gloo_->gather(outputs, inputs, opts)); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  return gloo_only(c10d::OpType::SCATTER, "scatter", outputs, nbytes_of(outputs),
                   [this, outputs, inputs, opts]() mutable {
                     gloo_wait(gloo_->scatter(outputs, inputs, opts));
                   });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const c10d::AllToAllOptions& opts) {
  return gloo_only(
      c10d::OpType::ALLTOALL_BASE, "alltoall_base", {output}, input.nbytes(),
      [this, output, input, output_split_sizes, input_split_sizes, opts]() mutable {
        gloo_wait(gloo_->alltoall_base(output, input, output_split_sizes, input_split_sizes, opts));
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& opts) {
  return gloo_only(c10d::OpType::ALLTOALL, "alltoall", outputs, nbytes_of(inputs),
                   [this, outputs, inputs, opts]() mutable {
                     gloo_wait(gloo_->alltoall(outputs, inputs, opts));
                   });
}

// Point-to-point: to Gloo directly (the worker runs collectives one at a time, which would
// deadlock two ranks whose sends and receives cross).
c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::send(std::vector<at::Tensor>& tensors,
                                                      int dst_rank, int tag) {
  direct_to_gloo("send", nbytes_of(tensors));
  return gloo_->send(tensors, dst_rank, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::recv(std::vector<at::Tensor>& tensors,
                                                      int src_rank, int tag) {
  direct_to_gloo("recv", nbytes_of(tensors));
  return gloo_->recv(tensors, src_rank, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupEpic::recvAnysource(std::vector<at::Tensor>& tensors,
                                                               int tag) {
  direct_to_gloo("recvAnysource", nbytes_of(tensors));
  return gloo_->recvAnysource(tensors, tag);
}

void ProcessGroupEpic::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  direct_to_gloo("monitored_barrier", 0);
  gloo_->monitoredBarrier(opts, wait_all_ranks);
}

}  // namespace epic::torch_backend
