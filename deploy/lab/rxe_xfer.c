// rxe_xfer.c - the verbs side of inc-rc-peer's EPICXFER1 exchange (EPIC Soft-RoCE lab).
//
// Build (host, Debian 12):  gcc -O2 -Wall -Wextra -o rxe_xfer rxe_xfer.c -libverbs
// Run (guest):              rxe_xfer [options]        (an agent: it listens and obeys)
//
// A real RDMA stack (rdma_rxe here) as the peer of EPIC's user-space RC endpoint: it creates one
// RC QP, accepts the controller (`inc-rc-peer xfer AGENT_ADDRESS`) on TCP, swaps
//   "EPICXFER1 <qpn> <psn> <rkey> <va> <len> <gid>"
// and then runs the controller's STEPs, one at a time (tools/inc-rc-peer/xfer_wire.h):
//   STEP <id> <op> <dir> <size> <seed> <imm> <offset> <late_ms>   op: SEND SEND_IMM WRITE WRITE_IMM
//   c2a (controller -> us): guard-fill, post a receive, "READY <id>"; on "CHECK <id>" poll the
//        receive completion (opcode, byte_len, immediate), check every byte and the 64 guard
//        bytes after the message, "RESULT <id> PASS|FAIL <why>"; with late_ms > 0 the receive
//        is posted late_ms after READY, so the controller's first packets meet RNR NAKs
//   a2c (us -> controller): fill the pattern, post the SEND/WRITE (WRITEs to the controller's
//        va + offset), poll its completion, "RESULT <id> PASS|FAIL <why>"
//   END -> "BYE <failures>"
// Every message is 128 bytes of NUL-padded text. Payload byte i of a message is
// pattern(seed, i), the formula of rxe_traffic.c. Every wait is bounded by -t.
// Prints "RXE_XFER PASS|FAIL steps=N failures=M bytes=B" and exits 0 only when all steps passed.
//
// Options:
//   -d DEV    RDMA device (default: the first one)      -i PORT   device port (default 1)
//   -g IDX    GID index (default 1: the IPv4-mapped RoCEv2 GID of rxe)
//   -p PORT   TCP port (default 18516)                  -t SEC    bound on every wait (60)
//   -M BYTES  largest message (default 1048576)         -m MTU    path MTU (default 1024)
//   -P PSN    our first send PSN (default 0x654321)     -T N      QP local ACK timeout (14)
//   -v        print every step
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
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

#define GUARD 64u
#define GUARD_BYTE 0xEEu
#define MAX_OFFSET 4096u
#define MSG_LEN 128

static int verbose;
static int timeout_s = 60;

static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rxe_xfer: FATAL: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  printf("RXE_XFER FAIL fatal error\n");
  fflush(stdout);
  exit(1);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t pat_byte(unsigned seed, size_t i) {
  return (uint8_t)(((i * 131u) ^ (i >> 8)) + seed * 37u + 0x5Au);
}

// ---------------------------------------------------------------------------------------------
// TCP (every wait bounded by timeout_s)

static void wait_fd(int fd, short ev, const char* what) {
  struct pollfd pfd = {.fd = fd, .events = ev};
  int r = poll(&pfd, 1, timeout_s * 1000);
  if (r < 0) die("poll (%s): %s", what, strerror(errno));
  if (r == 0) die("timed out after %d s waiting for %s", timeout_s, what);
}

static void send_msg(int fd, const char* fmt, ...) {
  char out[MSG_LEN] = {0};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, sizeof out, fmt, ap);
  va_end(ap);
  const char* p = out;
  size_t n = sizeof out;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("TCP send: %s", w < 0 ? strerror(errno) : "closed");
    p += w;
    n -= (size_t)w;
  }
}

static void recv_msg(int fd, char* in, const char* what) {
  char* p = in;
  size_t n = MSG_LEN;
  while (n > 0) {
    wait_fd(fd, POLLIN, what);
    ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("TCP recv (%s): %s", what, strerror(errno));
    if (r == 0) die("the controller closed the TCP connection while we waited for %s", what);
    p += r;
    n -= (size_t)r;
  }
  in[MSG_LEN - 1] = 0;
}

static int tcp_accept(const char* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  if (fd < 0) die("socket: %s", strerror(errno));
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_ANY),
                          .sin_port = htons((uint16_t)atoi(port))};
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr*)&a, sizeof a) < 0)
    die("bind TCP port %s: %s", port, strerror(errno));
  if (listen(fd, 1) < 0) die("listen: %s", strerror(errno));
  printf("rxe_xfer: waiting for the controller on TCP port %s\n", port);
  fflush(stdout);
  wait_fd(fd, POLLIN, "the controller to connect");
  int c = accept(fd, NULL, NULL);
  if (c < 0) die("accept: %s", strerror(errno));
  close(fd);
  return c;
}

// ---------------------------------------------------------------------------------------------
// verbs

struct ctx {
  struct ibv_context* dev;
  struct ibv_pd* pd;
  struct ibv_mr* mr;
  struct ibv_cq *scq, *rcq;
  struct ibv_qp* qp;
  uint8_t* buf;  // window [0,R) | receive area [R,2R) | send source [2R,3R)
  size_t win;
  int port, gidx, mtu, qp_timeout;
};

static enum ibv_mtu mtu_enum(int mtu) {
  switch (mtu) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
    default:
      return IBV_MTU_1024;
  }
}

static void ctx_open(struct ctx* c, const char* devname, size_t max_size) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (!list || n == 0) die("no RDMA device (is rdma_rxe loaded and 'rdma link add' done?)");
  struct ibv_device* d = NULL;
  for (int i = 0; i < n; i++)
    if (!devname || strcmp(ibv_get_device_name(list[i]), devname) == 0) {
      d = list[i];
      break;
    }
  if (!d) die("no RDMA device named %s", devname);
  c->dev = ibv_open_device(d);
  if (!c->dev) die("ibv_open_device: %s", strerror(errno));
  ibv_free_device_list(list);
  struct ibv_port_attr pa;
  if (ibv_query_port(c->dev, (uint8_t)c->port, &pa)) die("ibv_query_port: %s", strerror(errno));
  if (pa.state != IBV_PORT_ACTIVE) die("port %d is not ACTIVE", c->port);
  c->pd = ibv_alloc_pd(c->dev);
  if (!c->pd) die("ibv_alloc_pd: %s", strerror(errno));
  c->win = (max_size + MAX_OFFSET + GUARD + 4095) / 4096 * 4096;
  if (posix_memalign((void**)&c->buf, 4096, 3 * c->win)) die("posix_memalign failed");
  memset(c->buf, GUARD_BYTE, 3 * c->win);
  c->mr = ibv_reg_mr(c->pd, c->buf, 3 * c->win, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (!c->mr) die("ibv_reg_mr: %s", strerror(errno));
  c->scq = ibv_create_cq(c->dev, 16, NULL, NULL, 0);
  c->rcq = ibv_create_cq(c->dev, 16, NULL, NULL, 0);
  if (!c->scq || !c->rcq) die("ibv_create_cq: %s", strerror(errno));
  struct ibv_qp_init_attr ia = {
      .send_cq = c->scq,
      .recv_cq = c->rcq,
      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1},
      .qp_type = IBV_QPT_RC,
  };
  c->qp = ibv_create_qp(c->pd, &ia);
  if (!c->qp) die("ibv_create_qp: %s", strerror(errno));
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_INIT,
      .port_num = (uint8_t)c->port,
      .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
  };
  int r = ibv_modify_qp(c->qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (r) die("ibv_modify_qp -> INIT: %s", strerror(r));
}

static void ctx_connect(struct ctx* c, uint32_t my_psn, uint32_t qpn, uint32_t psn,
                        const union ibv_gid* gid) {
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_RTR,
      .path_mtu = mtu_enum(c->mtu),
      .dest_qp_num = qpn,
      .rq_psn = psn,
      .max_dest_rd_atomic = 1,
      .min_rnr_timer = 12,
      .ah_attr = {.is_global = 1,
                  .grh = {.dgid = *gid, .sgid_index = (uint8_t)c->gidx, .hop_limit = 64},
                  .port_num = (uint8_t)c->port},
  };
  int r = ibv_modify_qp(c->qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (r) die("ibv_modify_qp -> RTR: %s", strerror(r));
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.timeout = (uint8_t)c->qp_timeout;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = my_psn;
  a.max_rd_atomic = 1;
  r = ibv_modify_qp(c->qp, &a,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (r) die("ibv_modify_qp -> RTS: %s", strerror(r));
}

static void post_recv(struct ctx* c, unsigned id) {
  struct ibv_sge sge = {
      .addr = (uintptr_t)(c->buf + c->win), .length = (uint32_t)c->win, .lkey = c->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad;
  int r = ibv_post_recv(c->qp, &wr, &bad);
  if (r) die("ibv_post_recv: %s", strerror(r));
}

// one completion within timeout_s: 0 and *why set on failure
static int poll_one(struct ibv_cq* cq, struct ibv_wc* wc, char* why, size_t n, const char* what) {
  double deadline = now_s() + timeout_s;
  for (;;) {
    int r = ibv_poll_cq(cq, 1, wc);
    if (r < 0) die("ibv_poll_cq failed");
    if (r == 1) {
      if (wc->status != IBV_WC_SUCCESS) {
        snprintf(why, n, "%s: completion status %s", what, ibv_wc_status_str(wc->status));
        return 0;
      }
      return 1;
    }
    if (now_s() > deadline) {
      snprintf(why, n, "%s: no completion within %d s", what, timeout_s);
      return 0;
    }
    usleep(100);
  }
}

static int check_bytes(const uint8_t* p, uint32_t size, unsigned seed, char* why, size_t n) {
  for (size_t i = 0; i < size; i++)
    if (p[i] != pat_byte(seed, i)) {
      snprintf(why, n, "byte %zu of %u is 0x%02x, expected 0x%02x", i, size, p[i],
               pat_byte(seed, i));
      return 0;
    }
  for (size_t i = size; i < size + GUARD; i++)
    if (p[i] != GUARD_BYTE) {
      snprintf(why, n, "byte %zu after the %u-byte message was overwritten (0x%02x)", i, size,
               p[i]);
      return 0;
    }
  return 1;
}

int main(int argc, char** argv) {
  const char *devname = NULL, *port = "18516";
  long psn = 0x654321;
  size_t max_size = 1u << 20;
  struct ctx c = {.port = 1, .gidx = 1, .mtu = 1024, .qp_timeout = 14};
  int opt;
  setvbuf(stdout, NULL, _IOLBF, 0);
  while ((opt = getopt(argc, argv, "d:i:g:p:t:M:m:P:T:vh")) != -1) {
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
      case 't':
        timeout_s = atoi(optarg);
        break;
      case 'M':
        max_size = strtoul(optarg, NULL, 0);
        break;
      case 'm':
        c.mtu = atoi(optarg);
        break;
      case 'P':
        psn = strtol(optarg, NULL, 0) & 0xffffff;
        break;
      case 'T':
        c.qp_timeout = atoi(optarg);
        break;
      case 'v':
        verbose = 1;
        break;
      default:
        fprintf(stderr,
                "usage: %s [-d dev] [-i port] [-g gid_index] [-p tcp_port] [-t sec] [-M max_size] "
                "[-m mtu] "
                "[-P psn] [-T qp_timeout] [-v]\n",
                argv[0]);
        return 2;
    }
  }
  ctx_open(&c, devname, max_size);
  union ibv_gid gid;
  if (ibv_query_gid(c.dev, (uint8_t)c.port, c.gidx, &gid))
    die("ibv_query_gid index %d: %s", c.gidx, strerror(errno));

  int fd = tcp_accept(port);
  char in[MSG_LEN], pgid[33] = {0}, g[33];
  unsigned pqpn, ppsn, prkey;
  uint64_t pva, plen;
  recv_msg(fd, in, "the controller's parameters");
  if (sscanf(in, "EPICXFER1 %x %x %x %" SCNx64 " %" SCNx64 " %32s", &pqpn, &ppsn, &prkey, &pva,
             &plen, pgid) != 6 ||
      strlen(pgid) != 32)
    die("bad parameter message: '%s'", in);
  union ibv_gid peer_gid;
  for (int i = 0; i < 16; i++) {
    unsigned v;
    if (sscanf(pgid + 2 * i, "%2x", &v) != 1) die("bad GID '%s'", pgid);
    peer_gid.raw[i] = (uint8_t)v;
  }
  for (int i = 0; i < 16; i++) sprintf(g + 2 * i, "%02x", gid.raw[i]);
  ctx_connect(&c, (uint32_t)psn, pqpn, ppsn, &peer_gid);
  send_msg(fd, "EPICXFER1 %06x %06x %08x %016" PRIx64 " %016" PRIx64 " %s", c.qp->qp_num,
           (unsigned)psn, c.mr->rkey, (uint64_t)(uintptr_t)c.buf, (uint64_t)c.win, g);
  printf("rxe_xfer: local qpn 0x%06x psn 0x%06lx; controller qpn 0x%06x psn 0x%06x window %" PRIu64
         " bytes\n",
         c.qp->qp_num, psn, pqpn, ppsn, plen);

  int steps = 0, failures = 0;
  uint64_t bytes = 0;
  double t0 = now_s();
  for (;;) {
    recv_msg(fd, in, "the controller's next STEP");
    if (strcmp(in, "END") == 0) {
      send_msg(fd, "BYE %d", failures);
      break;
    }
    unsigned id, size, seed, imm, off, late_ms;
    char op[16], dir[8], why[200] = "";
    if (sscanf(in, "STEP %u %15s %7s %u %u %x %u %u", &id, op, dir, &size, &seed, &imm, &off,
               &late_ms) != 8)
      die("bad message from the controller: '%s'", in);
    int is_write = strncmp(op, "WRITE", 5) == 0, has_imm = strstr(op, "_IMM") != NULL;
    int to_us = strcmp(dir, "c2a") == 0;
    steps++;
    bytes += size;
    if ((uint64_t)off + size + GUARD > (to_us ? c.win : plen) || off >= MAX_OFFSET)
      snprintf(why, sizeof why, "%u bytes at offset %u do not fit the window", size, off);
    struct ibv_wc wc;
    if (!why[0] && to_us) {
      uint8_t* dst = is_write ? c.buf + off : c.buf + c.win;
      memset(dst, GUARD_BYTE, size + GUARD);
      int wants_recv = !is_write || has_imm;
      if (wants_recv && late_ms == 0) post_recv(&c, id);
      send_msg(fd, "READY %u", id);
      if (wants_recv && late_ms > 0) {  // the controller's first packets meet RNR NAKs meanwhile
        usleep(late_ms * 1000u);
        post_recv(&c, id);
      }
      char want[32];
      snprintf(want, sizeof want, "CHECK %u", id);
      recv_msg(fd, in, want);
      if (strcmp(in, want) != 0) die("expected '%s', got '%s'", want, in);
      if (!is_write || has_imm) {
        if (poll_one(c.rcq, &wc, why, sizeof why, "receive")) {
          enum ibv_wc_opcode wop = is_write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
          int wimm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
          if (wc.opcode != wop)
            snprintf(why, sizeof why, "completion opcode %d, expected %d", wc.opcode, wop);
          else if (wc.byte_len != size)
            snprintf(why, sizeof why, "byte_len %u, expected %u", wc.byte_len, size);
          else if (wimm != has_imm)
            snprintf(why, sizeof why, "IBV_WC_WITH_IMM is %d, expected %d", wimm, has_imm);
          else if (has_imm && ntohl(wc.imm_data) != imm)
            snprintf(why, sizeof why, "immediate 0x%08x, expected 0x%08x", ntohl(wc.imm_data), imm);
        }
      }
      if (!why[0]) check_bytes(dst, size, seed, why, sizeof why);
    } else if (!why[0]) {
      uint8_t* src = c.buf + 2 * c.win;
      for (size_t i = 0; i < size; i++) src[i] = pat_byte(seed, i);
      struct ibv_sge sge = {.addr = (uintptr_t)src, .length = size, .lkey = c.mr->lkey};
      struct ibv_send_wr wr = {.wr_id = id,
                               .sg_list = size ? &sge : NULL,
                               .num_sge = size ? 1 : 0,
                               .send_flags = IBV_SEND_SIGNALED},
                         *bad;
      wr.opcode = is_write ? (has_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE)
                           : (has_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND);
      if (has_imm) wr.imm_data = htonl(imm);
      if (is_write) {
        wr.wr.rdma.remote_addr = pva + off;
        wr.wr.rdma.rkey = prkey;
      }
      int r = ibv_post_send(c.qp, &wr, &bad);
      if (r) die("ibv_post_send: %s", strerror(r));
      if (poll_one(c.scq, &wc, why, sizeof why, "send")) {
        enum ibv_wc_opcode wop = is_write ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
        if (wc.opcode != wop)
          snprintf(why, sizeof why, "send completion opcode %d, expected %d", wc.opcode, wop);
      }
    }
    if (why[0]) failures++;
    if (verbose || why[0])
      printf("rxe_xfer: step %u %s %s %u: %s%s%s\n", id, op, dir, size, why[0] ? "FAIL" : "PASS",
             why[0] ? ": " : "", why);
    if (why[0])
      send_msg(fd, "RESULT %u FAIL %s", id, why);
    else
      send_msg(fd, "RESULT %u PASS", id);
  }
  close(fd);
  printf("RXE_XFER %s steps=%d failures=%d bytes=%" PRIu64 " time=%.2fs\n",
         failures ? "FAIL" : "PASS", steps, failures, bytes, now_s() - t0);
  ibv_destroy_qp(c.qp);
  ibv_destroy_cq(c.scq);
  ibv_destroy_cq(c.rcq);
  ibv_dereg_mr(c.mr);
  ibv_dealloc_pd(c.pd);
  ibv_close_device(c.dev);
  free(c.buf);
  return failures ? 1 : 0;
}
