#include "datapath/engine/mode3.h"

#include "datapath/engine/aggregate_data.h"
#include "datapath/engine/locate_upload.h"
#include "datapath/engine/replicate_data.h"
#include "datapath/engine/straggler.h"
#include "datapath/engine/translate_psn.h"
#include "proto/vocab/aeth.h"
#include "proto/vocab/psn.h"

namespace epic::engine::mode3 {

namespace {

namespace aeth = vocab::aeth;
constexpr uint8_t kAck = aeth::kAckUnlimitedCredits;

bool is_root(const GroupState& g) { return !g.config->parent; }

// The Pipe whose out-endpoints are the children: the root's only Pipe, elsewhere `down`.
PipeState& children_pipe(GroupState& g) { return is_root(g) ? g.mode3->up : g.mode3->down; }

// The Pipe edge `e` is an out-endpoint of, and its index there.
PipeState& out_pipe(GroupState& g, size_t e) {
  return e == kParentEdge ? g.mode3->up : children_pipe(g);
}
int out_index(size_t e) { return e == kParentEdge ? 0 : static_cast<int>(e); }

void send_ack_on(const GroupState& g, size_t e, uint32_t psn, uint8_t syndrome, Actions& a) {
  if (e == kParentEdge) {
    a.send_ack(*g.config->parent, psn, syndrome, *g.config);
  } else {
    a.send_ack(g.config->children[e], psn, syndrome, *g.config);
  }
}

void owe_ack(GroupState& g, Mode3Edge& e, Actions& a, Loop& loop) {
  if (e.ack_due) return;
  if (loop.acks.push(&e)) {
    e.ack_due = true;
  } else {  // more edges than the list holds (cannot happen: one entry per edge): send now
    send_ack_on(g, e.edge, hop_acked_psn(e.in), kAck, a);
    ++a.counters.hop_acks_sent;
  }
}

// Whether out-endpoint `e` of the Pipe the packet is in receives packet `ref`: the parent
// every packet this subtree sends (the partials), a child what the ranks below it receive.
bool edge_receives(const GroupState& g, size_t e, const PacketRef& ref) {
  if (ref.control) return true;
  if (e == kParentEdge) return ref.record->shape.sends_any(g.subtree_first, g.subtree_ranks, ref.j);
  return child_receives(g, e, ref);
}

// Whether some in-endpoint of the Pipe sends `ref` to it: for `up` a child whose ranks send
// it; for `down` the parent, which sends what the ranks below this switch receive.
bool arrives(const GroupState& g, bool up, const PacketRef& ref) {
  if (ref.control) return true;
  if (up) return fan_in(g, ref) > 0;
  return ref.record->shape.receives_any(g.subtree_first, g.subtree_ranks, ref.j);
}

// The Pipe's stored result of `psn` (complete and in range), as ReplicateData sends it.
Payload entry_payload(const PipeState& pipe, uint32_t psn) {
  const uint32_t i = pipe_entry(pipe, psn);
  const Slot& s = pipe.entries->meta[i];
  return {s.opcode, s.immdt, pipe.entries->result_of(i), s.payload_len, s.ecn};
}

// Sends `psn`'s result (packet `ref`) up to the parent, numbered in this switch's send sequence.
void send_entry_up(const GroupState& g, const PipeState& pipe, uint32_t psn, const PacketRef& ref,
                   Actions& a) {
  send_up(g, send_psn(g, kParentEdge, ref), entry_payload(pipe, psn), a);
}

void count_recycled(const PipeAckResult& r, Actions& a) {
  a.counters.pipe_entries_recycled += r.recycled;
}

// Sends on what the Pipe has ready, in PSN order, stepping over holes; at most kPumpBudget
// PSNs, the rest at the next poll.
void pump(GroupState& g, bool up, Actions& a, Loop& loop) {
  Mode3State& st = *g.mode3;
  if (st.failed) return;
  PipeState& pipe = up ? st.up : st.down;
  const bool to_parent = up && !is_root(g);
  for (uint32_t budget = kPumpBudget; budget > 0; --budget) {
    const uint32_t psn = vocab::psn_add(pipe.max_psn_sent, 1);
    if (!pipe_may_send(pipe, psn)) return;  // out of range or the send window is full
    const PacketRef ref = locate_group(g, psn);
    if (!ref.known()) return;  // not announced here yet
    uint64_t receivers = 0;
    if (arrives(g, up, ref)) {
      if (pipe_result(pipe, psn) == nullptr) return;  // not complete yet
      if (to_parent) {
        send_entry_up(g, pipe, psn, ref, a);
        hop_sent(st.edges[kParentEdge].out, loop.wheel, loop.now_ns, st.policy);
        receivers = 1;
        ++a.counters.partials_sent_up;
      } else {
        replicate_data(g, ref, entry_payload(pipe, psn), Fanout::kFirst, a);
        for (size_t c = 0; c < g.config->children.size(); ++c) {
          if (!child_receives(g, c, ref)) continue;
          hop_sent(st.edges[c].out, loop.wheel, loop.now_ns, st.policy);
          receivers |= uint64_t{1} << c;
        }
      }
      ++a.counters.hop_sent;
    }
    count_recycled(pipe_sent_to(pipe, psn, receivers), a);
  }
  if (!st.pump_due && loop.pumps.push(&g)) st.pump_due = true;
}

void pump_both(GroupState& g, Actions& a, Loop& loop) {
  pump(g, true, a, loop);
  if (!is_root(g)) pump(g, false, a, loop);
}

// The group's collectives are over: a hop passed its retry limit. Its timers stop at their
// next expiry; every frame of the group is dropped from now on.
void fail(GroupState& g, Actions& a) {
  if (g.mode3->failed) return;
  g.mode3->failed = true;
  ++a.counters.hop_failures;
  ++g.stats.hop_failures;
}

// Retransmits to edge `e` the PSNs of `run` it receives (at most kResendBudget of them).
void resend(GroupState& g, size_t e, const PipeState& pipe, const PsnRun& run, Actions& a) {
  const uint32_t count = run.count < kResendBudget ? run.count : kResendBudget;
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t psn = vocab::psn_add(run.first, k);
    const PacketRef ref = locate_group(g, psn);
    if (!ref.known() || !edge_receives(g, e, ref) || pipe_result(pipe, psn) == nullptr) continue;
    if (e == kParentEdge) {
      send_entry_up(g, pipe, psn, ref, a);
    } else {
      replicate_data(g, ref, entry_payload(pipe, psn), Fanout::kOne, static_cast<int>(e), a);
    }
    ++a.counters.hop_resent;
    ++g.stats.retransmissions;
  }
}

void act(GroupState& g, size_t e, const PipeState& pipe, const HopStep& step, Actions& a) {
  switch (step.outcome) {
    case HopOutcome::kNothing:
    case HopOutcome::kRefused:  // counted by the caller
      return;
    case HopOutcome::kResend:
      resend(g, e, pipe, step.run, a);
      return;
    case HopOutcome::kFailed:
      fail(g, a);
      return;
  }
}

// Whether edge `e`'s in-endpoint is a rank: only toward a rank does its responder nudge (a
// switch peer's own hop timer is as quick as the nudge would be).
bool nudges_requester(const GroupState& g, const Mode3Edge& e) {
  return e.edge != kParentEdge && g.config->children[e.edge].is_rank;
}

// Starts edge `e`'s quiet check (hop_responder.h's nudge) if it is not running and may nudge.
void watch(GroupState& g, Mode3Edge& e, Loop& loop) {
  if (e.quiet.armed() || e.in.nudges >= kMaxNudges || !nudges_requester(g, e)) return;
  loop.wheel.arm(e.quiet, loop.now_ns, hop_quiet_interval(e.in, g.mode3->policy.timeout_ns));
}

// Sends nudge `what` to edge `e`'s requester and records it.
void nudge(GroupState& g, Mode3Edge& e, HopNudge what, Actions& a, Loop& loop) {
  EngineCounters& n = a.counters;
  switch (what) {
    case HopNudge::kNakSequence:
      send_ack_on(g, e.edge, e.in.epsn, aeth::kNakPsnSequenceError, a);
      ++n.hop_naks_sent;
      break;
    case HopNudge::kNakRnr:
      send_ack_on(g, e.edge, e.in.epsn, aeth::rnr_nak(kNudgeRnrCode), a);
      ++n.hop_rnr_naks_sent;
      break;
    case HopNudge::kAckAgain:
      send_ack_on(g, e.edge, hop_acked_psn(e.in), kAck, a);
      ++n.hop_acks_sent;
      break;
    case HopNudge::kWait:
    case HopNudge::kStop:
      return;
  }
  ++n.hop_nudges;
  hop_nudged(e.in, loop.now_ns, what);
}

// Whether the packet at `psn` on edge `e` is the one its responder takes next; otherwise
// answers it as an RC responder does (ACK again, one NAK per gap, or nothing) — or, when the
// gap has stayed open for a quiet interval while later packets keep coming, nudges.
bool in_order(GroupState& g, Mode3Edge& e, uint32_t psn, Actions& a, Loop& loop) {
  EngineCounters& n = a.counters;
  const uint64_t interval = nudges_requester(g, e) ? g.mode3->policy.timeout_ns : 0;
  const HopAnswer answer = hop_answer(e.in, psn, loop.now_ns, interval);
  hop_heard(e.in, loop.now_ns);
  switch (answer) {
    case HopAnswer::kTake:
      return true;
    case HopAnswer::kAckAgain:
      ++n.hop_ack_again;
      ++g.stats.retransmissions;
      owe_ack(g, e, a, loop);
      return false;
    case HopAnswer::kNakSequence:
      ++n.hop_out_of_order;
      send_ack_on(g, e.edge, e.in.epsn, aeth::kNakPsnSequenceError, a);
      hop_nak_sent(e.in, loop.now_ns, true);
      ++n.hop_naks_sent;
      watch(g, e, loop);
      return false;
    case HopAnswer::kNudge:
      ++n.hop_out_of_order;
      nudge(g, e, hop_nudge_kind(e.in), a, loop);
      return false;
    case HopAnswer::kDropSilently:
      ++n.hop_out_of_order;
      return false;
  }
  return false;
}

// The packet `ref` (frame `m`) at edge `e`'s ePSN into `pipe`, as in-endpoint `in`.
void take(GroupState& g, Mode3Edge& e, bool up, const PacketRef& ref, int in, const PacketMeta& m,
          Actions& a, Loop& loop) {
  EngineCounters& n = a.counters;
  PipeState& pipe = up ? g.mode3->up : g.mode3->down;
  // Only a multi-source data packet on its way up is aggregated; anything else is copied.
  const bool copy = ref.control || !up || !ref.record->shape.multi_source();
  const SlotClaim claim{copy,
                        m.opcode,
                        m.payload_len,
                        ref.control ? kControlImm : 0,
                        ref.record->shape.desc.dtype,
                        ref.record->shape.desc.op};
  const uint16_t fan = up ? fan_in(g, ref) : 1;
  const PipeReceive received =
      pipe_receive(pipe, ref.gpsn(), in, claim, m.payload, m.payload_len, fan);
  switch (received) {
    case PipeReceive::kBeyond:
      ++n.hop_pipe_full;
      send_ack_on(g, e.edge, e.in.epsn, aeth::rnr_nak(kPipeFullRnrCode), a);
      hop_nak_sent(e.in, loop.now_ns, false);  // the requester goes back after the RNR delay
      ++n.hop_rnr_naks_sent;
      return;
    case PipeReceive::kInconsistent:
      drop(g, n.drop_inconsistent);
      return;
    case PipeReceive::kRecycled:
    case PipeReceive::kDuplicate:
    case PipeReceive::kAdded:
      break;
    case PipeReceive::kCompleted:
      ++n.aggregations_completed;
      ++g.stats.aggregations_completed;
      // A data result: aggregated at the root, or received from the parent.
      if (!ref.control && (!up || !g.config->parent)) g.stats.result_bytes += m.payload_len;
      break;
  }
  if (received == PipeReceive::kAdded || received == PipeReceive::kCompleted) {
    note_ecn(pipe.entries->meta[pipe_entry(pipe, ref.gpsn())], m.ecn);
  }
  if (up && (received == PipeReceive::kAdded || received == PipeReceive::kCompleted)) {
    if (time_contribution(g.straggler, ref.gpsn(), in, received == PipeReceive::kCompleted, fan,
                          loop.now_ns) == Timed::kTied) {
      ++g.stats.slots_tied;
    }
  }
  ++n.hop_taken;
  ++(up ? g.stats.upward_accepted : g.stats.downward_accepted);
  hop_taken(e.in, loop.now_ns);
  watch(g, e, loop);
  owe_ack(g, e, a, loop);
  pump(g, up, a, loop);
}

void upload(GroupState& g, const PacketMeta& m, Actions& a, Loop& loop) {
  Mode3Edge& e = g.mode3->edges[m.child_index()];
  if (!in_order(g, e, m.psn, a, loop)) return;
  const PacketRef ref = locate_upload(g, m, a);
  if (!ref.known()) return;
  take(g, e, true, ref, m.child, m, a, loop);
}

void result(GroupState& g, const PacketMeta& m, Actions& a, Loop& loop) {
  EngineCounters& n = a.counters;
  Mode3Edge& e = g.mode3->edges[kParentEdge];
  if (!in_order(g, e, m.psn, a, loop)) return;
  const PacketRef ref = locate_parent_recv(g, m.psn);
  if (!ref.known()) {
    drop(g, n.drop_unknown_psn);
    return;
  }
  if (ref.control != m.control ||
      (!ref.control && (m.payload_len != ref.record->shape.payload_len(ref.j) || m.has_immdt))) {
    drop(g, n.drop_inconsistent);
    return;
  }
  take(g, e, false, ref, 0, m, a, loop);
}

// The packet at `psn` of the sequence edge `e` receives from this switch.
PacketRef locate_out(const GroupState& g, size_t e, uint32_t psn) {
  return e == kParentEdge ? locate_parent_send(g, psn) : locate_recv(g, static_cast<int>(e), psn);
}

// Edge `e` says it has everything up to `have` of the sequence it receives from us: in group
// PSNs, everything up to the packet before the next one it receives (the PSNs between are
// holes for it), at most the Pipe's maxPsnSent. False when `have` is no packet we know, or one
// never sent.
bool acked_in_group(const GroupState& g, size_t e, const PipeState& pipe, uint32_t have,
                    uint32_t& acked) {
  const PacketRef ref = locate_out(g, e, have);
  if (!ref.known() || vocab::psn_gt(ref.gpsn(), pipe.max_psn_sent)) return false;
  const uint32_t after = vocab::psn_add(have, 1);
  const PacketRef next = locate_out(g, e, after);
  const uint32_t end = e == kParentEdge ? g.next_send_ctrl[kParentEdge] : g.next_recv_ctrl[e];
  uint32_t next_g = 0;
  if (next.known()) {
    next_g = next.gpsn();
  } else if (after == end) {
    next_g = g.next_g_ctrl;
  } else {
    return false;
  }
  acked = vocab::psn_add(next_g, -1);
  if (vocab::psn_gt(acked, pipe.max_psn_sent)) acked = pipe.max_psn_sent;
  return true;
}

void out_ack(GroupState& g, size_t e, const PacketMeta& m, Actions& a, Loop& loop) {
  EngineCounters& n = a.counters;
  Mode3State& st = *g.mode3;
  PipeState& pipe = out_pipe(g, e);
  Mode3Edge& edge = st.edges[e];
  const int out = out_index(e);
  const aeth::Kind kind = aeth::kind(m.syndrome);
  const bool nak_seq = m.syndrome == aeth::kNakPsnSequenceError;
  if (kind != aeth::Kind::kAck && kind != aeth::Kind::kRnrNak && !nak_seq) {
    ++n.hop_acks;  // a fatal NAK: nothing to resend; the hop's retries end the group
    return;
  }
  // An ACK says it has `psn`; a NAK that it has everything before `psn`.
  const uint32_t have = kind == aeth::Kind::kAck ? m.psn : vocab::psn_add(m.psn, -1);
  uint32_t acked = 0;
  if (!acked_in_group(g, e, pipe, have, acked)) {
    drop(g, n.drop_ack_refused);
    return;
  }
  const uint32_t before = pipe.psn_start;
  HopStep step;
  if (kind == aeth::Kind::kAck) {
    step = hop_acked(edge.out, pipe, out, acked, loop.wheel, loop.now_ns, st.policy);
  } else if (nak_seq) {
    step = hop_nak_sequence(edge.out, pipe, out, vocab::psn_add(acked, 1), loop.wheel, loop.now_ns,
                            st.policy);
  } else {
    step = hop_rnr_nak(edge.out, pipe, out, vocab::psn_add(acked, 1),
                       aeth::kRnrTimerNs[m.syndrome & aeth::kRnrTimerMask], loop.wheel, loop.now_ns,
                       st.policy);
  }
  if (step.outcome == HopOutcome::kRefused) {
    drop(g, n.drop_ack_refused);
    return;
  }
  ++n.hop_acks;
  if (e != kParentEdge && g.config->children[e].is_rank) ++g.stats.acks_from_ranks;
  const uint32_t freed = (pipe.psn_start - before) & vocab::kPsnMask;
  a.counters.pipe_entries_recycled += freed;
  act(g, e, pipe, step, a);
  if (freed > 0) pump(g, &pipe == &st.up, a, loop);
}

}  // namespace

void handle(const PacketMeta& m, Actions& a, Loop& loop) {
  GroupState& g = *m.group;
  if (g.mode3->failed) {
    drop(g, a.counters.drop_group_failed);
    return;
  }
  switch (m.kind) {
    case PacketKind::kUpload:
      upload(g, m, a, loop);
      return;
    case PacketKind::kResult:
      result(g, m, a, loop);
      return;
    case PacketKind::kRankAck:
    case PacketKind::kChildFrontier:
      out_ack(g, m.child_index(), m, a, loop);
      return;
    case PacketKind::kParentFrontier:
      out_ack(g, kParentEdge, m, a, loop);
      return;
    case PacketKind::kCnp:
      ++a.counters.cnps;  // consumed: a hop's sender has no rate control (congestion.h)
      return;
    case PacketKind::kUnsupported:
      drop(g, a.counters.drop_unsupported);
      return;
  }
}

void flush_acks(Actions& a, Loop& loop) {
  for (Mode3Edge* e : loop.acks.items()) {
    e->ack_due = false;
    send_ack_on(*e->group, e->edge, hop_acked_psn(e->in), kAck, a);
    ++a.counters.hop_acks_sent;
  }
  loop.acks.items().clear();
}

namespace {

// Whether the packet rank edge `e` sends next (its responder's ePSN) belongs to a collective
// announced here: a quiet edge then owes us packets. Only rank edges are watched (watch()).
bool expects(const GroupState& g, const Mode3Edge& e) {
  return locate_send(g, e.edge, e.in.epsn).known();
}

// The responder's quiet check (hop_responder.h): nudge a requester that has gone quiet.
void on_quiet(Mode3Edge& e, Actions& a, Loop& loop) {
  GroupState& g = *e.group;
  const uint64_t interval = g.mode3->policy.timeout_ns;
  const HopNudgeStep step = hop_quiet(e.in, loop.now_ns, interval, expects(g, e));
  switch (step.what) {
    case HopNudge::kStop:
      return;  // until the next take
    case HopNudge::kWait:
      loop.wheel.arm(e.quiet, loop.now_ns, step.wait_ns);
      return;
    case HopNudge::kNakSequence:
    case HopNudge::kNakRnr:
    case HopNudge::kAckAgain:
      nudge(g, e, step.what, a, loop);
      watch(g, e, loop);
      return;
  }
}

}  // namespace

void on_timer(Mode3Edge& e, TimerNode& n, Actions& a, Loop& loop) {
  GroupState& g = *e.group;
  Mode3State& st = *g.mode3;
  if (st.failed) return;  // the node stays unlinked: the group's timers end here
  if (n.tag == kQuietTimer) {
    on_quiet(e, a, loop);
    return;
  }
  ++a.counters.hop_timeouts;
  PipeState& pipe = out_pipe(g, e.edge);
  act(g, e.edge, pipe,
      hop_timeout(e.out, pipe, out_index(e.edge), loop.wheel, loop.now_ns, st.policy), a);
}

void pump_again(GroupState& g, Actions& a, Loop& loop) {
  g.mode3->pump_due = false;
  pump_both(g, a, loop);
}

}  // namespace epic::engine::mode3
