// Mode-III's Pipe (EPIC, "connection augmented"; docs/mode3.md): one hop's
// aggregation buffer with its own reliability. N entries — a SlotRegion of N
// slots, each a payload (accumulator and result) and a degree, with the arrival
// bitmap CheckDuplicate keeps — and psnStart: the Pipe takes PSNs in
// [psnStart, psnStart + N) only.
//   Receive     beyond the range: drop and NAK; below it (recycled): a copy of
//               something every out-endpoint has, ACK again; else ACK,
//               CheckDuplicate, AggregateData; when the degree reaches the
//               fan-in the entry is complete and its result goes on, in PSN
//               order (an RC responder downstream takes nothing out of order).
//   ACK         from an out-endpoint (cumulative): lastAcked; psnStart =
//               min(lastAcked over the out-endpoints) + 1; the entries below
//               it are recycled — never earlier. Mode-II's rule (clear the
//               slot of p + MW when p completes, recycle_buffer.h) is wrong
//               here: each hop ACKs on its own, so a fast rank's window can
//               still cover p + MW while a slow out-endpoint has not taken p.
//   Retransmit  every complete entry from lastAcked + 1 to maxPsnSent of an
//               out-endpoint (pipe_unacked).
//   Send window results go on while maxPsnSent + 1 - psnStart < send_window
//               (<= N): a go-back resends at most that many.
// PSNs are the hop's group PSNs (24-bit); N <= 2^22 keeps every comparison
// within half the PSN space. An ACK beyond maxPsnSent acknowledges nothing the
// Pipe sent: refused (the caller counts it).
// Hot path: no allocation; an ACK recycles at most N entries. Owned by the
// group's worker.
#pragma once

#include <array>
#include <cstdint>

#include "datapath/engine/check_duplicate.h"
#include "datapath/engine/slot.h"
#include "proto/vocab/limits.h"

namespace epic::engine {

struct PipeState {
  SlotRegion* entries = nullptr;  // the region its N entries lie in
  uint32_t base = 0;              // PSN p uses entry base + (p mod N) of the region
  uint32_t size = 0;              // N
  uint32_t psn_start = 0;         // the oldest PSN some out-endpoint has not acknowledged
  uint8_t out_endpoints = 0;      // 1..kMaxChildren
  std::array<uint32_t, vocab::kMaxChildren> last_acked{};  // per out-endpoint
  uint32_t max_psn_sent = 0;  // the newest result sent on; psn_start - 1 before any
  // The send window: results go on only while fewer than this many of the Pipe's entries are
  // unacknowledged by some out-endpoint (maxPsnSent + 1 - psnStart), 1..N; N after pipe_init.
  uint32_t send_window = 0;
};

// A Pipe over `entries` (N = entries->nslots, a power of two <= 2^22, every entry empty) whose
// first PSN is `first_psn`. False, nothing set, when N or the out-endpoints (1..64) are out of
// range.
bool pipe_init(PipeState& p, SlotRegion* entries, uint32_t first_psn, uint8_t out_endpoints);
// The same over entries [base, base + size) of `entries` (a switch with a parent keeps an
// upward and a downward Pipe in one granted region).
bool pipe_init(PipeState& p, SlotRegion* entries, uint32_t base, uint32_t size, uint32_t first_psn,
               uint8_t out_endpoints);
// The entry of `psn` (in range) in the region.
inline uint32_t pipe_entry(const PipeState& p, uint32_t psn) {
  return p.base + (psn & (p.size - 1));
}

enum class PipeReceive : uint8_t {
  kBeyond,        // psn >= psnStart + N: dropped; answer with a NAK
  kRecycled,      // psn < psnStart: every out-endpoint has its result; ACK again
  kDuplicate,     // this in-endpoint already contributed: ACK again; nothing aggregated
  kInconsistent,  // opcode or length differ from the entry's first contribution, or the entry
                  // is complete without this in-endpoint: dropped, nothing changed
  kAdded,         // ACK; aggregated; more contributions to come
  kCompleted,     // ACK; aggregated; the degree reached the fan-in: the result is stored
};

// In-endpoint `child`'s contribution (`claim` says what it carries, as for Mode-II) to `psn`,
// whose entry `fan_in` contributions complete (per packet: in a Reduce every child sends, in a
// Broadcast only the root's; translate_psn.h's fan_in()).
PipeReceive pipe_receive(PipeState& p, uint32_t psn, int child, const SlotClaim& claim,
                         const uint8_t* payload, uint16_t len, uint16_t fan_in);

enum class PipeAck : uint8_t {
  kAdvanced,    // lastAcked moved (psnStart may have, recycling entries)
  kOld,         // at or below lastAcked: nothing new (a duplicate or coalesced ACK)
  kBeyondSent,  // above maxPsnSent: acknowledges nothing sent; refused, nothing changed
};
struct PipeAckResult {
  PipeAck verdict = PipeAck::kOld;
  uint32_t recycled = 0;  // entries freed by this ACK
};

// The next PSN to send on (maxPsnSent + 1), when its entry is complete and in range: results go
// out in PSN order. False when it is not ready yet.
bool pipe_next_ready(const PipeState& p, uint32_t& psn);
// Whether `psn` = maxPsnSent + 1 may go on now: in range and inside the send window. The window
// bounds what a hop has in flight toward its out-endpoints, so a go-back (pipe_unacked) never
// resends more than it, and what waits on a link's queue stays below the hop's timeout (the
// manager derives the timeout from it, docs/mode3.md "Send window").
bool pipe_may_send(const PipeState& p, uint32_t psn);
// Limits the send window to `window` (clamped to 1..N).
void pipe_limit_send_window(PipeState& p, uint32_t window);
// The result of `psn` = maxPsnSent + 1 went to every out-endpoint.
void pipe_sent(PipeState& p, uint32_t psn);

// Holes. On a Mode-III hop not every out-endpoint receives every PSN (a Reduce's result goes
// only toward its root), and not every PSN reaches every Pipe (a Broadcast from another subtree
// never comes up through this one). `psn` = maxPsnSent + 1 (in range) went out to the
// out-endpoints in `receivers` (bit e: out-endpoint e) — none when nobody here sends it —,
// and its entry, if `completed` is false, was never used. An out-endpoint that does not
// receive it and has acknowledged everything before it counts as having acknowledged it too:
// psnStart may advance (the result says how many entries were freed).
PipeAckResult pipe_sent_to(PipeState& p, uint32_t psn, uint64_t receivers);
// The PSN `psn` is in the Pipe's range [psnStart, psnStart + N).
bool pipe_in_range(const PipeState& p, uint32_t psn);

// Out-endpoint `out` acknowledges every result up to `psn` (RC ACKs are cumulative).
PipeAckResult pipe_ack(PipeState& p, int out, uint32_t psn);

// What the retransmission timer resends to out-endpoint `out`: `count` PSNs from `first`
// (lastAcked + 1 .. maxPsnSent; every one of them is complete).
struct PsnRun {
  uint32_t first = 0;
  uint32_t count = 0;
};
PsnRun pipe_unacked(const PipeState& p, int out);

// The stored result of `psn` (complete and in range), in wire format; nullptr otherwise.
const uint8_t* pipe_result(const PipeState& p, uint32_t psn);

}  // namespace epic::engine
