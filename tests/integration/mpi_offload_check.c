/* mpi_offload_check: an ordinary MPI program (it knows nothing of EPIC) that checks what
 * libepic_mpi.so does when preloaded (docs/mpi.md; tests/integration/mpi_offload.py runs it).
 *
 *   mpirun -np 4 -x LD_PRELOAD=libepic_mpi.so mpi_offload_check [check|strict|nomem|exact|bench N]
 *
 * check:  each of the six collectives with MPI_INT, MPI_FLOAT, MPI_INT8_T (and unsigned sums),
 *         MPI_SUM/MIN/MAX, several sizes, MPI_IN_PLACE, every root, datatypes moved as bytes
 *         (MPI_DOUBLE, a strided vector) and sub-communicators (split, dup, freed and made
 *         again); every result is compared bit for bit with the real MPI's (PMPI_X on the same
 *         communicator). Calls EPIC cannot run (MPI_PROD, MPI_DOUBLE sums, MPI_MAX on
 *         unsigned, a user-defined op, a derived datatype, count 0) must still be right.
 *         Prints per rank "EXPECT {json}": how many calls of each kind it expects offloaded
 *         and handed to MPI, which the test compares with the library's report.
 * strict: with EPIC_MPI_STRICT=1 and MPI_ERRORS_RETURN: MPI_PROD must fail with
 *         MPI_ERR_UNSUPPORTED_OPERATION, an offloadable call must still succeed.
 * nomem:  a world MPI_Allreduce (offloaded), then on a duplicate of MPI_COMM_WORLD whose group
 *         the manager has no INC memory for (the test's tenant allows one group): calls that
 *         must be handed to MPI, results still right.
 * exact:  with INC_ACCUMULATOR=kulisch_fixed: order-dependent float sums are the exact sum
 *         rounded once, twice alike; int32 and min reductions still offloaded.
 * bench:  N MPI_Allreduce of 1024 MPI_INT and N MPI_Barrier through MPI_X and through PMPI_X;
 *         rank 0 prints the mean microseconds of each.
 * Exit status 0 when every result matched. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, REDUCE, BCAST, BARRIER, RSB, ALLGATHER, NCALLS };
static const char* kNames[NCALLS] = {
    "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Barrier", "MPI_Reduce_scatter_block",
    "MPI_Allgather"};
static long expect_offloaded[NCALLS], expect_fallback[NCALLS], expect_failed[NCALLS];
static int world_rank, failures, cases;

static void expect(int call, int offload) {
  if (offload) {
    ++expect_offloaded[call];
  } else {
    ++expect_fallback[call];
  }
}

static void compare(const char* what, const void* got, const void* want, size_t bytes) {
  ++cases;
  if (memcmp(got, want, bytes) == 0) return;
  size_t i = 0;
  while (((const unsigned char*)got)[i] == ((const unsigned char*)want)[i]) ++i;
  fprintf(stderr, "rank %d: %s: byte %zu of %zu differs (got 0x%02x, want 0x%02x)\n", world_rank,
          what, i, bytes, ((const unsigned char*)got)[i], ((const unsigned char*)want)[i]);
  ++failures;
}

static size_t type_size(MPI_Datatype t) {
  int s = 0;
  MPI_Type_size(t, &s);
  return (size_t)s;
}

/* Deterministic inputs whose sums are exact in any order (floats: quarters of small
 * integers), for rank `who`; unsigned values near 2^32 so that sums wrap. */
static void fill(MPI_Datatype t, void* buf, int n, int who, int seed) {
  for (int i = 0; i < n; ++i) {
    const int v = (who * 7 + i * 3 + seed) % 1000 - 500;
    if (t == MPI_INT) {
      ((int*)buf)[i] = v * 1000 + who;
    } else if (t == MPI_FLOAT) {
      ((float*)buf)[i] = (float)v * 0.25f;
    } else if (t == MPI_INT8_T) {
      ((int8_t*)buf)[i] = (int8_t)((who + i + seed) % 31 - 15);
    } else if (t == MPI_UNSIGNED) {
      ((unsigned*)buf)[i] = 0xF0000000u + (unsigned)(who * 0x01000000 + i);
    } else if (t == MPI_DOUBLE) {
      ((double*)buf)[i] = v * 0.5 + who;
    } else {
      ((unsigned char*)buf)[i] = (unsigned char)(v + who);
    }
  }
}

static const char* op_str(MPI_Op op) {
  return op == MPI_SUM ? "sum" : op == MPI_MIN ? "min" : op == MPI_MAX ? "max" : "other";
}

static void allreduce(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int n, int in_place, int offload) {
  const size_t bytes = (size_t)n * type_size(t) + 1;
  char *in = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
  char what[128];
  fill(t, in, n, world_rank, n);
  PMPI_Allreduce(in, want, n, t, op, comm);
  if (in_place) {
    memcpy(got, in, bytes);
    MPI_Allreduce(MPI_IN_PLACE, got, n, t, op, comm);
  } else {
    MPI_Allreduce(in, got, n, t, op, comm);
  }
  snprintf(what, sizeof what, "MPI_Allreduce %d %s%s", n, op_str(op), in_place ? " in place" : "");
  compare(what, got, want, bytes - 1);
  expect(ALLREDUCE, offload);
  free(in), free(got), free(want);
}

static void reduce(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int n, int root, int in_place,
                   int offload) {
  const size_t bytes = (size_t)n * type_size(t) + 1;
  char *in = malloc(bytes), *got = calloc(1, bytes), *want = calloc(1, bytes);
  int rank = 0;
  char what[128];
  MPI_Comm_rank(comm, &rank);
  fill(t, in, n, world_rank, n + 1);
  PMPI_Reduce(in, want, n, t, op, root, comm);
  if (in_place && rank == root) {
    memcpy(got, in, bytes);
    MPI_Reduce(MPI_IN_PLACE, got, n, t, op, root, comm);
  } else {
    MPI_Reduce(in, got, n, t, op, root, comm);
  }
  snprintf(what, sizeof what, "MPI_Reduce %d %s root %d%s", n, op_str(op), root,
           in_place ? " in place" : "");
  if (rank == root) compare(what, got, want, bytes - 1);
  expect(REDUCE, offload);
  free(in), free(got), free(want);
}

static void bcast(MPI_Comm comm, MPI_Datatype t, int n, int root) {
  const size_t bytes = (size_t)n * type_size(t) + 1;
  char *buf = calloc(1, bytes), *want = malloc(bytes);
  int rank = 0;
  char what[128];
  MPI_Comm_rank(comm, &rank);
  fill(t, want, n, root, 5);
  if (rank == root) memcpy(buf, want, bytes);
  MPI_Bcast(buf, n, t, root, comm);
  snprintf(what, sizeof what, "MPI_Bcast %d x %zu bytes root %d", n, type_size(t), root);
  compare(what, buf, want, bytes - 1);
  expect(BCAST, 1);
  free(buf), free(want);
}

static void reduce_scatter_block(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int n, int in_place,
                                 int offload) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const size_t one = (size_t)n * type_size(t);
  char *in = malloc(one * size), *got = malloc(one * size), *want = malloc(one + 1);
  char what[128];
  fill(t, in, n * size, world_rank, 9);
  PMPI_Reduce_scatter_block(in, want, n, t, op, comm);
  if (in_place) {
    memcpy(got, in, one * size);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, got, n, t, op, comm);
  } else {
    MPI_Reduce_scatter_block(in, got, n, t, op, comm);
  }
  snprintf(what, sizeof what, "MPI_Reduce_scatter_block %d %s%s", n, op_str(op),
           in_place ? " in place" : "");
  compare(what, got, want, one);
  expect(RSB, offload);
  free(in), free(got), free(want);
}

static void allgather(MPI_Comm comm, MPI_Datatype t, int n, int in_place) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const size_t one = (size_t)n * type_size(t);
  char *in = malloc(one + 1), *got = calloc(1, one * size + 1), *want = malloc(one * size + 1);
  char what[128];
  fill(t, in, n, world_rank, 11);
  PMPI_Allgather(in, n, t, want, n, t, comm);
  if (in_place) {
    memcpy(got + one * rank, in, one);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, n, t, comm);
  } else {
    MPI_Allgather(in, n, t, got, n, t, comm);
  }
  snprintf(what, sizeof what, "MPI_Allgather %d x %zu bytes%s", n, type_size(t),
           in_place ? " in place" : "");
  compare(what, got, want, one * size);
  expect(ALLGATHER, 1);
  free(in), free(got), free(want);
}

/* A strided datatype (every other int): Bcast and Allgather move it packed; the gaps between
 * its elements must stay untouched. */
static void strided(MPI_Comm comm) {
  enum { N = 300 };
  int size = 0;
  MPI_Datatype vec;
  MPI_Comm_size(comm, &size);
  MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int *buf = malloc(sizeof(int) * 2 * N), *want = malloc(sizeof(int) * 2 * N);
  for (int i = 0; i < 2 * N; ++i) {
    want[i] = (i % 2) ? -1 : i * 11 + 3; /* root's elements; gaps are -1 everywhere */
    buf[i] = (i % 2) ? -1 : (world_rank == 1 ? want[i] : 0);
  }
  MPI_Bcast(buf, 1, vec, 1, comm);
  compare("MPI_Bcast strided vector", buf, want, sizeof(int) * 2 * N);
  expect(BCAST, 1);

  /* Allgather: contiguous ints in, every rank's block strided out. */
  MPI_Datatype rvec;
  MPI_Type_vector(N, 1, 2, MPI_INT, &rvec);
  MPI_Aint lb = 0;
  MPI_Datatype rblock;
  MPI_Type_create_resized(rvec, lb, (MPI_Aint)sizeof(int) * 2 * N, &rblock);
  MPI_Type_commit(&rblock);
  int* mine = malloc(sizeof(int) * N);
  int* got = malloc(sizeof(int) * 2 * N * size);
  int* exp = malloc(sizeof(int) * 2 * N * size);
  for (int i = 0; i < N; ++i) mine[i] = world_rank * 100000 + i;
  for (int i = 0; i < 2 * N * size; ++i) got[i] = exp[i] = -7;
  PMPI_Allgather(mine, N, MPI_INT, exp, 1, rblock, comm);
  MPI_Allgather(mine, N, MPI_INT, got, 1, rblock, comm);
  compare("MPI_Allgather into a strided datatype", got, exp, sizeof(int) * 2 * N * size);
  expect(ALLGATHER, 1);
  MPI_Type_free(&rblock);
  MPI_Type_free(&rvec);
  MPI_Type_free(&vec);
  free(buf), free(want), free(mine), free(got), free(exp);
}

static void my_sum(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

/* On pairs of ints (a derived datatype): elementwise max. */
static void pair_max(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < 2 * *len; ++i) {
    if (((int*)in)[i] > ((int*)inout)[i]) ((int*)inout)[i] = ((int*)in)[i];
  }
}

/* MPI_Allreduce of `n` x `type` (`ints` ints) with the user-defined op `fn`, which computes
 * what `same_as` does on ints: handed to MPI, MPI's result. */
static void user_op(MPI_Comm comm, const char* what, MPI_User_function* fn, MPI_Datatype type,
                    int n, int ints, MPI_Op same_as) {
  int in[100], got[100], want[100];
  MPI_Op op;
  MPI_Op_create(fn, 1, &op);
  fill(MPI_INT, in, ints, world_rank, 3);
  PMPI_Allreduce(in, want, ints, MPI_INT, same_as, comm);
  MPI_Allreduce(in, got, n, type, op, comm);
  compare(what, got, want, sizeof(int) * (size_t)ints);
  expect(ALLREDUCE, 0);
  MPI_Op_free(&op);
}

/* Calls EPIC cannot run: each must be handed to MPI and still give MPI's result. */
static void fallbacks(MPI_Comm comm) {
  allreduce(comm, MPI_INT, MPI_PROD, 100, 0, 0);
  allreduce(comm, MPI_DOUBLE, MPI_SUM, 100, 0, 0);
  allreduce(comm, MPI_UNSIGNED, MPI_MAX, 100, 0, 0);
  reduce(comm, MPI_DOUBLE, MPI_MAX, 64, 0, 0, 0);
  reduce_scatter_block(comm, MPI_INT, MPI_BAND, 16, 0, 0);
  allreduce(comm, MPI_INT, MPI_SUM, 0, 0, 0); /* count 0 */

  user_op(comm, "MPI_Allreduce user-defined op", my_sum, MPI_INT, 50, 50, MPI_SUM);
  /* A derived datatype (two ints) in a reduction: MPI allows it with user-defined ops only. */
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  user_op(comm, "MPI_Allreduce derived datatype", pair_max, pair, 20, 40, MPI_MAX);
  MPI_Type_free(&pair);
}

/* Everything EPIC runs, on `comm`. */
static void offloaded(MPI_Comm comm) {
  const MPI_Datatype types[] = {MPI_INT, MPI_FLOAT, MPI_INT8_T};
  const MPI_Op ops[] = {MPI_SUM, MPI_MIN, MPI_MAX};
  const int sizes[] = {1, 1000, 70000};
  int size = 0;
  MPI_Comm_size(comm, &size);
  for (int ti = 0; ti < 3; ++ti) {
    for (int oi = 0; oi < 3; ++oi) {
      for (int si = 0; si < 3; ++si) {
        allreduce(comm, types[ti], ops[oi], sizes[si], 0, 1);
      }
      reduce(comm, types[ti], ops[oi], 777, size - 1, 0, 1);
      reduce_scatter_block(comm, types[ti], ops[oi], 333, 0, 1);
    }
  }
  allreduce(comm, MPI_UNSIGNED, MPI_SUM, 5000, 0, 1);
  allreduce(comm, MPI_FLOAT, MPI_SUM, 4096, 1, 1);
  for (int root = 0; root < size; ++root) reduce(comm, MPI_INT, MPI_SUM, 1000, root, 1, 1);
  reduce_scatter_block(comm, MPI_FLOAT, MPI_MAX, 2000, 1, 1);
  for (int root = 0; root < size; ++root) {
    bcast(comm, MPI_INT, 1000, root);
    bcast(comm, MPI_DOUBLE, 3, root);
  }
  bcast(comm, MPI_DOUBLE, 100000, 0);
  bcast(comm, MPI_BYTE, 5, size - 1);
  allgather(comm, MPI_INT, 1, 0);
  allgather(comm, MPI_DOUBLE, 2500, 0);
  allgather(comm, MPI_FLOAT, 777, 1);
  MPI_Barrier(comm);
  expect(BARRIER, 1);
  strided(comm);
}

static void subcommunicators(void) {
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int round = 0; round < 3; ++round) { /* the three groups in turn, over and over */
    allreduce(half, MPI_INT, MPI_SUM, 2000, 0, 1);
    allreduce(dup, MPI_FLOAT, MPI_MAX, 2000, 0, 1);
    allreduce(MPI_COMM_WORLD, MPI_INT, MPI_MIN, 2000, 0, 1);
    bcast(half, MPI_INT, 100, round % 2);
    reduce_scatter_block(dup, MPI_INT, MPI_SUM, 10, 0, 1);
  }
  MPI_Barrier(half);
  expect(BARRIER, 1);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  /* Made again after the free: a new group (and the freed QPNs reused). */
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2, world_rank, &half);
  allreduce(half, MPI_INT, MPI_MAX, 3000, 0, 1);
  allgather(half, MPI_INT, 10, 0);
  MPI_Comm_free(&half);
}

static void print_expect(void) {
  const long* arrays[3] = {expect_offloaded, expect_fallback, expect_failed};
  const char* keys[3] = {"offloaded", "fallback", "failed"};
  char line[2048];
  int len = snprintf(line, sizeof line, "EXPECT {\"rank\": %d", world_rank);
  for (int k = 0; k < 3; ++k) {
    len += snprintf(line + len, sizeof line - len, ", \"%s\": {", keys[k]);
    for (int c = 0; c < NCALLS; ++c) {
      len += snprintf(line + len, sizeof line - len, "%s\"%s\": %ld", c ? ", " : "", kNames[c],
                      arrays[k][c]);
    }
    len += snprintf(line + len, sizeof line - len, "}");
  }
  printf("%s}\n", line);
}

static int strict(void) {
  int in[8], got[8], want[8];
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  fill(MPI_INT, in, 8, world_rank, 1);
  const int rc = MPI_Allreduce(in, got, 8, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  ++cases;
  if (cls != MPI_ERR_UNSUPPORTED_OPERATION) {
    fprintf(stderr, "rank %d: strict MPI_PROD returned %d (class %d), expected class %d\n",
            world_rank, rc, cls, MPI_ERR_UNSUPPORTED_OPERATION);
    ++failures;
  }
  ++expect_failed[ALLREDUCE];
  PMPI_Allreduce(in, want, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ++cases;
  if (MPI_Allreduce(in, got, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: strict MPI_SUM failed\n", world_rank);
    ++failures;
  } else {
    compare("strict MPI_Allreduce sum", got, want, sizeof got);
  }
  expect(ALLREDUCE, 1);
  printf("STRICT rank %d refused_class=%d\n", world_rank, cls);
  return 0;
}

/* INC_ACCUMULATOR=kulisch_fixed: float sums whose arrival-order result depends on the order
 * (1 + three times 2^-24 gives 1 or 1 + 2^-22) must be the exact sum rounded once, on every
 * run; the exact sum is computed here from every rank's input (in double: exact for them). */
static void exact(void) {
  enum { N = 4096 };
  static float in[N], got[N], again[N], want[N], all[4 * N];
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < N; ++i) {
    in[i] = world_rank == i % size ? 1.0f + (float)(i % 8) * 0.125f : ldexpf(1.0f, -24 - i % 3);
  }
  PMPI_Allgather(in, N, MPI_FLOAT, all, N, MPI_FLOAT, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) {
    double sum = 0;
    for (int r = 0; r < size; ++r) sum += all[r * N + i];
    want[i] = (float)sum;
  }
  MPI_Allreduce(in, got, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(in, again, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  compare("kulisch_fixed MPI_Allreduce: the exact sum rounded once", got, want, sizeof got);
  compare("kulisch_fixed MPI_Allreduce: the same bits again", again, got, sizeof got);
  expect(ALLREDUCE, 1);
  expect(ALLREDUCE, 1);
  allreduce(MPI_COMM_WORLD, MPI_INT, MPI_SUM, 1000, 0, 1);
  allreduce(MPI_COMM_WORLD, MPI_FLOAT, MPI_MIN, 1000, 0, 1);
}

static void bench(int n) {
  int in[1024], out[1024];
  fill(MPI_INT, in, 1024, world_rank, 2);
  double t[4];
  for (int k = 0; k < 4; ++k) {
    PMPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      switch (k) {
        case 0:
          MPI_Allreduce(in, out, 1024, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
          break;
        case 1:
          PMPI_Allreduce(in, out, 1024, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
          break;
        case 2:
          MPI_Barrier(MPI_COMM_WORLD);
          break;
        default:
          PMPI_Barrier(MPI_COMM_WORLD);
          break;
      }
    }
    t[k] = (MPI_Wtime() - t0) / n * 1e6;
  }
  expect_offloaded[ALLREDUCE] += n;
  expect_offloaded[BARRIER] += n;
  if (world_rank == 0) {
    printf(
        "BENCH MPI_Allreduce 1024 x MPI_INT: preloaded %.1f us, PMPI %.1f us; "
        "MPI_Barrier: preloaded %.1f us, PMPI %.1f us (mean of %d)\n",
        t[0], t[1], t[2], t[3], n);
  }
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const char* mode = argc > 1 ? argv[1] : "check";
  if (strcmp(mode, "strict") == 0) {
    strict();
  } else if (strcmp(mode, "nomem") == 0) {
    MPI_Comm dup;
    allreduce(MPI_COMM_WORLD, MPI_INT, MPI_SUM, 1000, 0, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    allreduce(dup, MPI_INT, MPI_SUM, 1000, 0, 0);
    allreduce(dup, MPI_FLOAT, MPI_MAX, 3000, 1, 0);
    reduce(dup, MPI_INT, MPI_MIN, 500, 1, 0, 0);
    MPI_Comm_free(&dup);
    allreduce(MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, 1000, 0, 1);
  } else if (strcmp(mode, "exact") == 0) {
    exact();
  } else if (strcmp(mode, "bench") == 0) {
    bench(argc > 2 ? atoi(argv[2]) : 200);
  } else {
    offloaded(MPI_COMM_WORLD);
    fallbacks(MPI_COMM_WORLD);
    subcommunicators();
  }
  print_expect();
  printf("CHECK rank %d mode %s cases=%d failures=%d\n", world_rank, mode, cases, failures);
  fflush(stdout);
  MPI_Finalize();
  return failures ? 1 : 0;
}
