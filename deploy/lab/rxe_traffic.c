// rxe_traffic.c - deterministic RC verbs traffic for the EPIC Soft-RoCE lab.
//
// Build (host, Debian 12):  gcc -O2 -Wall -Wextra -o rxe_traffic rxe_traffic.c -libverbs
// Run (guests):             server: rxe_traffic [options]
//                           client: rxe_traffic [options] SERVER_ADDRESS
//
// Both ends create one RC QP (path MTU 1024) on one device, exchange QPN, PSN, GID, rkey and
// buffer address over TCP (like ibv_rc_pingpong), then run these phases, each fenced by a TCP
// barrier so the capture is ordered and every receive is posted before its message arrives:
//
//   1 SEND            client -> server, sizes 0 1 100 1024 2048 3000   (ONLY, FIRST/MIDDLE/LAST)
//   2 SEND_WITH_IMM   client -> server, sizes 0 100 3000               (ONLY/LAST with immediate)
//   3 RDMA_WRITE      client -> server memory, sizes 0 1 100 1024 2048 3000
//   4 WRITE_WITH_IMM  client -> server memory, sizes 0 100 3000; the server consumes a receive
//                     per message and checks the immediate and byte count
//   5 RDMA_READ       client <- server memory, sizes 1 100 1024 3000   (READ RESPONSE ONLY and
//                     FIRST/MIDDLE/LAST)
//   6 SEND (reverse)  server -> client, sizes 64 2000
//   7 WRITE burst     client -> server memory, 16 back-to-back RDMA WRITEs of 2500 bytes
//                     (FIRST/MIDDLE/LAST each, several messages in flight)
//
// Every payload is a deterministic pattern of (phase, message); the receiving side checks every
// byte and that the 64 bytes after the message were not touched.  Both ends print one line
//   RXE_TRAFFIC PASS role=<role> ...   or   RXE_TRAFFIC FAIL role=<role> failures=<n> ...
// and exit 0 only when both ends passed.  With the default PSNs the client's 24-bit send PSN
// wraps (0xffffff -> 0x000000) during phase 3.
//
// Options:
//   -d DEV    RDMA device (default: the first one)      -i PORT   device port (default 1)
//   -g IDX    GID index (default 1: the IPv4-mapped RoCEv2 GID of rxe)
//   -p PORT   TCP port of the out-of-band exchange (default 18900)
//   -P PSN    this end's first send PSN (default client 0xfffff0, server 0x123456)
//   -t SEC    bound on every wait (TCP connect/accept/read, completions) (default 60)
//   -x N      create N unused QPs before the real one, so the ends' QPNs differ
//             (default client 0, server 2)
//   -v        print each completion
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SLOT 4096u
#define NSLOTS 96u
#define BUF_SIZE (SLOT * NSLOTS)
#define GUARD 64u
#define GUARD_BYTE 0xEEu
// buffer regions (slot numbers)
#define R_SRC 0u     // sources of SEND / WRITE
#define R_RECV 16u   // receive buffers
#define R_WDST 32u   // RDMA WRITE targets (server)
#define R_READ 48u   // RDMA READ source (server) / destination (client)
#define R_BURST 64u  // burst RDMA WRITE targets (server)

static const char* role = "?";
static int verbose;
static int timeout_s = 60;
static int failures;

static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rxe_traffic[%s]: FATAL: ", role);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  printf("RXE_TRAFFIC FAIL role=%s fatal error\n", role);
  fflush(stdout);
  exit(1);
}

static void fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("rxe_traffic[%s]: FAIL: ", role);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  failures++;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// ---------------------------------------------------------------------------------------------
// payload pattern

static uint8_t pat_byte(unsigned seed, size_t i) {
  return (uint8_t)(((i * 131u) ^ (i >> 8)) + seed * 37u + 0x5Au);
}

static void pat_fill(uint8_t* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = pat_byte(seed, i);
}

// checks n pattern bytes, then that the GUARD bytes after them still hold GUARD_BYTE
static int pat_check(const uint8_t* p, size_t n, unsigned seed, const char* what) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] != pat_byte(seed, i)) {
      fail("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, p[i], pat_byte(seed, i));
      return 0;
    }
  }
  for (size_t i = n; i < n + GUARD; i++) {
    if (p[i] != GUARD_BYTE) {
      fail("%s: byte %zu after the %zu-byte message was overwritten (0x%02x)", what, i, n, p[i]);
      return 0;
    }
  }
  return 1;
}

// ---------------------------------------------------------------------------------------------
// TCP out-of-band channel (every wait bounded by timeout_s)

static void wait_fd(int fd, short ev, const char* what) {
  struct pollfd pfd = {.fd = fd, .events = ev};
  int r = poll(&pfd, 1, timeout_s * 1000);
  if (r < 0) die("poll (%s): %s", what, strerror(errno));
  if (r == 0) die("timed out after %d s waiting for %s", timeout_s, what);
}

static void tcp_send_all(int fd, const void* buf, size_t n) {
  const char* p = buf;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("TCP send: %s", w < 0 ? strerror(errno) : "closed");
    p += w;
    n -= (size_t)w;
  }
}

static void tcp_recv_all(int fd, void* buf, size_t n, const char* what) {
  char* p = buf;
  while (n > 0) {
    wait_fd(fd, POLLIN, what);
    ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("TCP recv (%s): %s", what, strerror(errno));
    if (r == 0) die("peer closed the TCP connection while waiting for %s", what);
    p += r;
    n -= (size_t)r;
  }
}

#define MSG_LEN 128

// barrier: both ends send a tag and expect the same tag back
static void sync_peer(int fd, const char* tag) {
  char out[MSG_LEN] = {0}, in[MSG_LEN];
  snprintf(out, sizeof out, "SYNC %s", tag);
  tcp_send_all(fd, out, sizeof out);
  tcp_recv_all(fd, in, sizeof in, tag);
  in[MSG_LEN - 1] = 0;
  if (strcmp(in, out) != 0) die("out of step: expected '%s', peer sent '%s'", out, in);
}

static int tcp_server(const char* port) {
  int fd = socket(AF_INET6, SOCK_STREAM, 0), one = 1, zero = 0;
  struct sockaddr_storage ss;
  socklen_t sl;
  memset(&ss, 0, sizeof ss);
  if (fd >= 0) {  // dual stack: IPv4 clients arrive as ::ffff:a.b.c.d
    struct sockaddr_in6* a = (struct sockaddr_in6*)&ss;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    a->sin6_port = htons((uint16_t)atoi(port));
    sl = sizeof *a;
  } else {
    struct sockaddr_in* a = (struct sockaddr_in*)&ss;
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons((uint16_t)atoi(port));
    sl = sizeof *a;
  }
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr*)&ss, sl) < 0) die("bind TCP port %s: %s", port, strerror(errno));
  if (listen(fd, 1) < 0) die("listen: %s", strerror(errno));
  printf("rxe_traffic[%s]: waiting for the client on TCP port %s\n", role, port);
  fflush(stdout);
  wait_fd(fd, POLLIN, "the client to connect");
  int c = accept(fd, NULL, NULL);
  if (c < 0) die("accept: %s", strerror(errno));
  close(fd);
  return c;
}

static int tcp_client(const char* host, const char* port) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
  int r = getaddrinfo(host, port, &hints, &res);
  if (r != 0) die("getaddrinfo %s: %s", host, gai_strerror(r));
  double deadline = now_s() + timeout_s;
  int tries = 0;
  for (;;) {
    for (struct addrinfo* ai = res; ai; ai = ai->ai_next) {
      int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
      if (fd < 0) continue;
      tries++;
      if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        freeaddrinfo(res);
        printf("rxe_traffic[%s]: connected to %s:%s after %d attempt(s)\n", role, host, port,
               tries);
        return fd;
      }
      close(fd);
    }
    if (now_s() > deadline) die("cannot connect to %s:%s within %d s", host, port, timeout_s);
    usleep(200 * 1000);  // the server may not listen yet
  }
}

// ---------------------------------------------------------------------------------------------
// verbs

struct dest {
  uint32_t qpn, psn, rkey;
  uint64_t addr;
  union ibv_gid gid;
};

struct ctx {
  struct ibv_context* dev;
  struct ibv_pd* pd;
  struct ibv_mr* mr;
  struct ibv_cq *scq, *rcq;
  struct ibv_qp* qp;
  struct ibv_qp* spare[8];
  int spare_qps;
  uint8_t* buf;
  int port, gidx;
};

static void gid_str(const union ibv_gid* g, char* out, size_t n) {
  if (!inet_ntop(AF_INET6, g->raw, out, (socklen_t)n)) snprintf(out, n, "?");
}

static void exchange(int fd, const struct dest* me, struct dest* peer) {
  char out[MSG_LEN] = {0}, in[MSG_LEN], gid[33];
  for (int i = 0; i < 16; i++) sprintf(gid + 2 * i, "%02x", me->gid.raw[i]);
  snprintf(out, sizeof out, "EPICRXE1 %06x %06x %08x %016" PRIx64 " %s", me->qpn, me->psn, me->rkey,
           me->addr, gid);
  tcp_send_all(fd, out, sizeof out);
  tcp_recv_all(fd, in, sizeof in, "the peer's QP parameters");
  in[MSG_LEN - 1] = 0;
  char pgid[33] = {0};
  if (sscanf(in, "EPICRXE1 %x %x %x %" SCNx64 " %32s", &peer->qpn, &peer->psn, &peer->rkey,
             &peer->addr, pgid) != 5 ||
      strlen(pgid) != 32)
    die("bad parameter message from the peer: '%s'", in);
  for (int i = 0; i < 16; i++) {
    unsigned v;
    if (sscanf(pgid + 2 * i, "%2x", &v) != 1) die("bad GID from the peer: '%s'", pgid);
    peer->gid.raw[i] = (uint8_t)v;
  }
}

static void ctx_open(struct ctx* c, const char* devname) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (!list) die("ibv_get_device_list: %s", strerror(errno));
  if (n == 0) die("no RDMA device (is rdma_rxe loaded and 'rdma link add' done?)");
  struct ibv_device* d = NULL;
  for (int i = 0; i < n; i++)
    if (!devname || strcmp(ibv_get_device_name(list[i]), devname) == 0) {
      d = list[i];
      break;
    }
  if (!d) die("no RDMA device named %s", devname);
  c->dev = ibv_open_device(d);
  if (!c->dev) die("ibv_open_device %s: %s", ibv_get_device_name(d), strerror(errno));
  printf("rxe_traffic[%s]: device %s\n", role, ibv_get_device_name(d));
  ibv_free_device_list(list);

  struct ibv_port_attr pa;
  if (ibv_query_port(c->dev, (uint8_t)c->port, &pa))
    die("ibv_query_port %d: %s", c->port, strerror(errno));
  if (pa.state != IBV_PORT_ACTIVE) die("port %d is not ACTIVE (state %d)", c->port, pa.state);
  if (pa.active_mtu < IBV_MTU_1024) die("port active MTU %d is below 1024", 128 << pa.active_mtu);

  c->pd = ibv_alloc_pd(c->dev);
  if (!c->pd) die("ibv_alloc_pd: %s", strerror(errno));
  if (posix_memalign((void**)&c->buf, 4096, BUF_SIZE)) die("posix_memalign failed");
  memset(c->buf, GUARD_BYTE, BUF_SIZE);
  c->mr = ibv_reg_mr(c->pd, c->buf, BUF_SIZE,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (!c->mr) die("ibv_reg_mr: %s", strerror(errno));
  c->scq = ibv_create_cq(c->dev, 64, NULL, NULL, 0);
  if (!c->scq) die("ibv_create_cq (send): %s", strerror(errno));
  c->rcq = ibv_create_cq(c->dev, 64, NULL, NULL, 0);
  if (!c->rcq) die("ibv_create_cq (recv): %s", strerror(errno));
  struct ibv_qp_init_attr ia = {
      .send_cq = c->scq,
      .recv_cq = c->rcq,
      .cap = {.max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 1, .max_recv_sge = 1},
      .qp_type = IBV_QPT_RC,
      .sq_sig_all = 0,
  };
  // unused QPs first, so that the two ends (same kernel, same QPN allocator) get different QPNs
  for (int i = 0; i < c->spare_qps && i < 8; i++) {
    c->spare[i] = ibv_create_qp(c->pd, &ia);
    if (!c->spare[i]) die("ibv_create_qp (spare %d): %s", i, strerror(errno));
  }
  c->qp = ibv_create_qp(c->pd, &ia);
  if (!c->qp) die("ibv_create_qp: %s", strerror(errno));
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_INIT,
      .pkey_index = 0,
      .port_num = (uint8_t)c->port,
      .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
  };
  int r = ibv_modify_qp(c->qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (r) die("ibv_modify_qp -> INIT: %s", strerror(r));
}

static void ctx_connect(struct ctx* c, uint32_t my_psn, const struct dest* peer) {
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_RTR,
      .path_mtu = IBV_MTU_1024,
      .dest_qp_num = peer->qpn,
      .rq_psn = peer->psn,
      .max_dest_rd_atomic = 4,
      .min_rnr_timer = 12,
      .ah_attr = {.is_global = 1,
                  .grh = {.dgid = peer->gid, .sgid_index = (uint8_t)c->gidx, .hop_limit = 64},
                  .sl = 0,
                  .src_path_bits = 0,
                  .port_num = (uint8_t)c->port},
  };
  int r = ibv_modify_qp(c->qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (r) die("ibv_modify_qp -> RTR: %s", strerror(r));
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = my_psn;
  a.max_rd_atomic = 4;
  r = ibv_modify_qp(c->qp, &a,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (r) die("ibv_modify_qp -> RTS: %s", strerror(r));
}

static uint8_t* slot(struct ctx* c, unsigned s) { return c->buf + (size_t)s * SLOT; }

static void post_recv(struct ctx* c, uint64_t wr_id, unsigned s) {
  struct ibv_sge sge = {.addr = (uintptr_t)slot(c, s), .length = SLOT - GUARD, .lkey = c->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad = NULL;
  int r = ibv_post_recv(c->qp, &wr, &bad);
  if (r) die("ibv_post_recv (wr_id %" PRIu64 "): %s", wr_id, strerror(r));
}

static void post_send(struct ctx* c, enum ibv_wr_opcode op, uint64_t wr_id, unsigned local_slot,
                      uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm) {
  struct ibv_sge sge = {.addr = (uintptr_t)slot(c, local_slot), .length = len, .lkey = c->mr->lkey};
  struct ibv_send_wr wr =
                         {
                             .wr_id = wr_id,
                             .sg_list = len ? &sge : NULL,
                             .num_sge = len ? 1 : 0,
                             .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED,
                         },
                     *bad = NULL;
  if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM) wr.imm_data = htonl(imm);
  if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_RDMA_READ) {
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
  }
  int r = ibv_post_send(c->qp, &wr, &bad);
  if (r) die("ibv_post_send (opcode %d, %u bytes): %s", op, len, strerror(r));
}

// collects exactly n completions from cq into wc[], failing on error status or timeout
static void poll_n(struct ibv_cq* cq, struct ibv_wc* wc, int n, const char* what) {
  int got = 0;
  double deadline = now_s() + timeout_s;
  while (got < n) {
    int r = ibv_poll_cq(cq, n - got, wc + got);
    if (r < 0) die("ibv_poll_cq (%s) failed", what);
    for (int i = got; i < got + r; i++) {
      if (verbose)
        printf("rxe_traffic[%s]:   wc %s wr_id=%" PRIu64
               " opcode=%d status=%s byte_len=%u flags=0x%x imm=0x%08x\n",
               role, what, wc[i].wr_id, wc[i].opcode, ibv_wc_status_str(wc[i].status),
               wc[i].byte_len, wc[i].wc_flags, ntohl(wc[i].imm_data));
      if (wc[i].status != IBV_WC_SUCCESS)
        die("%s: completion wr_id %" PRIu64 " has status %s (vendor_err 0x%x)", what, wc[i].wr_id,
            ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
    }
    got += r;
    if (got < n) {
      if (now_s() > deadline)
        die("%s: got %d of %d completions within %d s", what, got, n, timeout_s);
      usleep(200);  // the guests share few host cores: don't spin
    }
  }
}

static void expect_opcode(const struct ibv_wc* wc, enum ibv_wc_opcode op, const char* what) {
  if (wc->opcode != op) fail("%s: completion opcode %d, expected %d", what, wc->opcode, op);
}

// ---------------------------------------------------------------------------------------------
// phases

static const uint32_t send_sizes[] = {0, 1, 100, 1024, 2048, 3000};
static const uint32_t imm_sizes[] = {0, 100, 3000};
static const uint32_t read_sizes[] = {1, 100, 1024, 3000};
static const uint32_t rev_sizes[] = {64, 2000};
#define BURST_N 16
#define BURST_SIZE 2500u
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static unsigned seed_of(int phase, int k) { return (unsigned)(phase * 16 + k); }
static uint32_t imm_of(int phase, int k) {
  return 0xE1C00000u | (uint32_t)(phase << 8) | (uint32_t)k;
}

static void phase_result(const char* name, int before, int nmsg) {
  printf("rxe_traffic[%s]: phase %-14s %d message(s) %s\n", role, name, nmsg,
         failures == before ? "OK" : "FAILED");
  fflush(stdout);
}

// sender side of a SEND phase
static void do_sends(struct ctx* c, int phase, const uint32_t* sizes, int n, int with_imm) {
  struct ibv_wc wc[32];
  for (int k = 0; k < n; k++) {
    pat_fill(slot(c, R_SRC + (unsigned)k), sizes[k], seed_of(phase, k));
    post_send(c, with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, (uint64_t)k, R_SRC + (unsigned)k,
              sizes[k], 0, 0, imm_of(phase, k));
  }
  poll_n(c->scq, wc, n, "send completions");
  for (int k = 0; k < n; k++) expect_opcode(&wc[k], IBV_WC_SEND, "send");
}

// receiver side of a SEND phase: receives were posted at slots base..base+n-1
static void check_recvs(struct ctx* c, int phase, unsigned base, const uint32_t* sizes, int n,
                        int with_imm) {
  struct ibv_wc wc[32];
  char what[64];
  poll_n(c->rcq, wc, n, "receive completions");
  for (int i = 0; i < n; i++) {
    int k = (int)wc[i].wr_id;
    if (k < 0 || k >= n) {
      fail("phase %d: unexpected receive wr_id %" PRIu64, phase, wc[i].wr_id);
      continue;
    }
    snprintf(what, sizeof what, "phase %d message %d (%u bytes)", phase, k, sizes[k]);
    if (k != i) fail("%s: completed out of order (position %d)", what, i);
    expect_opcode(&wc[i], IBV_WC_RECV, what);
    if (wc[i].byte_len != sizes[k]) fail("%s: byte_len %u", what, wc[i].byte_len);
    int has_imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) != 0;
    if (has_imm != with_imm)
      fail("%s: IBV_WC_WITH_IMM is %d, expected %d", what, has_imm, with_imm);
    if (with_imm && ntohl(wc[i].imm_data) != imm_of(phase, k))
      fail("%s: immediate 0x%08x, expected 0x%08x", what, ntohl(wc[i].imm_data), imm_of(phase, k));
    pat_check(slot(c, base + (unsigned)k), sizes[k], seed_of(phase, k), what);
  }
}

static void run_client(struct ctx* c, int fd, const struct dest* peer) {
  struct ibv_wc wc[32];
  char what[64];
  int before, n;

  // 1 SEND
  before = failures;
  sync_peer(fd, "send-ready");  // server has posted its receives
  do_sends(c, 1, send_sizes, NELEM(send_sizes), 0);
  sync_peer(fd, "send-done");
  phase_result("SEND", before, NELEM(send_sizes));

  // 2 SEND_WITH_IMM
  before = failures;
  sync_peer(fd, "sendimm-ready");
  do_sends(c, 2, imm_sizes, NELEM(imm_sizes), 1);
  sync_peer(fd, "sendimm-done");
  phase_result("SEND_WITH_IMM", before, NELEM(imm_sizes));

  // 3 RDMA_WRITE: slot R_WDST+k of the server
  before = failures;
  n = NELEM(send_sizes);
  sync_peer(fd, "write-ready");
  for (int k = 0; k < n; k++) {
    pat_fill(slot(c, R_SRC + (unsigned)k), send_sizes[k], seed_of(3, k));
    post_send(c, IBV_WR_RDMA_WRITE, (uint64_t)k, R_SRC + (unsigned)k, send_sizes[k],
              peer->addr + (uint64_t)(R_WDST + (unsigned)k) * SLOT, peer->rkey, 0);
  }
  poll_n(c->scq, wc, n, "write completions");
  for (int k = 0; k < n; k++) expect_opcode(&wc[k], IBV_WC_RDMA_WRITE, "write");
  sync_peer(fd, "write-done");  // the server checks its memory now
  sync_peer(fd, "write-checked");
  phase_result("RDMA_WRITE", before, n);

  // 4 RDMA_WRITE_WITH_IMM: slot R_WDST+8+k of the server
  before = failures;
  n = NELEM(imm_sizes);
  sync_peer(fd, "writeimm-ready");
  for (int k = 0; k < n; k++) {
    pat_fill(slot(c, R_SRC + (unsigned)k), imm_sizes[k], seed_of(4, k));
    post_send(c, IBV_WR_RDMA_WRITE_WITH_IMM, (uint64_t)k, R_SRC + (unsigned)k, imm_sizes[k],
              peer->addr + (uint64_t)(R_WDST + 8u + (unsigned)k) * SLOT, peer->rkey, imm_of(4, k));
  }
  poll_n(c->scq, wc, n, "write-with-imm completions");
  for (int k = 0; k < n; k++) expect_opcode(&wc[k], IBV_WC_RDMA_WRITE, "write with immediate");
  sync_peer(fd, "writeimm-done");
  phase_result("WRITE_WITH_IMM", before, n);

  // 5 RDMA_READ: server slot R_READ+k -> client slot R_READ+k
  before = failures;
  n = NELEM(read_sizes);
  sync_peer(fd, "read-ready");  // the server has filled its read source
  for (int k = 0; k < n; k++)
    post_send(c, IBV_WR_RDMA_READ, (uint64_t)k, R_READ + (unsigned)k, read_sizes[k],
              peer->addr + (uint64_t)(R_READ + (unsigned)k) * SLOT, peer->rkey, 0);
  poll_n(c->scq, wc, n, "read completions");
  for (int k = 0; k < n; k++) {
    snprintf(what, sizeof what, "read %d (%u bytes)", k, read_sizes[k]);
    expect_opcode(&wc[k], IBV_WC_RDMA_READ, what);
    if ((int)wc[k].wr_id != k) fail("%s: completed out of order", what);
    pat_check(slot(c, R_READ + (unsigned)k), read_sizes[k], seed_of(5, k), what);
  }
  sync_peer(fd, "read-done");
  phase_result("RDMA_READ", before, n);

  // 6 reverse SEND: server -> client into slots R_RECV+k
  before = failures;
  n = NELEM(rev_sizes);
  for (int k = 0; k < n; k++) post_recv(c, (uint64_t)k, R_RECV + (unsigned)k);
  sync_peer(fd, "reverse-ready");
  check_recvs(c, 6, R_RECV, rev_sizes, n, 0);
  sync_peer(fd, "reverse-done");
  phase_result("SEND(reverse)", before, n);

  // 7 burst of RDMA WRITEs: client slot k -> server slot R_BURST+k
  before = failures;
  sync_peer(fd, "burst-ready");
  for (int k = 0; k < BURST_N; k++) {
    pat_fill(slot(c, R_SRC + (unsigned)k), BURST_SIZE, seed_of(7, k));
    post_send(c, IBV_WR_RDMA_WRITE, (uint64_t)k, R_SRC + (unsigned)k, BURST_SIZE,
              peer->addr + (uint64_t)(R_BURST + (unsigned)k) * SLOT, peer->rkey, 0);
  }
  poll_n(c->scq, wc, BURST_N, "burst write completions");
  for (int k = 0; k < BURST_N; k++) expect_opcode(&wc[k], IBV_WC_RDMA_WRITE, "burst write");
  sync_peer(fd, "burst-done");
  sync_peer(fd, "burst-checked");
  phase_result("WRITE(burst)", before, BURST_N);
}

static void run_server(struct ctx* c, int fd) {
  struct ibv_wc wc[32];
  char what[64];
  int before, n;

  // 1 SEND into slots R_RECV+k
  before = failures;
  n = NELEM(send_sizes);
  for (int k = 0; k < n; k++) post_recv(c, (uint64_t)k, R_RECV + (unsigned)k);
  sync_peer(fd, "send-ready");
  check_recvs(c, 1, R_RECV, send_sizes, n, 0);
  sync_peer(fd, "send-done");
  phase_result("SEND", before, n);

  // 2 SEND_WITH_IMM into slots R_RECV+8+k
  before = failures;
  n = NELEM(imm_sizes);
  for (int k = 0; k < n; k++) post_recv(c, (uint64_t)k, R_RECV + 8u + (unsigned)k);
  sync_peer(fd, "sendimm-ready");
  check_recvs(c, 2, R_RECV + 8u, imm_sizes, n, 1);
  sync_peer(fd, "sendimm-done");
  phase_result("SEND_WITH_IMM", before, n);

  // 3 RDMA_WRITE: no completion here; check memory once the client's writes completed
  before = failures;
  n = NELEM(send_sizes);
  sync_peer(fd, "write-ready");
  sync_peer(fd, "write-done");
  for (int k = 0; k < n; k++) {
    snprintf(what, sizeof what, "write %d (%u bytes)", k, send_sizes[k]);
    pat_check(slot(c, R_WDST + (unsigned)k), send_sizes[k], seed_of(3, k), what);
  }
  sync_peer(fd, "write-checked");
  phase_result("RDMA_WRITE", before, n);

  // 4 RDMA_WRITE_WITH_IMM: each consumes a receive (its buffer is not used)
  before = failures;
  n = NELEM(imm_sizes);
  for (int k = 0; k < n; k++) post_recv(c, (uint64_t)k, R_RECV + 12u + (unsigned)k);
  sync_peer(fd, "writeimm-ready");
  poll_n(c->rcq, wc, n, "write-with-imm receive completions");
  for (int i = 0; i < n; i++) {
    int k = (int)wc[i].wr_id;
    if (k < 0 || k >= n) {
      fail("write-with-imm: unexpected receive wr_id %" PRIu64, wc[i].wr_id);
      continue;
    }
    snprintf(what, sizeof what, "write-with-imm %d (%u bytes)", k, imm_sizes[k]);
    if (k != i) fail("%s: completed out of order (position %d)", what, i);
    expect_opcode(&wc[i], IBV_WC_RECV_RDMA_WITH_IMM, what);
    if (!(wc[i].wc_flags & IBV_WC_WITH_IMM)) fail("%s: IBV_WC_WITH_IMM not set", what);
    if (ntohl(wc[i].imm_data) != imm_of(4, k))
      fail("%s: immediate 0x%08x, expected 0x%08x", what, ntohl(wc[i].imm_data), imm_of(4, k));
    if (wc[i].byte_len != imm_sizes[k]) fail("%s: byte_len %u", what, wc[i].byte_len);
    pat_check(slot(c, R_WDST + 8u + (unsigned)k), imm_sizes[k], seed_of(4, k), what);
    // the receive buffer must be untouched
    const uint8_t* rb = slot(c, R_RECV + 12u + (unsigned)k);
    for (unsigned j = 0; j < GUARD; j++)
      if (rb[j] != GUARD_BYTE) {
        fail("%s: the consumed receive buffer was written", what);
        break;
      }
  }
  sync_peer(fd, "writeimm-done");
  phase_result("WRITE_WITH_IMM", before, n);

  // 5 RDMA_READ: fill the source, the client reads and checks
  before = failures;
  n = NELEM(read_sizes);
  for (int k = 0; k < n; k++) pat_fill(slot(c, R_READ + (unsigned)k), read_sizes[k], seed_of(5, k));
  sync_peer(fd, "read-ready");
  sync_peer(fd, "read-done");
  phase_result("RDMA_READ", before, n);

  // 6 reverse SEND
  before = failures;
  n = NELEM(rev_sizes);
  sync_peer(fd, "reverse-ready");
  do_sends(c, 6, rev_sizes, n, 0);
  sync_peer(fd, "reverse-done");
  phase_result("SEND(reverse)", before, n);

  // 7 burst of RDMA WRITEs
  before = failures;
  sync_peer(fd, "burst-ready");
  sync_peer(fd, "burst-done");
  for (int k = 0; k < BURST_N; k++) {
    snprintf(what, sizeof what, "burst write %d (%u bytes)", k, BURST_SIZE);
    pat_check(slot(c, R_BURST + (unsigned)k), BURST_SIZE, seed_of(7, k), what);
  }
  sync_peer(fd, "burst-checked");
  phase_result("WRITE(burst)", before, BURST_N);
}

int main(int argc, char** argv) {
  const char *devname = NULL, *port = "18900";
  long psn = -1;
  int spare = -1;
  int opt;
  struct ctx c = {.port = 1, .gidx = 1};
  setvbuf(stdout, NULL, _IOLBF, 0);
  while ((opt = getopt(argc, argv, "d:i:g:p:P:t:x:vh")) != -1) {
    switch (opt) {
      case 'd':
        devname = optarg;
        break;
      case 'i':
        c.port = atoi(optarg);
        break;
      case 'g':
        c.gidx = atoi(optarg);
        break;
      case 'p':
        port = optarg;
        break;
      case 'P':
        psn = strtol(optarg, NULL, 0) & 0xffffff;
        break;
      case 't':
        timeout_s = atoi(optarg);
        break;
      case 'v':
        verbose = 1;
        break;
      case 'x':
        spare = atoi(optarg);
        break;
      default:
        fprintf(stderr,
                "usage: %s [-d dev] [-i port] [-g gid_index] [-p tcp_port] [-P psn] [-t sec] [-x "
                "n] [-v] [server]\n",
                argv[0]);
        return 2;
    }
  }
  const char* server = optind < argc ? argv[optind] : NULL;
  role = server ? "client" : "server";
  if (psn < 0) psn = server ? 0xfffff0 : 0x123456;
  c.spare_qps = spare >= 0 ? spare : (server ? 0 : 2);

  ctx_open(&c, devname);
  struct dest me = {.qpn = c.qp->qp_num,
                    .psn = (uint32_t)psn,
                    .rkey = c.mr->rkey,
                    .addr = (uintptr_t)c.buf},
              peer;
  if (ibv_query_gid(c.dev, (uint8_t)c.port, c.gidx, &me.gid))
    die("ibv_query_gid index %d: %s", c.gidx, strerror(errno));
  static const uint8_t zero[16];
  if (memcmp(me.gid.raw, zero, 16) == 0) die("GID index %d is empty", c.gidx);

  int fd = server ? tcp_client(server, port) : tcp_server(port);
  exchange(fd, &me, &peer);
  char g1[64], g2[64];
  gid_str(&me.gid, g1, sizeof g1);
  gid_str(&peer.gid, g2, sizeof g2);
  printf("rxe_traffic[%s]: local  qpn 0x%06x psn 0x%06x gid[%d] %s rkey 0x%08x addr 0x%016" PRIx64
         "\n",
         role, me.qpn, me.psn, c.gidx, g1, me.rkey, me.addr);
  printf("rxe_traffic[%s]: remote qpn 0x%06x psn 0x%06x gid %s rkey 0x%08x addr 0x%016" PRIx64 "\n",
         role, peer.qpn, peer.psn, g2, peer.rkey, peer.addr);
  ctx_connect(&c, me.psn, &peer);
  sync_peer(fd, "rts");

  double t0 = now_s();
  if (server)
    run_client(&c, fd, &peer);
  else
    run_server(&c, fd);

  // verdicts
  char out[MSG_LEN] = {0}, in[MSG_LEN];
  snprintf(out, sizeof out, "RESULT %d", failures);
  tcp_send_all(fd, out, sizeof out);
  tcp_recv_all(fd, in, sizeof in, "the peer's result");
  in[MSG_LEN - 1] = 0;
  int peer_failures = -1;
  if (sscanf(in, "RESULT %d", &peer_failures) != 1) die("bad result message '%s'", in);
  close(fd);

  int ok = failures == 0 && peer_failures == 0;
  printf("RXE_TRAFFIC %s role=%s failures=%d peer_failures=%d time=%.2fs\n", ok ? "PASS" : "FAIL",
         role, failures, peer_failures, now_s() - t0);

  ibv_destroy_qp(c.qp);
  for (int i = 0; i < c.spare_qps && i < 8; i++) ibv_destroy_qp(c.spare[i]);
  ibv_destroy_cq(c.scq);
  ibv_destroy_cq(c.rcq);
  ibv_dereg_mr(c.mr);
  ibv_dealloc_pd(c.pd);
  ibv_close_device(c.dev);
  free(c.buf);
  return ok ? 0 : 1;
}
