/* libinc's C API: EPIC in-network collectives for integrations that cannot
 * use C++ (Python ctypes, Fortran, other runtimes). A thin layer over
 * epic::inc::Communicator (communicator.h); the same semantics, buffers and
 * errors. Every function returns INC_OK (0) or an inc_status code; the
 * message of the last failure on this thread is inc_last_error().
 *
 *   inc_comm_t* comm;
 *   if (inc_comm_create_from_env(&comm) != INC_OK) fprintf(stderr, "%s\n", inc_last_error());
 *   inc_allreduce(comm, in, out, n, INC_FP32, INC_SUM);
 *   inc_comm_destroy(comm);
 *
 * Thread-safety: a communicator is used by one thread at a time; distinct
 * communicators may be used by distinct threads. */
#ifndef EPIC_INC_H
#define EPIC_INC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct inc_comm inc_comm_t;
typedef uint64_t inc_request_t; /* 0 is never a valid request */

/* The *_INT_ members give the enums int's range: any int a caller passes is a
 * value of the type, refused with INC_ERR_INVALID unless it is listed. */
typedef enum {
  INC_INT32 = 0,
  INC_FP32 = 1,
  INC_FP16 = 2,
  INC_BF16 = 3,
  INC_INT8 = 4,
  INC_FP8_E4M3 = 5, /* OCP FP8 E4M3FN */
  INC_FP8_E5M2 = 6, /* OCP FP8 E5M2 */
  INC_DTYPE_INT_ = 0x7fffffff
} inc_dtype_t;
typedef enum { INC_SUM = 0, INC_MIN = 1, INC_MAX = 2, INC_OP_INT_ = 0x7fffffff } inc_op_t;
/* A group's accumulator profile (docs/arithmetic.md), chosen when the group is created
 * (INC_ACCUMULATOR): arrival-order fp32 float sums, or exact ones rounded once. */
typedef enum {
  INC_FP32_ARRIVAL = 0,
  INC_KULISCH_FIXED = 1,
  INC_ACCUM_INT_ = 0x7fffffff
} inc_accumulator_t;
typedef enum {
  INC_OK = 0,
  INC_ERR_INVALID = 1,   /* bad argument or configuration */
  INC_ERR_TRANSPORT = 2, /* the NIC / interface / QP failed */
  INC_ERR_TIMEOUT = 3,   /* no progress within the timeout; the message says what is missing */
  INC_ERR_BROKEN = 4     /* an earlier failure broke the communicator */
} inc_status;

/* Peer parameters from INC_* environment variables, or from a file of the
 * same KEY=VALUE lines (the file alone: the environment is not consulted, so
 * one process can hold communicators of several groups). docs/libinc.md
 * lists the keys. */
int inc_comm_create_from_env(inc_comm_t** comm);
int inc_comm_create_from_file(const char* path, inc_comm_t** comm);
/* Waits for outstanding acknowledgements (bounded), then frees. NULL is ignored. */
void inc_comm_destroy(inc_comm_t* comm);

int inc_comm_rank(const inc_comm_t* comm);
int inc_comm_size(const inc_comm_t* comm);
const char* inc_comm_transport(const inc_comm_t* comm); /* "verbs" or "soft" */
/* "inc" (the switch reduces) or "host" (no INC memory: host collectives, see
 * INC_HOST_FALLBACK in docs/libinc.md); inc_comm_host_fallback() is 1 in host mode. */
const char* inc_comm_mode(const inc_comm_t* comm);
int inc_comm_host_fallback(const inc_comm_t* comm);
/* The communicator's arithmetic (INC_ACCUMULATOR, INC_DTYPE): its inc_accumulator_t, and the
 * inc_dtype_t its group's switch memory is sized for (-1: none named). -1 for a NULL comm. */
int inc_comm_accumulator(const inc_comm_t* comm);
int inc_comm_group_dtype(const inc_comm_t* comm);

int inc_allreduce(inc_comm_t* c, const void* send, void* recv, size_t count, inc_dtype_t t,
                  inc_op_t op);
int inc_reduce(inc_comm_t* c, const void* send, void* recv, size_t count, inc_dtype_t t,
               inc_op_t op, int root);
int inc_broadcast(inc_comm_t* c, void* buf, size_t count, inc_dtype_t t, int root);
int inc_barrier(inc_comm_t* c);
int inc_reduce_scatter(inc_comm_t* c, const void* send, void* recv, size_t recv_count,
                       inc_dtype_t t, inc_op_t op);
int inc_allgather(inc_comm_t* c, const void* send, void* recv, size_t send_count, inc_dtype_t t);

int inc_iallreduce(inc_comm_t* c, const void* send, void* recv, size_t count, inc_dtype_t t,
                   inc_op_t op, inc_request_t* req);
int inc_ibarrier(inc_comm_t* c, inc_request_t* req);
int inc_ibroadcast(inc_comm_t* c, void* buf, size_t count, inc_dtype_t t, int root,
                   inc_request_t* req);
/* *done = 1 once complete (then inc_wait returns its status at once). */
int inc_test(inc_comm_t* c, inc_request_t req, int* done);
int inc_wait(inc_comm_t* c, inc_request_t req);

/* The message of this thread's last failure ("" if none). Valid until the next call. */
const char* inc_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* EPIC_INC_H */
