// inc::Communicator — libinc's public C++ API: the collectives of one EPIC
// group, run by the switch (Mode-II), over user buffers.
//
//   auto comm = epic::inc::Communicator::create(epic::inc::config_from_env().config);
//   comm.value->allreduce(send, recv, n, DType::kFp32, ReduceOp::kSum);
//
// Buffer contract (MPI's): see host/collective/layout.h; `count` is the
// element count per rank as in MPI (ReduceScatter: the elements each rank
// receives; AllGather: the elements each rank contributes).
//
// Blocking calls return when this rank's result is in its buffer and its send
// buffer is free again (inputs up to CommConfig::copy_send_bytes are copied, so
// small calls need not wait for the switch's acknowledgement of the upload). Non-blocking calls
// (i*) return a Request at once; the buffers belong to the library until test() or wait() reports
// the request complete. Requests complete in the order they were posted; progress happens inside
// the library's calls (no background thread), as in MPI.
//
// Calls larger than CommConfig::max_collective_bytes are split into several
// collectives. Every failure is reported with what was waited for: the rank,
// the collective, the direction (uplink rank->switch, downlink switch->rank)
// and the PSNs of the QP. A timeout or transport failure breaks the
// communicator: later calls fail with the same report (a half-finished
// collective cannot be resumed without risking a wrong result).
//
// Several communicators may live in one process (one QP each); each is used by
// one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/collective/split_call.h"
#include "host/inc/comm_config.h"
#include "host/inc/manager_join.h"
#include "proto/vocab/collective.h"
#include "proto/vocab/dtype.h"

namespace epic::host {
class CollectiveRunner;
class Transport;
}  // namespace epic::host
namespace epic::host::fallback {
class HostCollectives;
}  // namespace epic::host::fallback

namespace epic::inc {

using vocab::DType;
using vocab::ReduceOp;

enum class Code : uint8_t { kOk, kInvalidArgument, kTransport, kTimeout, kBroken };
std::string_view to_string(Code c);

struct Status {
  Code code = Code::kOk;
  std::string message;
  bool ok() const { return code == Code::kOk; }
};

// A non-blocking call's handle; 0 is never a valid request.
struct Request {
  uint64_t id = 0;
};

class Communicator {
 public:
  // Opens the transport (verbs, soft or auto) and connects to the switch — with the static
  // peer parameters, or those inc-manager answers (CommConfig::manager; communicator_join.cc).
  // When the manager has no INC memory for the group and the rank accepts it
  // (INC_HOST_FALLBACK), the communicator runs host collectives instead (mode() "host"):
  // every call, blocking or not, then runs to completion inside the call (an i* call returns
  // a completed Request); one line on stderr says so.
  struct Created;
  static Created create(const CommConfig& config);
  ~Communicator();  // close()s
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  uint16_t rank() const { return config_.rank; }
  uint16_t size() const { return config_.ranks; }
  // "verbs" or "soft": what the rank actually uses ("auto" resolved).
  std::string_view transport() const;
  // True when the group fell back to host collectives (no INC memory).
  bool host_fallback() const { return host_ != nullptr; }
  // The group's arithmetic (INC_ACCUMULATOR, INC_DTYPE; docs/arithmetic.md).
  const vocab::GroupArith& arith() const { return config_.arith; }
  // "inc" (the switch reduces) or "host" (host collectives, host_fallback()).
  std::string_view mode() const { return host_ ? "host" : "inc"; }

  Status allreduce(const void* send, void* recv, size_t count, DType t, ReduceOp op);
  Status reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, uint16_t root);
  // In place: the root's `buf` is sent, every other rank's is overwritten.
  Status broadcast(void* buf, size_t count, DType t, uint16_t root);
  Status barrier();
  // send: ranks x recv_count elements; recv: recv_count (this rank's chunk, reduced).
  Status reduce_scatter(const void* send, void* recv, size_t recv_count, DType t, ReduceOp op);
  // send: send_count elements; recv: ranks x send_count (rank q's at q * send_count).
  Status allgather(const void* send, void* recv, size_t send_count, DType t);

  // Non-blocking forms. An invalid call returns Request{0} and last_error().
  Request iallreduce(const void* send, void* recv, size_t count, DType t, ReduceOp op);
  Request ireduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, uint16_t root);
  Request ibroadcast(void* buf, size_t count, DType t, uint16_t root);
  Request ibarrier();
  Request ireduce_scatter(const void* send, void* recv, size_t recv_count, DType t, ReduceOp op);
  Request iallgather(const void* send, void* recv, size_t send_count, DType t);

  // Progresses; true once `r` is complete (then wait(r) returns its status at once).
  bool test(Request r);
  // Blocks until `r` is complete; its status. A request is reported once.
  Status wait(Request r);
  // Status of the last call that failed to post, or of the broken communicator.
  const Status& last_error() const { return last_error_; }

  // Waits for this rank's uploads to be acknowledged, then keeps acknowledging
  // the switch's retransmitted results for CommConfig::linger. Idempotent.
  Status close();

  // One-line state for operators: rank, collectives done, what is waited for, QP.
  std::string describe() const;

 private:
  struct Op {
    uint64_t id = 0;
    std::string what;  // "allreduce(fp32 sum, 1048576 elements)"
    // The call's collectives (split_call.h); its send_staging also holds the copy of a small
    // call's input.
    host::SplitCall split;
    size_t started = 0;       // pieces handed to the runner
    uint64_t last_index = 0;  // runner index of the last piece started
    bool user_send = false;   // pieces read the caller's send buffer
  };

  explicit Communicator(const CommConfig& config);
  // communicator_join.cc: the join through inc-manager ("" or the error) and host mode.
  std::string join_manager();
  std::string start_host(const std::string& kind, const JoinAnswer& answer,
                         std::unique_ptr<host::fallback::HostCollectives> ring);
  Request post_host(vocab::CollectiveType type, DType t, ReduceOp op, uint16_t root,
                    const void* send, void* recv, size_t count);
  void leave_manager();
  Request post(vocab::CollectiveType type, DType t, ReduceOp op, uint16_t root, const void* send,
               void* recv, size_t count);
  Status invalid(const std::string& why);
  void progress();
  bool complete(uint64_t id) const;
  void break_with(Code code, const std::string& why);
  Status drive(uint64_t id);

  CommConfig config_;
  std::unique_ptr<host::Transport> transport_;
  std::unique_ptr<host::CollectiveRunner> runner_;
  std::unique_ptr<ManagerJoin> manager_;                   // joined through inc-manager
  std::unique_ptr<host::fallback::HostCollectives> host_;  // host mode
  std::string host_kind_;                                  // host mode: "soft" | "verbs"
  std::deque<Op> ops_;  // posted, not complete; front is the oldest
  // Input copies of completed requests whose uploads are not yet acknowledged (the QP may
  // re-read them): (runner index of the last piece, the copy).
  std::deque<std::pair<uint64_t, std::vector<uint8_t>>> retired_inputs_;
  std::map<uint64_t, Status> finished_;
  uint64_t next_id_ = 1;
  uint64_t progress_epoch_ = 0;  // bumps whenever a piece or request finishes
  uint64_t pieces_done_ = 0;     // collectives the runner finished, as last seen
  Status broken_;
  Status last_error_;
  bool closed_ = false;
};

struct Communicator::Created {
  std::unique_ptr<Communicator> value;
  std::string error;
  bool ok() const { return error.empty(); }
};

}  // namespace epic::inc
