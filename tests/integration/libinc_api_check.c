/* One rank of the libinc end-to-end check, written in C against inc.h alone
 * (the C API compiles as C and links): every primitive blocking, calls split
 * into several collectives, non-blocking requests waited out of order, a
 * second communicator of another group in the same process, bad arguments.
 * Inputs are small integers whose sums are exact in any order, so every rank
 * checks its results itself. Prints "LIBINC_API rank R PASS" or the failure.
 *   libinc_api_check SECOND_GROUP_FILE     (group A from INC_* variables) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/inc/inc.h"

static int g_rank, g_ranks, g_failed;

#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "rank %d: line %d: ", g_rank, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                            \
      fprintf(stderr, "\n");                                   \
      g_failed = 1;                                            \
    }                                                          \
  } while (0)

#define OK(call)                                                                        \
  do {                                                                                  \
    int rc_ = (call);                                                                   \
    if (rc_ != INC_OK) {                                                                \
      fprintf(stderr, "rank %d: %s -> %d: %s\n", g_rank, #call, rc_, inc_last_error()); \
      exit(3);                                                                          \
    }                                                                                   \
  } while (0)

/* Rank r's element i, tag t: a small positive integer (exact in fp32 sums). */
static int32_t value(int r, size_t i, int t) {
  return (int32_t)((r + 1) * ((i + (size_t)t) % 13 + 1));
}
static int32_t sum_over_ranks(size_t i, int t) {
  return (int32_t)(((i + (size_t)t) % 13 + 1) * (g_ranks * (g_ranks + 1) / 2));
}

static void check_allreduce_int(inc_comm_t* c, size_t n, int t) {
  int32_t* in = malloc(n * 4);
  int32_t* out = malloc(n * 4);
  for (size_t i = 0; i < n; ++i) in[i] = value(g_rank, i, t);
  OK(inc_allreduce(c, in, out, n, INC_INT32, INC_SUM));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += out[i] != sum_over_ranks(i, t);
  CHECK(bad == 0, "allreduce int32 n=%zu tag %d: %zu wrong elements", n, t, bad);
  free(in);
  free(out);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: libinc_api_check SECOND_GROUP_FILE\n");
    return 2;
  }
  inc_comm_t* a = NULL;
  inc_comm_t* b = NULL;
  OK(inc_comm_create_from_env(&a));
  OK(inc_comm_create_from_file(argv[1], &b));
  g_rank = inc_comm_rank(a);
  g_ranks = inc_comm_size(a);
  CHECK(inc_comm_rank(b) == g_rank && inc_comm_size(b) == g_ranks, "the second group differs");
  const int R = g_ranks;

  /* AllReduce int32 and fp32, min and max. */
  check_allreduce_int(a, 1000, 0);
  {
    enum { N = 5000 };
    static float fin[N], fout[N];
    static int32_t iin[N], iout[N];
    for (size_t i = 0; i < N; ++i) fin[i] = (float)value(g_rank, i, 1);
    OK(inc_allreduce(a, fin, fout, N, INC_FP32, INC_SUM));
    size_t bad = 0;
    for (size_t i = 0; i < N; ++i) bad += fout[i] != (float)sum_over_ranks(i, 1);
    CHECK(bad == 0, "allreduce fp32: %zu wrong", bad);
    for (size_t i = 0; i < N; ++i) iin[i] = (int32_t)(i % 7) - g_rank * 3;
    OK(inc_allreduce(a, iin, iout, N, INC_INT32, INC_MIN));
    bad = 0;
    for (size_t i = 0; i < N; ++i) bad += iout[i] != (int32_t)(i % 7) - (R - 1) * 3;
    CHECK(bad == 0, "allreduce int32 min: %zu wrong", bad);
  }
  /* Reduce to root 1 (root 0 in a group of one), Broadcast from the last rank. */
  {
    enum { N = 3000 };
    static int32_t in[N], out[N];
    const int root = R > 1 ? 1 : 0;
    for (size_t i = 0; i < N; ++i) in[i] = value(g_rank, i, 2);
    memset(out, 0, sizeof out);
    OK(inc_reduce(a, in, out, N, INC_INT32, INC_SUM, root));
    if (g_rank == root) {
      size_t bad = 0;
      for (size_t i = 0; i < N; ++i) bad += out[i] != sum_over_ranks(i, 2);
      CHECK(bad == 0, "reduce: %zu wrong", bad);
    }
    for (size_t i = 0; i < N; ++i) out[i] = g_rank == R - 1 ? (int32_t)(i * 3 + 7) : -1;
    OK(inc_broadcast(a, out, N, INC_INT32, R - 1));
    size_t bad = 0;
    for (size_t i = 0; i < N; ++i) bad += out[i] != (int32_t)(i * 3 + 7);
    CHECK(bad == 0, "broadcast: %zu wrong", bad);
  }
  /* ReduceScatter and AllGather, small and split into several collectives (the test sets
   * INC_MAX_COLLECTIVE_BYTES=65536 for group A). */
  for (int pass = 0; pass < 2; ++pass) {
    const size_t n = pass == 0 ? 700 : 20000;
    int32_t* in = malloc((size_t)R * n * 4);
    int32_t* out = malloc((size_t)R * n * 4);
    for (size_t i = 0; i < (size_t)R * n; ++i) in[i] = value(g_rank, i, 3);
    OK(inc_reduce_scatter(a, in, out, n, INC_INT32, INC_SUM));
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += out[i] != sum_over_ranks((size_t)g_rank * n + i, 3);
    CHECK(bad == 0, "reduce_scatter n=%zu: %zu wrong", n, bad);
    for (size_t i = 0; i < n; ++i) in[i] = (int32_t)(g_rank * 100000 + (int)i);
    memset(out, 0xEE, (size_t)R * n * 4);
    OK(inc_allgather(a, in, out, n, INC_INT32));
    bad = 0;
    for (int q = 0; q < R; ++q)
      for (size_t i = 0; i < n; ++i)
        bad += out[(size_t)q * n + i] != (int32_t)(q * 100000 + (int)i);
    CHECK(bad == 0, "allgather n=%zu: %zu wrong", n, bad);
    free(in);
    free(out);
  }
  /* A split AllReduce: 400 KB through 64 KiB collectives. */
  check_allreduce_int(a, 100000, 4);
  OK(inc_barrier(a));

  /* Non-blocking: three AllReduces and a Barrier in flight, waited in reverse order. */
  {
    enum { N = 2000, K = 3 };
    static int32_t in[K][N], out[K][N];
    inc_request_t req[K + 1];
    for (int k = 0; k < K; ++k) {
      for (size_t i = 0; i < N; ++i) in[k][i] = value(g_rank, i, 10 + k);
      OK(inc_iallreduce(a, in[k], out[k], N, INC_INT32, INC_SUM, &req[k]));
    }
    OK(inc_ibarrier(a, &req[K]));
    for (int k = K; k >= 0; --k) OK(inc_wait(a, req[k]));
    int done = 0;
    CHECK(inc_test(a, req[0], &done) == INC_OK && done == 0,
          "a reported request is still complete");
    for (int k = 0; k < K; ++k) {
      size_t bad = 0;
      for (size_t i = 0; i < N; ++i) bad += out[k][i] != sum_over_ranks(i, 10 + k);
      CHECK(bad == 0, "iallreduce %d: %zu wrong", k, bad);
    }
  }
  /* The second group, interleaved with the first. */
  check_allreduce_int(b, 4096, 20);
  check_allreduce_int(a, 4096, 21);
  check_allreduce_int(b, 50000, 22);
  OK(inc_barrier(b));

  /* Bad arguments are refused with a message and do not break the communicator. */
  {
    int32_t x = 0, y = 0;
    CHECK(inc_reduce(a, &x, &y, 1, INC_INT32, INC_SUM, R) == INC_ERR_INVALID &&
              strstr(inc_last_error(), "root") != NULL,
          "reduce to root %d was accepted (%s)", R, inc_last_error());
    CHECK(inc_allreduce(a, NULL, &y, 1, INC_INT32, INC_SUM) == INC_ERR_INVALID,
          "a NULL send buffer was accepted");
    CHECK(inc_allreduce(a, &x, &y, 1, (inc_dtype_t)9, INC_SUM) == INC_ERR_INVALID,
          "dtype 9 was accepted");
    CHECK(inc_allreduce(NULL, &x, &y, 1, INC_INT32, INC_SUM) == INC_ERR_INVALID,
          "a NULL communicator was accepted");
    CHECK(inc_wait(a, 999999) == INC_ERR_INVALID, "an unknown request was accepted");
    check_allreduce_int(a, 10, 30);
  }
  char transport[16];
  snprintf(transport, sizeof transport, "%s", inc_comm_transport(a));
  inc_comm_destroy(b);
  inc_comm_destroy(a);
  if (g_failed) {
    printf("LIBINC_API rank %d FAIL\n", g_rank);
    return 1;
  }
  printf("LIBINC_API rank %d PASS transport=%s\n", g_rank, transport);
  return 0;
}
