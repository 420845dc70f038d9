// inc-rc-peer xfer AGENT: the controller of the EPICXFER1 matrix
// (xfer_wire.h). For every op x direction x size it runs one step, checks its
// own side and collects the agent's verdict, and prints one line per step.
#include <algorithm>
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

constexpr uint32_t kRkey = 0x00C0DE01;

std::vector<XferStep> plan_steps(const Options& o) {
  std::vector<XferStep> steps;
  uint32_t id = 0;
  for (XferOp op : o.ops) {
    for (XferDir dir : o.dirs) {
      for (uint32_t size : o.sizes) {
        XferStep s;
        s.id = ++id;
        s.op = op;
        s.dir = dir;
        s.size = size;
        s.seed = id * 7 + 3;
        s.imm = 0xE1C00000u | id;
        s.offset = op_is_write(op) ? (id * 61) % kMaxWriteOffset : 0;
        s.late_ms = op == XferOp::kWrite ? 0 : o.late_recv_ms;  // a WRITE consumes no receive
        steps.push_back(s);
      }
    }
  }
  return steps;
}

// What one step came to: `error` ends the run (the exchange broke); `ours`
// and `theirs` are the two sides' verdicts ("" = pass).
struct StepOutcome {
  std::string ours, theirs, error;
};

// "RESULT <id> PASS" -> ""; "RESULT <id> FAIL <why>" -> why; else an error.
StepOutcome parse_result(const std::string& text, uint32_t id) {
  unsigned got = 0;
  char verdict[8] = {};
  int n = 0;
  StepOutcome r;
  if (std::sscanf(text.c_str(), "RESULT %u %7s %n", &got, verdict, &n) < 2 || got != id) {
    r.error = "malformed answer from the agent: '" + text + "'";
  } else if (std::string_view(verdict) != "PASS") {
    r.theirs = text.substr(static_cast<size_t>(n));
    if (r.theirs.empty()) r.theirs = "FAIL";
  }
  return r;
}

class Controller {
 public:
  Controller(Session& s, io::TcpChannel& c, XferMemory& mem, const XferParams& peer)
      : s_(s), c_(c), mem_(mem), peer_(peer), t_(s.wait_timeout()) {}

  // controller -> agent: READY, send, CHECK, RESULT.
  StepOutcome to_agent(const XferStep& step, const std::string& name) {
    StepOutcome r;
    if (!(st_ = send_xfer(c_, format_xfer_step(step), t_)).ok()) return fail(st_.error);
    auto ready = recv_xfer(c_, t_, "READY for " + name);
    if (!ready.ok()) return fail(ready.error);
    if (ready.value != "READY " + std::to_string(step.id)) {  // the agent refused the step
      r = parse_result(ready.value, step.id);
      if (r.error.empty() && r.theirs.empty()) r.error = "agent answered '" + ready.value + "'";
      return r;
    }
    pattern_fill(mem_.send_area(), step.size, step.seed);
    st_ = s_.post_send(step_send_wr(step, mem_.send_area(), peer_.va, peer_.rkey));
    if (!st_.ok()) return fail(name + ": " + st_.error);
    auto done = s_.wait_send(name);
    if (!done.ok()) return fail(name + ": " + done.error);
    if (!(st_ = send_xfer(c_, "CHECK " + std::to_string(step.id), t_)).ok()) return fail(st_.error);
    auto res = recv_xfer(c_, t_, "the agent's RESULT of " + name);
    if (!res.ok()) return fail(res.error);
    return parse_result(res.value, step.id);
  }

  // agent -> controller: prepare, STEP, [late receive], RESULT, check our side.
  StepOutcome to_controller(const XferStep& step, const std::string& name) {
    prepare_receiver_bytes(step, mem_);
    const bool wants_recv = step.op != XferOp::kWrite;
    if (wants_recv && step.late_ms == 0 && !post_recv(step)) return fail(name + ": " + st_.error);
    if (!(st_ = send_xfer(c_, format_xfer_step(step), t_)).ok()) return fail(st_.error);
    if (wants_recv && step.late_ms > 0) {  // meanwhile our responder answers RNR NAKs
      s_.linger(std::chrono::milliseconds(step.late_ms));
      if (!post_recv(step)) return fail(name + ": " + st_.error);
    }
    auto res = recv_xfer(c_, t_, "the agent's RESULT of " + name);
    if (!res.ok()) return fail(res.error);
    StepOutcome r = parse_result(res.value, step.id);
    if (!r.error.empty() || !r.theirs.empty()) return r;
    if (wants_recv) {
      auto rc = s_.wait_recv(name);
      if (!rc.ok()) return fail(name + ": " + rc.error);
      r.ours = check_recv_completion(rc.value, step);
    }
    if (r.ours.empty()) {
      const uint8_t* p = op_is_write(step.op) ? mem_.window() + step.offset : mem_.recv_area();
      r.ours = check_bytes(p, step.size, step.seed);
    }
    return r;
  }

 private:
  static StepOutcome fail(std::string e) {
    StepOutcome r;
    r.error = std::move(e);
    return r;
  }
  bool post_recv(const XferStep& step) {
    st_ = s_.post_recv({step.id, mem_.recv_area(), static_cast<uint32_t>(mem_.window_len())});
    return st_.ok();
  }

  Session& s_;
  io::TcpChannel& c_;
  XferMemory& mem_;
  const XferParams peer_;
  const std::chrono::milliseconds t_;
  io::Status st_;
};

}  // namespace

int run_xfer_controller(const Options& o) {
  const std::string role = "controller";
  auto opened = Session::open(o);
  if (!opened.ok()) return finish(o, nullptr, role, 0, 0, opened.error, true);
  Session& s = *opened.value;
  auto fail_setup = [&](const std::string& e) { return finish(o, &s, role, 0, 0, e, true); };
  const auto t = s.wait_timeout();

  const std::vector<XferStep> steps = plan_steps(o);
  uint32_t max_size = 0;
  for (const auto& st : steps) max_size = std::max(max_size, st.size);
  XferMemory mem(max_size);

  auto ch = io::TcpChannel::connect(s.nic(), o.peer, o.tcp_port, s.connect_timeout());
  if (!ch.ok()) return fail_setup(ch.error);
  io::TcpChannel& c = *ch.value;
  const XferParams me{o.qpn,           s.local_psn(),    kRkey,
                      mem.window_va(), mem.window_len(), s.local_gid()};
  io::Status st = send_xfer(c, format_xfer_params(me), t);
  if (!st.ok()) return fail_setup(st.error);
  auto in = recv_xfer(c, t, "the agent's EPICXFER1 parameters");
  if (!in.ok()) return fail_setup(in.error);
  auto peer = parse_xfer_params(in.value);
  if (!peer) return fail_setup("malformed parameters from the agent: '" + in.value + "'");
  st = s.connect({peer->qpn, peer->psn, peer->gid});
  if (!st.ok()) return fail_setup(st.error);
  s.qp().register_mr(mem.region(kRkey));
  std::printf("inc-rc-peer: xfer with agent %s: QPN 0x%06x PSN 0x%06x GID %s, window %" PRIu64
              " bytes; %zu steps\n",
              c.peer().c_str(), peer->qpn, peer->psn, format_gid(peer->gid).c_str(), peer->len,
              steps.size());

  Controller ctl(s, c, mem, *peer);
  uint64_t failures = 0, bytes = 0;
  std::string error;
  for (const XferStep& step : steps) {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t retrans0 = s.retransmits();
    const std::string name = "step " + std::to_string(step.id) + " " +
                             std::string(to_string(step.op)) + " " +
                             std::string(to_string(step.dir)) + " " + std::to_string(step.size);
    const bool to_agent = step.dir == XferDir::kToAgent;
    error = step_fits(step, to_agent ? peer->len : mem.window_len());
    if (!error.empty()) break;
    const StepOutcome r = to_agent ? ctl.to_agent(step, name) : ctl.to_controller(step, name);
    if (!r.error.empty()) {
      error = r.error;
      break;
    }
    const bool pass = r.ours.empty() && r.theirs.empty();
    if (!pass) ++failures;
    bytes += step.size;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("inc-rc-peer: %-30s %s  %.3f s  retransmits +%" PRIu64 "%s%s%s%s\n", name.c_str(),
                pass ? "PASS" : "FAIL", secs, s.retransmits() - retrans0,
                r.ours.empty() ? "" : "  ours: ", r.ours.c_str(),
                r.theirs.empty() ? "" : "  agent: ", r.theirs.c_str());
  }
  std::string extra = "steps=" + std::to_string(steps.size());
  if (error.empty()) {
    // The agent counts its own failures; they already failed their steps here.
    auto bye = (st = send_xfer(c, "END", t)).ok() ? recv_xfer(c, t, "the agent's BYE")
                                                  : io::make_error<std::string>(st.error);
    unsigned agent_failures = 0;
    if (!bye.ok()) {
      error = bye.error;
    } else if (std::sscanf(bye.value.c_str(), "BYE %u", &agent_failures) != 1) {
      error = "malformed BYE '" + bye.value + "'";
    } else {
      extra += " agent_failures=" + std::to_string(agent_failures);
    }
  }
  return finish(o, &s, role, bytes, failures, error, false, extra);
}

}  // namespace epic::tools::rc_peer
