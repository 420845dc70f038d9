#include "datapath/engine/pipe.h"

#include "datapath/engine/aggregate_data.h"
#include "proto/vocab/psn.h"

namespace epic::engine {

namespace {

uint32_t size_of(const PipeState& p) { return p.size; }

// psn - psn_start in [0, 2^24): the offset into the range, or a huge value below it.
uint32_t offset(const PipeState& p, uint32_t psn) { return (psn - p.psn_start) & vocab::kPsnMask; }

// Below psnStart (within half the PSN space behind it).
bool below(const PipeState& p, uint32_t psn) { return vocab::psn_gt(p.psn_start, psn); }

}  // namespace

bool pipe_init(PipeState& p, SlotRegion* entries, uint32_t first_psn, uint8_t out_endpoints) {
  if (entries == nullptr) return false;
  return pipe_init(p, entries, 0, entries->nslots, first_psn, out_endpoints);
}

bool pipe_init(PipeState& p, SlotRegion* entries, uint32_t base, uint32_t size, uint32_t first_psn,
               uint8_t out_endpoints) {
  if (entries == nullptr || size == 0 || size > (1u << 22) || (size & (size - 1)) != 0 ||
      uint64_t{base} + size > entries->nslots || out_endpoints == 0 ||
      out_endpoints > vocab::kMaxChildren) {
    return false;
  }
  p = PipeState{};
  p.entries = entries;
  p.base = base;
  p.size = size;
  p.psn_start = first_psn & vocab::kPsnMask;
  p.out_endpoints = out_endpoints;
  const uint32_t before = vocab::psn_add(p.psn_start, -1);
  p.last_acked.fill(before);
  p.max_psn_sent = before;
  p.send_window = size;
  return true;
}

void pipe_limit_send_window(PipeState& p, uint32_t window) {
  p.send_window = window == 0 ? 1 : window < p.size ? window : p.size;
}

bool pipe_may_send(const PipeState& p, uint32_t psn) {
  return !below(p, psn) && offset(p, psn) < p.send_window;
}

PipeReceive pipe_receive(PipeState& p, uint32_t psn, int child, const SlotClaim& claim,
                         const uint8_t* payload, uint16_t len, uint16_t fan_in) {
  if (below(p, psn)) return PipeReceive::kRecycled;
  if (offset(p, psn) >= size_of(p)) return PipeReceive::kBeyond;
  SlotRegion& r = *p.entries;
  const uint32_t i = pipe_entry(p, psn);
  // In range, entry i is empty (recycled: it held psn - N or older) or holds psn: psnStart only
  // passes a PSN once every out-endpoint has its result, so no live older PSN is left in it.
  switch (check_duplicate(r.meta[i], psn, child, claim)) {
    case SlotVerdict::kFresh:
      break;
    case SlotVerdict::kDuplicate:
      return PipeReceive::kDuplicate;
    case SlotVerdict::kStale:
    case SlotVerdict::kBusy:
      return PipeReceive::kInconsistent;  // unreachable while the invariant above holds
  }
  // Complete without this in-endpoint: it is not one of the packet's contributors.
  if (r.meta[i].state != SlotState::kAggregating) return PipeReceive::kInconsistent;
  // Mode-III hops carry plain values only: an exact sum on a Mode-III tree of several switches
  // is refused by context validation (check_shape), so every in-endpoint here sends plain data.
  switch (aggregate_data(r, i, child, Source::kRank, claim.opcode, payload, len, fan_in)) {
    case Contribution::kInconsistent:
      return PipeReceive::kInconsistent;
    case Contribution::kAdded:
      return PipeReceive::kAdded;
    case Contribution::kCompleted:
      break;
  }
  r.meta[i].state = SlotState::kComplete;
  return PipeReceive::kCompleted;
}

const uint8_t* pipe_result(const PipeState& p, uint32_t psn) {
  if (below(p, psn) || offset(p, psn) >= size_of(p)) return nullptr;
  const uint32_t i = pipe_entry(p, psn);
  const Slot& s = p.entries->meta[i];
  if (s.state != SlotState::kComplete || s.psn != psn) return nullptr;
  return p.entries->result_of(i);
}

bool pipe_next_ready(const PipeState& p, uint32_t& psn) {
  const uint32_t next = vocab::psn_add(p.max_psn_sent, 1);
  if (!pipe_may_send(p, next) || pipe_result(p, next) == nullptr) return false;
  psn = next;
  return true;
}

void pipe_sent(PipeState& p, uint32_t psn) { p.max_psn_sent = psn; }

namespace {

// psnStart = min(lastAcked) + 1: the oldest PSN some out-endpoint still lacks; the entries it
// passes are recycled. Every lastAcked lies in [psnStart - 1, maxPsnSent], so distances back from
// maxPsnSent order them.
uint32_t advance_start(PipeState& p) {
  uint32_t behind = 0;
  for (size_t e = 0; e < p.out_endpoints; ++e) {
    const uint32_t d = (p.max_psn_sent - p.last_acked[e]) & vocab::kPsnMask;
    if (d > behind) behind = d;
  }
  const uint32_t start = vocab::psn_add(p.max_psn_sent, 1 - int64_t{behind});
  const uint32_t freed = (start - p.psn_start) & vocab::kPsnMask;  // <= N: start <= maxPsnSent+1
  for (uint32_t k = 0; k < freed; ++k) {
    const uint32_t i = pipe_entry(p, vocab::psn_add(p.psn_start, k));
    p.entries->meta[i].state = SlotState::kEmpty;  // keeps its PSN: CheckDuplicate's zombie guard
  }
  p.psn_start = start;
  return freed;
}

}  // namespace

PipeAckResult pipe_ack(PipeState& p, int out, uint32_t psn) {
  const auto o = static_cast<size_t>(out);
  if (vocab::psn_gt(psn, p.max_psn_sent)) return {PipeAck::kBeyondSent, 0};
  if (!vocab::psn_gt(psn, p.last_acked[o])) return {PipeAck::kOld, 0};
  p.last_acked[o] = psn;
  return {PipeAck::kAdvanced, advance_start(p)};
}

bool pipe_in_range(const PipeState& p, uint32_t psn) {
  return !below(p, psn) && offset(p, psn) < size_of(p);
}

PipeAckResult pipe_sent_to(PipeState& p, uint32_t psn, uint64_t receivers) {
  const uint32_t before = p.max_psn_sent;
  p.max_psn_sent = psn;
  bool moved = false;
  for (size_t e = 0; e < p.out_endpoints; ++e) {
    if ((receivers >> e & 1) == 0 && p.last_acked[e] == before) {
      p.last_acked[e] = psn;
      moved = true;
    }
  }
  if (!moved) return {PipeAck::kOld, 0};
  return {PipeAck::kAdvanced, advance_start(p)};
}

PsnRun pipe_unacked(const PipeState& p, int out) {
  const uint32_t last = p.last_acked[static_cast<size_t>(out)];
  return {vocab::psn_add(last, 1), (p.max_psn_sent - last) & vocab::kPsnMask};
}

}  // namespace epic::engine
