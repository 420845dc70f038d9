// IncLink: the backend's one door to libinc — one process group's Communicator, configured
// from the environment (pg_config.h), joined, driven and closed — behind plain types.
//
// Why a door: libinc's headers are C++20, and torch 1.13's headers do not compile as C++20
// with clang 14; the torch-facing files (process_group_epic, module) are built as C++17 and
// see only this header, inc_link.cc is built as C++20 and sees only libinc.
// Threading: as inc::Communicator — used by one thread at a time (the group's worker, after
// the constructor's join).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace epic::torch_backend {

// The soft transport's QPN of a group: INC_QPN + kQpnStride * pg_index (pg_config.h).
inline constexpr uint32_t kQpnStride = 4;

struct PgIdentity {
  uint16_t rank = 0;
  uint16_t size = 0;
  uint32_t pg_index = 0;  // this process's count of epic process groups before this one
  std::string group;      // the manager group's name, the same on every member
};

// The element types and reductions EPIC runs (libinc's DType and ReduceOp, by another name;
// inc_link.cc maps them by position: append only).
enum class Elem : uint8_t { kInt32, kFp32, kFp16, kBf16, kInt8 };
enum class Reduction : uint8_t { kSum, kMin, kMax };

class IncLink {
 public:
  // The group's configuration from the INC_* environment; error() is "" when usable, notes()
  // names the variables set aside.
  static std::unique_ptr<IncLink> configure(const PgIdentity& id);
  ~IncLink();
  IncLink(const IncLink&) = delete;
  IncLink& operator=(const IncLink&) = delete;

  const std::string& error() const { return error_; }
  const std::string& notes() const { return notes_; }
  // Opens the transport and joins the manager group (blocking until every member joined or
  // INC_JOIN_TIMEOUT_MS): "" or why not.
  std::string join();
  bool joined() const;
  // The join's deadline (INC_JOIN_TIMEOUT_MS).
  std::chrono::milliseconds join_timeout() const;
  // Leaves the group (LeaveGroup): "" or libinc's error. Idempotent.
  std::string close();
  // "mode inc, transport soft, accumulator kulisch_fixed dtype fp32".
  std::string describe() const;

  // Each call returns "" when done, or libinc's refusal of the call (it sent nothing: the
  // caller may run it elsewhere), and throws std::runtime_error with libinc's report when the
  // collective failed (the communicator is then broken). Counts as in libinc (per rank).
  std::string allreduce(const void* send, void* recv, size_t count, Elem t, Reduction op);
  std::string reduce(const void* send, void* recv, size_t count, Elem t, Reduction op,
                     uint16_t root);
  std::string broadcast_bytes(void* buf, size_t bytes, uint16_t root);
  std::string barrier();
  std::string reduce_scatter(const void* send, void* recv, size_t recv_count, Elem t, Reduction op);
  std::string allgather_bytes(const void* send, void* recv, size_t send_bytes);

 private:
  struct State;
  IncLink();
  std::unique_ptr<State> s_;
  std::string error_;
  std::string notes_;
};

}  // namespace epic::torch_backend
