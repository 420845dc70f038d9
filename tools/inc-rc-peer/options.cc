#include "tools/inc-rc-peer/options.h"

#include <getopt.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "proto/vocab/addr.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/psn.h"

namespace epic::tools::rc_peer {

const char* const kUsage = R"(usage: inc-rc-peer MODE --iface IF --ip ADDR [options] [PEER]

A user-space RoCEv2 RC endpoint (EPIC's RcQp on an AF_PACKET socket) that
interoperates with real RDMA NICs and Linux Soft-RoCE (rdma_rxe). The endpoint
has its own MAC and IPv4 address on IF and answers ARP for them itself; the
kernel's address on IF (if any) carries the out-of-band TCP exchange.

modes:
  pingpong [SERVER]   ibv_rc_pingpong's protocol (TCP exchange "LID:QPN:PSN:GID",
                      port 18515): with SERVER, connect to `ibv_rc_pingpong -g 1`
                      running there; without, wait for `ibv_rc_pingpong -g 1 HOST`
                      to connect. Use the same -s and -n on both sides. Sends
                      pattern data and checks every received byte (a real
                      ibv_rc_pingpong echoes what it received).
  xfer [AGENT]        SEND, SEND with immediate, RDMA WRITE and WRITE with
                      immediate in both directions, every size of --sizes, each
                      checked byte for byte by both ends (protocol EPICXFER1, TCP
                      port 18516). With AGENT, drive the agent there
                      (deploy/lab/rxe_xfer in a Soft-RoCE guest, or another
                      inc-rc-peer); without, be the agent.

endpoint:
  -I, --iface IF          Linux interface to use (required)
      --ip A.B.C.D        the endpoint's own IPv4 address (required; not an address
                          the kernel owns on IF); its GID is ::ffff:A.B.C.D
      --mac MAC           the endpoint's own MAC (default 02:00:A:B:C:D)
  -p, --port N            TCP port of the out-of-band exchange (18515 pingpong,
                          18516 xfer)
      --qpn N             our QP number (default 0x123)
      --psn N             our first PSN (default: random from --seed)
      --udp-sport N       UDP source port of our frames (default 0xc000)

RC:
  -m, --mtu N             path MTU: 256 512 1024 2048 4096 (default 1024, what rxe
                          uses on a 1500-byte netdev)
      --rto-ms N          retransmission timeout (default 100)
      --retry N           retransmissions before giving up, 0-7 (default 7)
      --window N          request packets in flight (default 128)

loss injection (our side, seeded, off by default):
      --tx-loss R         drop this fraction of our outgoing RoCE frames
      --ack-loss R        drop this fraction of incoming ACK/NAK frames
      --rx-loss R         drop this fraction of the peer's incoming requests
                          (SEND/WRITE packets), so we NAK and the peer goes back
      --seed N            seed of the loss (and of the default PSN) (default 1)

bounds (every wait is bounded):
  -t, --timeout S         each TCP message and each completion (default 30)
      --connect-timeout S TCP connect retries / waiting for the peer (default 60)
      --arp-timeout MS    ARP resolution of the peer (default 5000)

pingpong:
  -s, --size N            message size (default 4096)
  -n, --iters N           exchanges (default 10)

xfer:
      --sizes LIST        message sizes, comma-separated (default
                          0,1,1023,1024,1025,4096,65536,1048576)
      --ops LIST          of SEND,SEND_IMM,WRITE,WRITE_IMM (default all)
      --dirs LIST         c2a (to the agent), a2c (from it) (default both)
      --max-size N        agent: largest message it accepts (default 1048576)
      --late-recv-ms N    the receiving side posts each receive N ms after the
                          sender starts, so the sender gets RNR NAKs (default 0)

output:
      --label NAME        case name printed in the summary line
  -v, --verbose           print every step and exchange
  -h, --help              this text

The last line is "INC_RC_PEER PASS|FAIL label=... mode=... role=... bytes=...
retransmits=... timeouts=..." with our QP and NIC counters.
exit status: 0 pass, 1 transfer or check failed (or the peer reported a
failure), 2 usage error, 3 setup failed (interface, ARP, TCP, timeout).
)";

namespace {

std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string str(s);
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(str.c_str(), &end, 0);
  if (errno != 0 || end == str.c_str() || *end != '\0' || str[0] == '-') return std::nullopt;
  return v;
}

std::optional<double> parse_rate(std::string_view s) {
  const std::string str(s);
  char* end = nullptr;
  const double v = std::strtod(str.c_str(), &end);
  if (end == str.c_str() || *end != '\0' || !(v >= 0.0 && v <= 1.0)) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const size_t c = s.find(',');
    out.push_back(s.substr(0, c));
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  return out;
}

enum LongOnly : int {
  kIp = 256,
  kMac,
  kQpn,
  kPsn,
  kUdpSport,
  kRto,
  kRetry,
  kWindow,
  kTxLoss,
  kAckLoss,
  kRxLoss,
  kSeed,
  kConnectTimeout,
  kArpTimeout,
  kSizes,
  kOps,
  kDirs,
  kMaxSize,
  kLateRecv,
  kLabel,
};

}  // namespace

ParsedOptions parse_options(int argc, char** argv) {
  ParsedOptions r;
  Options& o = r.options;
  auto fail = [&](const std::string& msg) {
    r.error = msg;
    return r;
  };
  if (argc < 2) return fail("missing MODE (pingpong or xfer)");
  const std::string_view mode = argv[1];
  if (mode == "-h" || mode == "--help") {
    o.help = true;
    return r;
  }
  if (mode == "pingpong") {
    o.mode = Mode::kPingpong;
  } else if (mode == "xfer") {
    o.mode = Mode::kXfer;
  } else {
    return fail("unknown mode '" + std::string(mode) + "' (pingpong or xfer)");
  }

  static constexpr option kLong[] = {
      {"iface", required_argument, nullptr, 'I'},
      {"ip", required_argument, nullptr, kIp},
      {"mac", required_argument, nullptr, kMac},
      {"port", required_argument, nullptr, 'p'},
      {"qpn", required_argument, nullptr, kQpn},
      {"psn", required_argument, nullptr, kPsn},
      {"udp-sport", required_argument, nullptr, kUdpSport},
      {"mtu", required_argument, nullptr, 'm'},
      {"rto-ms", required_argument, nullptr, kRto},
      {"retry", required_argument, nullptr, kRetry},
      {"window", required_argument, nullptr, kWindow},
      {"tx-loss", required_argument, nullptr, kTxLoss},
      {"ack-loss", required_argument, nullptr, kAckLoss},
      {"rx-loss", required_argument, nullptr, kRxLoss},
      {"seed", required_argument, nullptr, kSeed},
      {"timeout", required_argument, nullptr, 't'},
      {"connect-timeout", required_argument, nullptr, kConnectTimeout},
      {"arp-timeout", required_argument, nullptr, kArpTimeout},
      {"size", required_argument, nullptr, 's'},
      {"iters", required_argument, nullptr, 'n'},
      {"sizes", required_argument, nullptr, kSizes},
      {"ops", required_argument, nullptr, kOps},
      {"dirs", required_argument, nullptr, kDirs},
      {"max-size", required_argument, nullptr, kMaxSize},
      {"late-recv-ms", required_argument, nullptr, kLateRecv},
      {"label", required_argument, nullptr, kLabel},
      {"verbose", no_argument, nullptr, 'v'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  bool mac_given = false;
  optind = 2;
  int c;
  while ((c = getopt_long(argc, argv, "I:p:m:t:s:n:vh", kLong, nullptr)) != -1) {
    const std::string_view arg = optarg != nullptr ? optarg : "";
    auto number = [&](const char* what, uint64_t lo, uint64_t hi) -> std::optional<uint64_t> {
      auto v = parse_u64(arg);
      if (!v || *v < lo || *v > hi) {
        r.error = std::string(what) + " must be a number in [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "], got '" + std::string(arg) + "'";
        return std::nullopt;
      }
      return v;
    };
    std::optional<uint64_t> v;
    switch (c) {
      case 'h':
        o.help = true;
        return r;
      case 'v':
        o.verbose = true;
        break;
      case 'I':
        o.iface = arg;
        break;
      case kIp: {
        auto ip = vocab::parse_ipv4(arg);
        if (!ip || *ip == 0) return fail("--ip: '" + std::string(arg) + "' is not an IPv4 address");
        o.ip = *ip;
        break;
      }
      case kMac: {
        auto mac = vocab::parse_mac(arg);
        if (!mac || ((*mac)[0] & 1) != 0) {
          return fail("--mac: '" + std::string(arg) + "' is not a unicast MAC address");
        }
        o.mac = *mac;
        mac_given = true;
        break;
      }
      case 'p':
        if (!(v = number("--port", 1, 65535))) return r;
        o.tcp_port = static_cast<uint16_t>(*v);
        break;
      case kQpn:
        if (!(v = number("--qpn", 1, vocab::kQpnMask))) return r;
        o.qpn = static_cast<uint32_t>(*v);
        break;
      case kPsn:
        if (!(v = number("--psn", 0, vocab::kPsnMask))) return r;
        o.psn = static_cast<uint32_t>(*v);
        break;
      case kUdpSport:
        if (!(v = number("--udp-sport", 1, 65535))) return r;
        o.udp_sport = static_cast<uint16_t>(*v);
        break;
      case 'm':
        if (!(v = number("--mtu", 256, 4096))) return r;
        if (!vocab::valid_pmtu(static_cast<uint32_t>(*v))) {
          return fail("--mtu must be one of " + std::string(vocab::kPmtuChoices));
        }
        o.mtu = static_cast<uint16_t>(*v);
        break;
      case kRto:
        if (!(v = number("--rto-ms", 1, 60000))) return r;
        o.rto_ms = static_cast<uint32_t>(*v);
        break;
      case kRetry:
        if (!(v = number("--retry", 0, 7))) return r;
        o.retry = static_cast<uint8_t>(*v);
        break;
      case kWindow:
        if (!(v = number("--window", 1, 4096))) return r;
        o.window = static_cast<uint32_t>(*v);
        break;
      case kTxLoss:
      case kAckLoss:
      case kRxLoss: {
        auto rate = parse_rate(arg);
        if (!rate)
          return fail("loss rates are fractions in [0, 1], got '" + std::string(arg) + "'");
        (c == kTxLoss ? o.tx_loss : c == kAckLoss ? o.ack_loss : o.rx_loss) = *rate;
        break;
      }
      case kSeed:
        if (!(v = number("--seed", 0, UINT64_MAX))) return r;
        o.seed = *v;
        break;
      case 't':
        if (!(v = number("--timeout", 1, 3600))) return r;
        o.timeout_s = static_cast<uint32_t>(*v);
        break;
      case kConnectTimeout:
        if (!(v = number("--connect-timeout", 1, 3600))) return r;
        o.connect_timeout_s = static_cast<uint32_t>(*v);
        break;
      case kArpTimeout:
        if (!(v = number("--arp-timeout", 1, 600000))) return r;
        o.arp_timeout_ms = static_cast<uint32_t>(*v);
        break;
      case 's':
        if (!(v = number("--size", 0, 1u << 30))) return r;
        o.size = static_cast<uint32_t>(*v);
        break;
      case 'n':
        if (!(v = number("--iters", 1, 1000000))) return r;
        o.iters = static_cast<uint32_t>(*v);
        break;
      case kSizes: {
        o.sizes.clear();
        for (auto s : split(arg)) {
          auto n = parse_u64(s);
          if (!n || *n > (1u << 30)) return fail("--sizes: '" + std::string(s) + "' is not a size");
          o.sizes.push_back(static_cast<uint32_t>(*n));
        }
        if (o.sizes.empty()) return fail("--sizes is empty");
        break;
      }
      case kOps: {
        o.ops.clear();
        for (auto s : split(arg)) {
          auto op = parse_xfer_op(s);
          if (!op) return fail("--ops: unknown operation '" + std::string(s) + "'");
          o.ops.push_back(*op);
        }
        if (o.ops.empty()) return fail("--ops is empty");
        break;
      }
      case kDirs: {
        o.dirs.clear();
        for (auto s : split(arg)) {
          if (s == "c2a") {
            o.dirs.push_back(XferDir::kToAgent);
          } else if (s == "a2c") {
            o.dirs.push_back(XferDir::kToController);
          } else {
            return fail("--dirs: '" + std::string(s) + "' is neither c2a nor a2c");
          }
        }
        if (o.dirs.empty()) return fail("--dirs is empty");
        break;
      }
      case kMaxSize:
        if (!(v = number("--max-size", 0, 1u << 30))) return r;
        o.max_size = static_cast<uint32_t>(*v);
        break;
      case kLateRecv:
        if (!(v = number("--late-recv-ms", 0, 10000))) return r;
        o.late_recv_ms = static_cast<uint32_t>(*v);
        break;
      case kLabel:
        o.label = arg;
        break;
      default:
        return fail("unknown option (see --help)");
    }
  }
  if (optind < argc) o.peer = argv[optind++];
  if (optind < argc) return fail("unexpected argument '" + std::string(argv[optind]) + "'");
  if (o.iface.empty()) return fail("--iface is required");
  if (o.ip == 0) return fail("--ip is required (the endpoint's own address, not the kernel's)");
  if (!mac_given) {
    o.mac = {0x02,
             0x00,
             static_cast<uint8_t>(o.ip >> 24),
             static_cast<uint8_t>(o.ip >> 16),
             static_cast<uint8_t>(o.ip >> 8),
             static_cast<uint8_t>(o.ip)};
  }
  if (o.tcp_port == 0)
    o.tcp_port = o.mode == Mode::kPingpong ? kPingpongDefaultPort : kXferDefaultPort;
  if (o.label.empty()) o.label = o.mode == Mode::kPingpong ? "pingpong" : "xfer";
  return r;
}

}  // namespace epic::tools::rc_peer
