// inc-rc-peer xfer (no AGENT argument): the agent side of EPICXFER1
// (xfer_wire.h), as deploy/lab/rxe_xfer.c is in a Soft-RoCE guest — it obeys
// the controller's STEPs, checks what it receives and reports RESULTs.
#include <chrono>
#include <cinttypes>
#include <cstdio>

#include "host/transport/soft/io/tcp_channel.h"
#include "tools/inc-rc-peer/modes.h"
#include "tools/inc-rc-peer/pattern.h"
#include "tools/inc-rc-peer/xfer_channel.h"
#include "tools/inc-rc-peer/xfer_common.h"

namespace epic::tools::rc_peer {
namespace {

constexpr uint32_t kRkey = 0x00A6E201;

}  // namespace

int run_xfer_agent(const Options& o) {
  const std::string role = "agent";
  auto opened = Session::open(o);
  if (!opened.ok()) return finish(o, nullptr, role, 0, 0, opened.error, true);
  Session& s = *opened.value;
  auto fail_setup = [&](const std::string& e) { return finish(o, &s, role, 0, 0, e, true); };
  const auto t = s.wait_timeout();
  XferMemory mem(o.max_size);

  std::printf("inc-rc-peer: xfer agent waiting for a controller on TCP port %u\n", o.tcp_port);
  std::fflush(stdout);
  auto ch = io::TcpChannel::accept(s.nic(), o.tcp_port, s.connect_timeout());
  if (!ch.ok()) return fail_setup(ch.error);
  io::TcpChannel& c = *ch.value;
  auto in = recv_xfer(c, t, "the controller's EPICXFER1 parameters");
  if (!in.ok()) return fail_setup(in.error);
  auto peer = parse_xfer_params(in.value);
  if (!peer) return fail_setup("malformed parameters from the controller: '" + in.value + "'");
  io::Status st = s.connect({peer->qpn, peer->psn, peer->gid});
  if (!st.ok()) return fail_setup(st.error);
  s.qp().register_mr(mem.region(kRkey));
  XferParams me{o.qpn, s.local_psn(), kRkey, mem.window_va(), mem.window_len(), s.local_gid()};
  if (!(st = send_xfer(c, format_xfer_params(me), t)).ok()) return fail_setup(st.error);

  uint64_t failures = 0, bytes = 0, steps = 0;
  std::string error;
  while (error.empty()) {
    auto m = recv_xfer(c, t, "the controller's next STEP");
    if (!m.ok()) {
      error = m.error;
      break;
    }
    if (m.value == "END") {
      st = send_xfer(c, "BYE " + std::to_string(failures), t);
      if (!st.ok()) error = st.error;
      break;
    }
    auto step = parse_xfer_step(m.value);
    if (!step) {
      error = "malformed message from the controller: '" + m.value + "'";
      break;
    }
    ++steps;
    const std::string id = std::to_string(step->id);
    const std::string name = "step " + id + " " + std::string(to_string(step->op)) + " " +
                             std::string(to_string(step->dir)) + " " + std::to_string(step->size);
    std::string verdict;
    const bool to_us = step->dir == XferDir::kToAgent;
    verdict = step_fits(*step, to_us ? mem.window_len() : peer->len);
    if (verdict.empty() && to_us) {
      prepare_receiver_bytes(*step, mem);
      const bool wants_recv = step->op != XferOp::kWrite;
      auto post = [&] {
        st = s.post_recv({step->id, mem.recv_area(), static_cast<uint32_t>(mem.window_len())});
        if (!st.ok()) verdict = st.error;
      };
      if (wants_recv && step->late_ms == 0) post();
      if (verdict.empty()) {
        if (!(st = send_xfer(c, "READY " + id, t)).ok()) {
          error = st.error;
          break;
        }
        if (wants_recv && step->late_ms > 0) {  // the controller's sends meet RNR NAKs meanwhile
          s.linger(std::chrono::milliseconds(step->late_ms));
          post();
        }
        auto check = recv_xfer(c, t, "CHECK of " + name);
        if (!check.ok()) {
          error = check.error;
          break;
        }
        if (check.value != "CHECK " + id) {
          error = "expected 'CHECK " + id + "', got '" + check.value + "'";
          break;
        }
        if (step->op != XferOp::kWrite) {
          auto rc = s.wait_recv(name);
          verdict = rc.ok() ? check_recv_completion(rc.value, *step) : rc.error;
        }
        if (verdict.empty()) {
          const uint8_t* p = op_is_write(step->op) ? mem.window() + step->offset : mem.recv_area();
          verdict = check_bytes(p, step->size, step->seed);
        }
      }
    } else if (verdict.empty()) {
      pattern_fill(mem.send_area(), step->size, step->seed);
      st = s.post_send(step_send_wr(*step, mem.send_area(), peer->va, peer->rkey));
      if (!st.ok()) {
        verdict = st.error;
      } else {
        auto done = s.wait_send(name);
        if (!done.ok()) verdict = done.error;
      }
    }
    if (!verdict.empty()) ++failures;
    bytes += step->size;
    if (o.verbose || !verdict.empty()) {
      std::printf("inc-rc-peer: %-30s %s%s%s\n", name.c_str(), verdict.empty() ? "PASS" : "FAIL",
                  verdict.empty() ? "" : ": ", verdict.c_str());
      std::fflush(stdout);
    }
    st = send_xfer(c, "RESULT " + id + (verdict.empty() ? " PASS" : " FAIL " + verdict), t);
    if (!st.ok()) error = st.error;
  }
  return finish(o, &s, role, bytes, failures, error, false, "steps=" + std::to_string(steps));
}

}  // namespace epic::tools::rc_peer
