// ProcessGroupEpic: the "epic" torch.distributed backend (c10d::ProcessGroup, PyTorch 1.13).
//
// Each process group is one libinc Communicator, its own manager group (JoinGroup with the
// group's rank and size, a name every member agrees on through the c10d Store) and its own QP
// (pg_config.h). Collectives EPIC aggregates — allreduce, reduce, reduce_scatter
// (_reduce_scatter_base) of int32, float32, float16, bfloat16 and int8 with sum, min or max —
// and those that only move bytes — broadcast, allgather (_allgather_base) of any dtype, barrier —
// run on the switch; everything else (other dtypes and ops, non-contiguous or non-CPU tensors,
// gather/scatter/alltoall, point-to-point, or a group the manager could not place: no INC
// memory) runs on a Gloo process group created on the same store. OffloadStats counts both
// paths with the reason; EPIC_TORCH_STRICT=1 fails a call instead of falling back.
//
// Threading: the collectives are queued, in the order they were called, to one worker thread
// per process group, which owns the Communicator (libinc's contract: one thread at a time) and
// runs Gloo's fallbacks in the same order; each call returns a Work at once, completed (or
// failed, with libinc's report) by the worker. Point-to-point calls go to Gloo directly (a
// serial worker would deadlock crossing send/recv pairs). Nothing waits forever: libinc gives up
// after INC_TIMEOUT_MS without progress, the join after INC_JOIN_TIMEOUT_MS, Gloo after the
// group's timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "host/torch/inc_link.h"
#include "host/torch/offload_stats.h"

namespace epic::torch_backend {

// Process-wide switches from the environment (EPIC_TORCH_LOG, EPIC_TORCH_STRICT).
struct BackendOptions {
  bool log_every_call = false;
  bool strict = false;
  static BackendOptions from_env();
};

class ProcessGroupEpic : public c10d::ProcessGroup {
 public:
  class EpicWork;

  // Joins the manager group (blocking: every member must arrive) unless the join fails, in
  // which case every call goes to `gloo` (or, strict, the constructor throws). `torch_group`
  // is torch's name of the group ("0" for the world), `pg_index` this process's count of epic
  // groups created before (the QPN offset).
  ProcessGroupEpic(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   std::chrono::milliseconds timeout, c10::intrusive_ptr<c10d::ProcessGroup> gloo,
                   const std::string& torch_group, uint32_t pg_index, BackendOptions options);
  ~ProcessGroupEpic() override;

  const std::string getBackendName() const override { return "epic"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_split_sizes,
                                               std::vector<int64_t>& input_split_sizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst_rank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src_rank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) override;

  // What the group did (shared with Python, which keeps it after the group is gone).
  std::shared_ptr<OffloadStats> stats() const { return stats_; }
  // The manager group's name; "inc" or "gloo" (every call falls back, reason()).
  const std::string& group_name() const { return group_name_; }
  bool offloading() const { return link_ != nullptr; }
  std::string describe() const;
  // Runs what is queued, stops the worker and leaves the manager group (LeaveGroup). Later
  // calls fail. Idempotent; the destructor calls it.
  void shutdown();

 private:
  // Runs a collective on EPIC: "" when done, libinc's refusal of the call (nothing sent: the
  // collective goes to Gloo), or throws with libinc's report when the collective failed.
  using Offload = std::function<std::string()>;
  using Fallback = std::function<void()>;  // runs it on Gloo; throws on failure
  struct Task {
    c10::intrusive_ptr<EpicWork> work;
    std::string collective;
    std::string reason;  // "" = offload
    uint64_t bytes = 0;
    Offload offload;
    Fallback fallback;
  };
  // Why a collective cannot run on EPIC ("" when it can).
  std::string refuse_reduction(const at::Tensor& t, c10d::ReduceOp op) const;
  std::string refuse_bytes(const at::Tensor& t) const;
  // Queues `offload` (reason empty) or `fallback`; strict mode fails the Work instead.
  c10::intrusive_ptr<c10d::Work> submit(c10d::OpType type, const std::string& collective,
                                        std::string reason, uint64_t bytes,
                                        std::vector<at::Tensor> outputs, Offload offload,
                                        Fallback fallback);
  // A collective EPIC does not offload at all: queued in order, run on Gloo.
  c10::intrusive_ptr<c10d::Work> gloo_only(c10d::OpType type, const std::string& collective,
                                           std::vector<at::Tensor> outputs, uint64_t bytes,
                                           Fallback fallback);
  void worker_loop();
  void run_task(Task& task);
  // A point-to-point call or monitored barrier, handed to Gloo at once (counted, strict fails).
  void direct_to_gloo(const std::string& collective, uint64_t bytes);
  void join(const c10::intrusive_ptr<c10d::Store>& store, const std::string& torch_group,
            uint32_t pg_index, std::chrono::milliseconds timeout);
  uint8_t* staging(size_t bytes, int which);
  // Runs `call` (an IncLink call) into a staging buffer and copies the result into `t` when
  // `keep`: "" or the refusal, as Offload.
  std::string reduce_into(const at::Tensor& t, bool keep,
                          const std::function<std::string(uint8_t*)>& call);
  void check_root(int64_t root, const char* what) const;

  const BackendOptions options_;
  c10::intrusive_ptr<c10d::ProcessGroup> gloo_;
  // Null: every call goes to Gloo. Set by the constructor only (closed by shutdown()), so
  // callers may test it without the lock; only the worker uses it.
  std::unique_ptr<IncLink> link_;
  std::string group_name_;
  std::string join_reason_;  // why link_ is null
  std::shared_ptr<OffloadStats> stats_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread worker_;
  std::vector<uint8_t> staging_[2];  // the worker's
};

}  // namespace epic::torch_backend
