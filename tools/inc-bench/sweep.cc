#include "tools/inc-bench/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "host/collective/expected.h"
#include "host/collective/inputs.h"
#include "host/collective/layout.h"

namespace epic::tools::bench {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::max(1.0, rank)) - 1);
  return v[i];
}

namespace {

inc::Status call(inc::Communicator& comm, const vocab::CollectiveDescriptor& d,
                 std::vector<uint8_t>& send, std::vector<uint8_t>& recv) {
  switch (d.type) {
    case vocab::CollectiveType::kAllReduce:
      return comm.allreduce(send.data(), recv.data(), d.count, d.dtype, d.op);
    case vocab::CollectiveType::kReduce:
      return comm.reduce(send.data(), recv.data(), d.count, d.dtype, d.op, d.root);
    case vocab::CollectiveType::kBroadcast:
      // In place: the root's buffer holds its input; the others' are overwritten.
      if (comm.rank() == d.root) std::memcpy(recv.data(), send.data(), recv.size());
      return comm.broadcast(recv.data(), d.count, d.dtype, d.root);
    case vocab::CollectiveType::kBarrier:
      return comm.barrier();
    case vocab::CollectiveType::kReduceScatter:
      return comm.reduce_scatter(send.data(), recv.data(), d.count, d.dtype, d.op);
    case vocab::CollectiveType::kAllGather:
      return comm.allgather(send.data(), recv.data(), d.count, d.dtype);
  }
  return {inc::Code::kInvalidArgument, "unknown collective"};
}

}  // namespace

CaseResult run_case(inc::Communicator& comm, const Case& c, uint64_t case_index,
                    const SweepOptions& o) {
  CaseResult r;
  r.c = c;
  const vocab::CollectiveDescriptor& d = c.desc;
  const uint16_t R = comm.size();
  const uint16_t me = comm.rank();
  std::vector<uint8_t> send = host::exact_input(d, R, o.seed, case_index, me);
  std::vector<uint8_t> want;
  if (o.verify) {
    want = host::expected_result(d, me, host::exact_inputs(d, R, o.seed, case_index), o.arith);
  }
  // Broadcast works in place on the result buffer, which must hold count elements on the root too.
  std::vector<uint8_t> recv(std::max(
      host::recv_bytes(d, me, R), d.type == vocab::CollectiveType::kBroadcast ? send.size() : 0));
  r.verified = o.verify;
  for (uint32_t i = 0; i < o.warmup + o.iters; ++i) {
    std::fill(recv.begin(), recv.end(), uint8_t{0xEE});
    const auto t0 = Clock::now();
    const inc::Status s = call(comm, d, send, recv);
    const auto t1 = Clock::now();
    if (!s.ok()) {
      r.error = s.message;
      return r;
    }
    if (o.verify && host::first_difference({recv.data(), want.size()}, want)) ++r.wrong;
    if (i >= o.warmup) {
      r.latency_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  r.iters = o.iters;
  return r;
}

}  // namespace epic::tools::bench
