// The C API (inc.h) over epic::inc::Communicator.
#include <memory>
#include <string>

#include "host/inc/communicator.h"
#include "host/inc/inc.h"

struct inc_comm {
  std::unique_ptr<epic::inc::Communicator> comm;
};

namespace {

using epic::inc::Code;
using epic::inc::Status;

thread_local std::string g_last_error;

int fail(int code, std::string message) {
  g_last_error = std::move(message);
  return code;
}

int code_of(Code c) {
  switch (c) {
    case Code::kOk:
      return INC_OK;
    case Code::kInvalidArgument:
      return INC_ERR_INVALID;
    case Code::kTransport:
      return INC_ERR_TRANSPORT;
    case Code::kTimeout:
      return INC_ERR_TIMEOUT;
    case Code::kBroken:
      return INC_ERR_BROKEN;
  }
  return INC_ERR_INVALID;
}

int report(const Status& s) {
  if (s.ok()) return INC_OK;
  return fail(code_of(s.code), s.message);
}

bool valid_dtype(int t) { return t >= INC_INT32 && t <= INC_FP8_E5M2; }
static_assert(INC_FP8_E5M2 + 1 == epic::vocab::kNumDTypes, "inc_dtype_t mirrors vocab::DType");
bool valid_op(int op) { return op >= INC_SUM && op <= INC_MAX; }

int create(const epic::inc::ConfigResult& cfg, inc_comm_t** out) {
  if (out == nullptr) return fail(INC_ERR_INVALID, "inc_comm_create: comm is NULL");
  *out = nullptr;
  if (!cfg.ok()) return fail(INC_ERR_INVALID, cfg.error);
  auto c = epic::inc::Communicator::create(cfg.config);
  if (!c.ok()) return fail(INC_ERR_TRANSPORT, c.error);
  *out = new inc_comm{std::move(c.value)};
  return INC_OK;
}

// Checks the handle and the enums shared by most calls.
int check(const inc_comm_t* c, int t = INC_INT32, int op = INC_SUM) {
  if (c == nullptr || !c->comm) return fail(INC_ERR_INVALID, "communicator is NULL");
  if (!valid_dtype(t)) return fail(INC_ERR_INVALID, "unknown inc_dtype_t " + std::to_string(t));
  if (!valid_op(op)) return fail(INC_ERR_INVALID, "unknown inc_op_t " + std::to_string(op));
  return INC_OK;
}

int check_root(const inc_comm_t* c, int root) {
  if (root < 0 || root >= c->comm->size()) {
    return fail(INC_ERR_INVALID, "root " + std::to_string(root) +
                                     " is not a rank of this group of " +
                                     std::to_string(c->comm->size()));
  }
  return INC_OK;
}

epic::inc::DType dt(inc_dtype_t t) { return static_cast<epic::inc::DType>(t); }
epic::inc::ReduceOp rop(inc_op_t op) { return static_cast<epic::inc::ReduceOp>(op); }

int posted(const inc_comm_t* c, epic::inc::Request r, inc_request_t* req) {
  if (r.id == 0) return report(c->comm->last_error());
  *req = r.id;
  return INC_OK;
}

}  // namespace

extern "C" {

int inc_comm_create_from_env(inc_comm_t** comm) {
  return create(epic::inc::config_from_env(), comm);
}

int inc_comm_create_from_file(const char* path, inc_comm_t** comm) {
  if (path == nullptr) return fail(INC_ERR_INVALID, "inc_comm_create_from_file: path is NULL");
  return create(epic::inc::config_from_file(path, /*env_overrides=*/false), comm);
}

void inc_comm_destroy(inc_comm_t* comm) { delete comm; }

int inc_comm_rank(const inc_comm_t* c) { return check(c) == INC_OK ? c->comm->rank() : -1; }
int inc_comm_size(const inc_comm_t* c) { return check(c) == INC_OK ? c->comm->size() : -1; }
const char* inc_comm_transport(const inc_comm_t* c) {
  return check(c) == INC_OK ? c->comm->transport().data() : "";
}
const char* inc_comm_mode(const inc_comm_t* c) {
  return check(c) == INC_OK ? c->comm->mode().data() : "";
}
int inc_comm_host_fallback(const inc_comm_t* c) {
  return check(c) == INC_OK && c->comm->host_fallback() ? 1 : 0;
}

int inc_comm_accumulator(const inc_comm_t* c) {
  if (check(c) != INC_OK) return -1;
  return c->comm->arith().profile == epic::vocab::AccumProfile::kKulischFixed ? INC_KULISCH_FIXED
                                                                              : INC_FP32_ARRIVAL;
}

int inc_comm_group_dtype(const inc_comm_t* c) {
  if (check(c) != INC_OK) return -1;
  const auto& t = c->comm->arith().dtype;
  return t ? static_cast<int>(*t) : -1;
}

int inc_allreduce(inc_comm_t* c, const void* s, void* r, size_t n, inc_dtype_t t, inc_op_t op) {
  if (int e = check(c, t, op)) return e;
  return report(c->comm->allreduce(s, r, n, dt(t), rop(op)));
}

int inc_reduce(inc_comm_t* c, const void* s, void* r, size_t n, inc_dtype_t t, inc_op_t op,
               int root) {
  if (int e = check(c, t, op)) return e;
  if (int e = check_root(c, root)) return e;
  return report(c->comm->reduce(s, r, n, dt(t), rop(op), static_cast<uint16_t>(root)));
}

int inc_broadcast(inc_comm_t* c, void* b, size_t n, inc_dtype_t t, int root) {
  if (int e = check(c, t)) return e;
  if (int e = check_root(c, root)) return e;
  return report(c->comm->broadcast(b, n, dt(t), static_cast<uint16_t>(root)));
}

int inc_barrier(inc_comm_t* c) {
  if (int e = check(c)) return e;
  return report(c->comm->barrier());
}

int inc_reduce_scatter(inc_comm_t* c, const void* s, void* r, size_t n, inc_dtype_t t,
                       inc_op_t op) {
  if (int e = check(c, t, op)) return e;
  return report(c->comm->reduce_scatter(s, r, n, dt(t), rop(op)));
}

int inc_allgather(inc_comm_t* c, const void* s, void* r, size_t n, inc_dtype_t t) {
  if (int e = check(c, t)) return e;
  return report(c->comm->allgather(s, r, n, dt(t)));
}

int inc_iallreduce(inc_comm_t* c, const void* s, void* r, size_t n, inc_dtype_t t, inc_op_t op,
                   inc_request_t* req) {
  if (int e = check(c, t, op)) return e;
  if (req == nullptr) return fail(INC_ERR_INVALID, "inc_iallreduce: req is NULL");
  return posted(c, c->comm->iallreduce(s, r, n, dt(t), rop(op)), req);
}

int inc_ibarrier(inc_comm_t* c, inc_request_t* req) {
  if (int e = check(c)) return e;
  if (req == nullptr) return fail(INC_ERR_INVALID, "inc_ibarrier: req is NULL");
  return posted(c, c->comm->ibarrier(), req);
}

int inc_ibroadcast(inc_comm_t* c, void* b, size_t n, inc_dtype_t t, int root, inc_request_t* req) {
  if (int e = check(c, t)) return e;
  if (int e = check_root(c, root)) return e;
  if (req == nullptr) return fail(INC_ERR_INVALID, "inc_ibroadcast: req is NULL");
  return posted(c, c->comm->ibroadcast(b, n, dt(t), static_cast<uint16_t>(root)), req);
}

int inc_test(inc_comm_t* c, inc_request_t req, int* done) {
  if (int e = check(c)) return e;
  if (done == nullptr) return fail(INC_ERR_INVALID, "inc_test: done is NULL");
  *done = c->comm->test(epic::inc::Request{req}) ? 1 : 0;
  return INC_OK;
}

int inc_wait(inc_comm_t* c, inc_request_t req) {
  if (int e = check(c)) return e;
  return report(c->comm->wait(epic::inc::Request{req}));
}

const char* inc_last_error(void) { return g_last_error.c_str(); }

}  // extern "C"
