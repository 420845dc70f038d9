// veth_blast: the traffic ends of tests/bench/incd_veth_bench.sh — raw Ethernet
// frames over one interface through an AF_PACKET socket (root / CAP_NET_RAW).
//
//   veth_blast send IFACE --count N [--size B] [--src MAC] [--dst MAC]
//       N RoCEv2 frames (IPv4/UDP 4791, valid ICRC, PSN = sequence number, B bytes
//       on the wire without FCS, rounded down to 58 + 4k) from MAC to MAC, as fast as the socket
//       accepts them (sendmmsg batches; a full socket buffer is waited out with poll()).
//   veth_blast recv IFACE --count N [--src MAC] [--dst MAC] [--idle S] [--timeout S]
//       [--ready-file PATH]
//       counts the frames from src to dst with the sender's UDP port until N came,
//       S seconds passed without one (after the first), or the timeout; PATH is
//       created once the socket listens.
//   veth_blast prime IFACE [--count N] [--src MAC] [--dst MAC]
//       sends N (3) small frames, so that a learning switch knows where src lives.
//
// Each mode prints one JSON line on stdout; recv's "pps" is the forwarded rate
// (frames - 1) / (last arrival - first arrival). Exit 0 on success, 2 on usage
// errors, 1 on socket errors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "datapath/wire/builder.h"
#include "proto/vocab/addr.h"

namespace {

namespace w = epic::wire;
namespace vocab = epic::vocab;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kUdpSrcPort = 0xB1A5;                      // marks the benchmark's frames
constexpr uint32_t kSrcIp = 0x0A6E0001, kDstIp = 0x0A6E0002;  // 10.110.0.1 -> .2

struct Options {
  std::string mode, iface;
  uint64_t count = 0;
  size_t size = 256;
  vocab::MacAddr src{2, 0x1B, 0, 0, 0, 1}, dst{2, 0x1B, 0, 0, 0, 2};
  double idle_s = 1.0, timeout_s = 30.0;
  std::string ready_file;
  std::string shared;   // file holding the receiver's count (closed-loop sending)
  uint64_t window = 0;  // send: at most this many frames not yet counted by the receiver
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "veth_blast: %s\n", why.c_str());
  std::exit(1);
}

// The receiver's frame count, in a file both ends map (they may live in different network
// namespaces, not in different mount namespaces).
volatile uint64_t* map_counter(const std::string& path, bool create) {
  const int fd = ::open(path.c_str(), create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0644);
  if (fd < 0) fail("cannot open " + path + ": " + std::strerror(errno));
  if (create && ::ftruncate(fd, 4096) != 0) fail("ftruncate " + path);
  void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) fail("mmap " + path + ": " + std::strerror(errno));
  return static_cast<volatile uint64_t*>(p);
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "veth_blast: %s\nusage: veth_blast send|recv|prime IFACE [--count N] [--size B] "
               "[--src MAC] [--dst MAC] [--idle S] [--timeout S] [--ready-file PATH] "
               "[--window W --shared PATH]\n",
               msg);
  std::exit(2);
}

bool parse_mac(const char* s, vocab::MacAddr& out) {
  unsigned b[6];
  if (std::sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
    return false;
  for (int i = 0; i < 6; ++i) {
    if (b[i] > 0xFF) return false;
    out[static_cast<size_t>(i)] = static_cast<uint8_t>(b[i]);
  }
  return true;
}

int open_socket(const std::string& iface, int& ifindex) {
  const int fd = ::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (fd < 0) fail("socket(AF_PACKET): " + std::string(std::strerror(errno)) + " (needs root)");
  ifindex = static_cast<int>(::if_nametoindex(iface.c_str()));
  if (ifindex == 0) fail("no interface " + iface);
  const int big = 64 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) < 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big) < 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  const int one = 1;
  (void)::setsockopt(fd, SOL_PACKET, 23 /* PACKET_IGNORE_OUTGOING */, &one, sizeof one);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = ifindex;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) < 0)
    fail("bind " + iface + ": " + std::strerror(errno));
  return fd;
}

std::vector<uint8_t> make_frame(const Options& o, uint32_t seq, size_t size) {
  // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 58 bytes of headers; the payload is a
  // multiple of 4 (no pad bytes), so a frame is `size` rounded down to 58 + 4k bytes.
  const size_t payload = size > 58 ? (size - 58) / 4 * 4 : 0;
  auto b = w::PacketBuilder()
               .eth(o.dst, o.src)
               .ipv4(kSrcIp, kDstIp)
               .udp_src_port(kUdpSrcPort)
               .bth(w::op::kSendOnly, 0x77, seq & 0xFFFFFF);
  b.payload_pattern(payload, static_cast<uint8_t>(seq));
  return b.build();
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int do_send(const Options& o, uint64_t count, size_t size) {
  int ifindex = 0;
  const int fd = open_socket(o.iface, ifindex);
  // Frames are rebuilt per batch position only for the PSN; prebuild a ring of them.
  constexpr size_t kBatch = 64;
  std::vector<std::vector<uint8_t>> frames;
  const uint64_t distinct = std::min<uint64_t>(count, 4096);
  for (uint64_t i = 0; i < distinct; ++i)
    frames.push_back(make_frame(o, static_cast<uint32_t>(i), size));
  std::vector<mmsghdr> msgs(kBatch);
  std::vector<iovec> iov(kBatch);
  volatile uint64_t* received = o.window > 0 ? map_counter(o.shared, false) : nullptr;
  uint64_t sent = 0, blocked = 0, window_waits = 0, written_off = 0, stalls = 0;
  const auto t0 = Clock::now();
  while (sent < count) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kBatch, count - sent));
    if (received != nullptr) {
      // Closed loop: wait while `window` frames are on their way. Frames that never arrive
      // (lost) would stall it: after 200 ms without progress they are written off.
      uint64_t last_seen = __atomic_load_n(received, __ATOMIC_ACQUIRE);
      auto since_progress = Clock::now();
      for (;;) {
        const uint64_t r = __atomic_load_n(received, __ATOMIC_ACQUIRE);
        if (r != last_seen) {
          last_seen = r;
          since_progress = Clock::now();
        }
        const uint64_t outstanding = sent - std::min(sent, r + written_off);
        if (outstanding < o.window) {
          n = static_cast<size_t>(std::min<uint64_t>(n, o.window - outstanding));
          break;
        }
        ++window_waits;
        if (since(since_progress) > 0.2) {
          written_off += outstanding;
          ++stalls;
          continue;
        }
        ::usleep(20);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      auto& f = frames[(sent + i) % distinct];
      iov[i] = {f.data(), f.size()};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int k = ::sendmmsg(fd, msgs.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    if (k > 0) {
      sent += static_cast<uint64_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
      ++blocked;
      pollfd p{fd, POLLOUT, 0};
      (void)::poll(&p, 1, 10);
    } else if (k < 0 && errno != EINTR) {
      fail("sendmmsg: " + std::string(std::strerror(errno)));
    }
  }
  const double s = since(t0);
  using ull = unsigned long long;
  std::printf(
      "{\"mode\":\"send\",\"iface\":\"%s\",\"sent\":%llu,\"frame_bytes\":%zu,"
      "\"seconds\":%.6f,\"pps\":%.0f,\"would_block\":%llu,\"window\":%llu,"
      "\"window_waits\":%llu,\"stalls\":%llu,\"written_off\":%llu}\n",
      o.iface.c_str(), static_cast<ull>(sent), frames[0].size(), s, static_cast<double>(sent) / s,
      static_cast<ull>(blocked), static_cast<ull>(o.window), static_cast<ull>(window_waits),
      static_cast<ull>(stalls), static_cast<ull>(written_off));
  ::close(fd);
  return 0;
}

int do_recv(const Options& o) {
  int ifindex = 0;
  const int fd = open_socket(o.iface, ifindex);
  volatile uint64_t* counter = o.shared.empty() ? nullptr : map_counter(o.shared, true);
  if (!o.ready_file.empty()) {
    const int rf = ::open(o.ready_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rf < 0) fail("cannot create " + o.ready_file);
    ::close(rf);
  }
  constexpr size_t kBatch = 64, kBuf = 2048;
  std::vector<uint8_t> bufs(kBatch * kBuf);
  std::vector<mmsghdr> msgs(kBatch);
  std::vector<iovec> iov(kBatch);
  uint64_t got = 0, other = 0, reordered = 0;
  uint32_t next_psn = 0;
  Clock::time_point first{}, last{};
  const auto t0 = Clock::now();
  bool stop = false;
  while (!stop && got < o.count) {
    for (size_t i = 0; i < kBatch; ++i) {
      iov[i] = {bufs.data() + i * kBuf, kBuf};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int k = ::recvmmsg(fd, msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
    if (k <= 0) {
      if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        fail("recvmmsg: " + std::string(std::strerror(errno)));
      const double limit =
          got == 0
              ? o.timeout_s - since(t0)
              : std::min(o.timeout_s - since(t0),
                         o.idle_s - std::chrono::duration<double>(Clock::now() - last).count());
      if (limit <= 0) break;
      pollfd p{fd, POLLIN, 0};
      (void)::poll(&p, 1, std::max(1, static_cast<int>(std::min(limit, 0.05) * 1000)));
      continue;
    }
    const auto now = Clock::now();
    for (int i = 0; i < k; ++i) {
      const uint8_t* f = bufs.data() + static_cast<size_t>(i) * kBuf;
      const size_t len = msgs[static_cast<size_t>(i)].msg_len;
      // Ethernet dst/src, IPv4, UDP source port = ours.
      const bool ours = len >= 58 && std::memcmp(f, o.dst.data(), 6) == 0 &&
                        std::memcmp(f + 6, o.src.data(), 6) == 0 && f[12] == 0x08 &&
                        f[13] == 0x00 && f[34] == (kUdpSrcPort >> 8) &&
                        f[35] == (kUdpSrcPort & 0xFF);
      if (!ours) {
        ++other;
        continue;
      }
      const uint32_t psn = (uint32_t{f[51]} << 16) | (uint32_t{f[52]} << 8) | f[53];  // BTH+9
      if (psn != (next_psn & 0xFFFFFF)) ++reordered;  // a gap (loss) or a reordering
      next_psn = psn + 1;
      if (got == 0) first = now;
      last = now;
      if (++got >= o.count) {
        stop = true;
        break;
      }
    }
    if (counter != nullptr) __atomic_store_n(counter, got, __ATOMIC_RELEASE);
  }
  const double span = got > 1 ? std::chrono::duration<double>(last - first).count() : 0;
  std::printf(
      "{\"mode\":\"recv\",\"iface\":\"%s\",\"expected\":%llu,\"received\":%llu,"
      "\"first_to_last_s\":%.6f,\"pps\":%.0f,\"psn_gaps\":%llu,\"other_frames\":%llu}\n",
      o.iface.c_str(), static_cast<unsigned long long>(o.count),
      static_cast<unsigned long long>(got), span,
      span > 0 ? static_cast<double>(got - 1) / span : 0.0,
      static_cast<unsigned long long>(reordered), static_cast<unsigned long long>(other));
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (argc < 3) usage("need a mode and an interface");
  o.mode = argv[1];
  o.iface = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (v == nullptr) usage(("missing value for " + a).c_str());
    ++i;
    if (a == "--count") {
      o.count = std::strtoull(v, nullptr, 10);
    } else if (a == "--size") {
      o.size = std::strtoul(v, nullptr, 10);
    } else if (a == "--src") {
      if (!parse_mac(v, o.src)) usage("bad --src MAC");
    } else if (a == "--dst") {
      if (!parse_mac(v, o.dst)) usage("bad --dst MAC");
    } else if (a == "--idle") {
      o.idle_s = std::atof(v);
    } else if (a == "--timeout") {
      o.timeout_s = std::atof(v);
    } else if (a == "--ready-file") {
      o.ready_file = v;
    } else if (a == "--shared") {
      o.shared = v;
    } else if (a == "--window") {
      o.window = std::strtoull(v, nullptr, 10);
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  if (o.size < 64 || o.size > 1514) usage("--size must be 64..1514");
  if (o.window > 0 && o.shared.empty()) usage("--window needs --shared PATH (the receiver's)");
  if (o.mode == "send") {
    if (o.count == 0) usage("send needs --count N");
    return do_send(o, o.count, o.size);
  }
  if (o.mode == "prime") return do_send(o, o.count == 0 ? 3 : o.count, 64);
  if (o.mode == "recv") {
    if (o.count == 0) usage("recv needs --count N");
    return do_recv(o);
  }
  usage("mode must be send, recv or prime");
}
