// inc-rc-peer pingpong: ibv_rc_pingpong's out-of-band exchange (pingpong_wire.h)
// and its message loop — the client sends first; each side sends its next
// message once its previous send completed and the peer's message arrived.
//
// Data: we send message m (counting both directions from 0) filled with
// pattern(kSeedBase + m). A real ibv_rc_pingpong echoes: it sends back the
// buffer it last received (its first message, as a client, is 0x7b bytes);
// another inc-rc-peer sends fresh patterns. The first non-empty message
// received tells which, and every message after must match exactly.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "host/transport/soft/io/tcp_channel.h"
#include "proto/vocab/addr.h"
#include "tools/inc-rc-peer/modes.h"
#include "tools/inc-rc-peer/pattern.h"

namespace epic::tools::rc_peer {
namespace {

constexpr uint32_t kSeedBase = 0x5050;
constexpr uint8_t kPingpongInitialByte = 0x7b;  // rc_pingpong's memset of its buffer

enum class PeerKind { kUnknown, kEcho, kFresh };

struct PingpongState {
  PeerKind peer = PeerKind::kUnknown;
  uint64_t failures = 0;
};

// Checks received message m (size bytes at p) against what the peer may send.
void check_message(PingpongState& st, const uint8_t* p, uint32_t size, uint32_t m, bool verbose) {
  if (size == 0) return;
  auto echo_ok = [&] {
    if (m == 0) {
      for (uint32_t i = 0; i < size; ++i) {
        if (p[i] != kPingpongInitialByte) return false;
      }
      return true;
    }
    return pattern_mismatch(p, size, kSeedBase + m - 1) == size;
  };
  auto fresh_ok = [&] { return pattern_mismatch(p, size, kSeedBase + m) == size; };
  if (st.peer == PeerKind::kUnknown) {
    if (echo_ok()) {
      st.peer = PeerKind::kEcho;
    } else if (fresh_ok()) {
      st.peer = PeerKind::kFresh;
    }
    if (verbose && st.peer != PeerKind::kUnknown) {
      std::printf("inc-rc-peer: the peer %s\n", st.peer == PeerKind::kEcho
                                                    ? "echoes (ibv_rc_pingpong)"
                                                    : "sends fresh patterns (inc-rc-peer)");
    }
  }
  const bool ok =
      st.peer == PeerKind::kEcho ? echo_ok() : st.peer == PeerKind::kFresh && fresh_ok();
  if (!ok) {
    ++st.failures;
    const size_t at = st.peer == PeerKind::kFresh ? pattern_mismatch(p, size, kSeedBase + m)
                      : m == 0                    ? 0
                                                  : pattern_mismatch(p, size, kSeedBase + m - 1);
    std::printf(
        "inc-rc-peer: FAIL: message %u (%u bytes) differs from what the peer should "
        "send (first difference near byte %zu: 0x%02x)\n",
        m, size, at, p[at < size ? at : 0]);
  }
}

}  // namespace

int run_pingpong(const Options& o) {
  const bool client = !o.peer.empty();
  const std::string role = client ? "client" : "server";
  auto opened = Session::open(o);
  if (!opened.ok()) return finish(o, nullptr, role, 0, 0, opened.error, true);
  Session& s = *opened.value;
  auto fail_setup = [&](const std::string& e) { return finish(o, &s, role, 0, 0, e, true); };

  PingpongDest me;
  me.qpn = o.qpn;
  me.psn = s.local_psn();
  me.gid = s.local_gid();
  std::printf("  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", me.lid, me.qpn,
              me.psn, format_gid(me.gid).c_str());
  std::fflush(stdout);

  // Buffers: one send buffer, two receive buffers (strict ping-pong: at most
  // one message in flight per direction).
  std::vector<uint8_t> send_buf(o.size), recv_buf[2];
  for (auto& b : recv_buf) b.assign(o.size + kGuardLen, kGuardByte);
  auto post_recv = [&](int i) {
    std::memset(recv_buf[i].data(), kGuardByte, recv_buf[i].size());
    return s.post_recv({static_cast<uint64_t>(i), recv_buf[i].data(), o.size});
  };

  const auto t = s.wait_timeout();
  PingpongDest remote;
  auto connect_qp = [&](const PingpongDest& r) -> io::Status {
    io::Status st = s.connect({r.qpn, r.psn, r.gid});
    if (!st.ok()) return st;
    for (int i = 0; i < 2; ++i) {
      st = post_recv(i);
      if (!st.ok()) return st;
    }
    return io::Status::success();
  };
  const auto msg = format_pingpong_dest(me);
  if (client) {
    auto ch = io::TcpChannel::connect(s.nic(), o.peer, o.tcp_port, s.connect_timeout());
    if (!ch.ok()) return fail_setup(ch.error);
    io::Status st = ch.value->write(msg.data(), msg.size(), t);
    if (!st.ok()) return fail_setup(st.error);
    auto in = ch.value->read(kPingpongMsgLen, t, "the server's LID:QPN:PSN:GID");
    if (!in.ok()) return fail_setup(in.error);
    auto r = parse_pingpong_dest(reinterpret_cast<const char*>(in.value.data()), in.value.size());
    if (!r) return fail_setup("malformed address message from the server");
    remote = *r;
    st = ch.value->write(kPingpongDone.data(), kPingpongDone.size(), t);
    if (!st.ok()) return fail_setup(st.error);
    ch.value->close();
    st = connect_qp(remote);
    if (!st.ok()) return fail_setup(st.error);
  } else {
    std::printf("inc-rc-peer: waiting for ibv_rc_pingpong on TCP port %u\n", o.tcp_port);
    std::fflush(stdout);
    auto ch = io::TcpChannel::accept(s.nic(), o.tcp_port, s.connect_timeout());
    if (!ch.ok()) return fail_setup(ch.error);
    auto in = ch.value->read(kPingpongMsgLen, t, "the client's LID:QPN:PSN:GID");
    if (!in.ok()) return fail_setup(in.error);
    auto r = parse_pingpong_dest(reinterpret_cast<const char*>(in.value.data()), in.value.size());
    if (!r) return fail_setup("malformed address message from the client");
    remote = *r;
    io::Status st = connect_qp(remote);  // ready before the client learns our address
    if (!st.ok()) return fail_setup(st.error);
    st = ch.value->write(msg.data(), msg.size(), t);
    if (!st.ok()) return fail_setup(st.error);
    auto done = ch.value->read(kPingpongDone.size(), t, "the client's \"done\"");
    if (!done.ok()) return fail_setup(done.error);
  }
  std::printf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", remote.lid,
              remote.qpn, remote.psn, format_gid(remote.gid).c_str());
  std::fflush(stdout);

  // The loop of rc_pingpong's parse_single_wc(): send when nothing is pending.
  PingpongState st;
  uint32_t scnt = 0, rcnt = 0;
  bool send_pending = false, recv_pending = true;
  auto next_send = [&]() -> io::Status {
    const uint32_t m = client ? 2 * scnt : 2 * scnt + 1;
    pattern_fill(send_buf.data(), o.size, kSeedBase + m);
    soft::SendWr wr;
    wr.wr_id = 2;
    wr.op = soft::SendOp::kSend;
    wr.data = send_buf.data();
    wr.length = o.size;
    send_pending = recv_pending = true;
    return s.post_send(wr);
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  if (client) {
    io::Status ps = next_send();
    if (!ps.ok()) error = ps.error;
  }
  while (error.empty() && (rcnt < o.iters || scnt < o.iters)) {
    auto c = s.wait_completion([](const soft::Completion&) { return true; },
                               "the next pingpong completion (sent " + std::to_string(scnt) +
                                   ", received " + std::to_string(rcnt) + " of " +
                                   std::to_string(o.iters) + ")");
    if (!c.ok()) {
      if (client && rcnt == o.iters && scnt + 1 == o.iters) {
        // Our last message was echoed, so the peer has it; only its ACK went missing, and
        // ibv_rc_pingpong as the server exits (destroying its QP) once it has sent that echo,
        // so our retransmissions go unanswered. The race of rc_pingpong itself
        // (docs/soft-rc-endpoint.md): every message arrived, the exchange is complete.
        std::printf(
            "inc-rc-peer: our last send was echoed but never acknowledged (the peer "
            "exited first): %s\n",
            c.error.c_str());
        ++scnt;
        break;
      }
      error = c.error;
      break;
    }
    if (c.value.opcode == soft::WcOpcode::kSend) {
      ++scnt;
      send_pending = false;
    } else {
      const int i = static_cast<int>(c.value.wr_id);
      const uint32_t m = client ? 2 * rcnt + 1 : 2 * rcnt;
      if (c.value.byte_len != o.size) {
        ++st.failures;
        std::printf("inc-rc-peer: FAIL: message %u has %u bytes, expected %u\n", m,
                    c.value.byte_len, o.size);
      }
      check_message(st, recv_buf[i].data(), o.size, m, o.verbose);
      for (size_t g = o.size; g < recv_buf[i].size(); ++g) {
        if (recv_buf[i][g] != kGuardByte) {
          ++st.failures;
          std::printf("inc-rc-peer: FAIL: message %u wrote past its end (byte %zu)\n", m, g);
          break;
        }
      }
      ++rcnt;
      recv_pending = false;
      io::Status ps = post_recv(i);
      if (!ps.ok()) {
        error = ps.error;
        break;
      }
    }
    if (scnt < o.iters && !send_pending && !recv_pending) {
      io::Status ps = next_send();
      if (!ps.ok()) error = ps.error;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t bytes = uint64_t{o.size} * o.iters * 2;
  if (error.empty()) {
    std::printf("%llu bytes in %.2f seconds = %.2f Mbit/sec\n",
                static_cast<unsigned long long>(bytes), secs,
                secs > 0 ? bytes * 8 / secs / 1e6 : 0);
    std::printf("%u iters in %.2f seconds = %.2f usec/iter\n", o.iters, secs, secs * 1e6 / o.iters);
    // The peer may still need an ACK repeated (its last one, or ours, lost).
    s.linger(
        std::chrono::milliseconds(o.tx_loss > 0 || o.ack_loss > 0 || o.rx_loss > 0 ? 1500 : 300));
  }
  const char* kind = st.peer == PeerKind::kEcho    ? "peer=echo"
                     : st.peer == PeerKind::kFresh ? "peer=fresh"
                                                   : "peer=unchecked";
  return finish(
      o, &s, role, bytes, st.failures, error, false,
      std::string(kind) + " size=" + std::to_string(o.size) + " iters=" + std::to_string(o.iters));
}

}  // namespace epic::tools::rc_peer
