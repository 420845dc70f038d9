// ReceiveAck / SendAck (ack_reflect.h) as a packet table. The module turns the ranks' ACKs of
// their results into ACKs of their uploads: a rank's upload is acknowledged once every receiver
// of its packet has acknowledged the result — the rank itself for AllReduce (its own result),
// the root for Reduce/ReduceScatter, every receiver for Broadcast/AllGather — the latter known
// through the ACK frontiers the switches report up (subtree) and down (group); a PSN-sequence
// or RNR NAK of a result the rank also uploaded is reflected onto that upload, never beyond
// acked_send_psn + 1.
//
// Each row: a group (rank and switch children, with or without a parent) with its collectives
// announced by create_record and some state set directly, one input (a rank's ACK/NAK, a switch
// child's frontier, the parent's frontier, or a direct call of update_subtree_frontier /
// repeat_frontier_up / repeat_frontier_down), and what must follow: the frames (port,
// destination QPN, PSN, AETH syndrome), the counters, and the ACK state. The table covers every
// AETH syndrome class a rank may send (ACK with and without credits, RNR NAK with several
// timer codes, PSN-sequence-error NAK, invalid request, remote access and remote operational
// error NAKs, a reserved syndrome), repeated, old and not-announced PSNs, each primitive's rule
// of who acknowledges an upload, and the frontier paths at the root and below a parent.
//
// Group PSNs here start at kPsn0 = 100 (everything "before" is 99); int32 elements, 256-byte
// path MTU: 64 elements per packet. Expected values are worked out from docs/mode2.md and
// proto/vocab/collective_map.h in the comment of each scenario.
#include "datapath/engine/ack_reflect.h"

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "proto/vocab/aeth.h"
#include "tests/unit/datapath/engine/ack_reflect_test_util.h"

namespace epic::engine {
namespace {

using namespace acks_testing;  // NOLINT(google-build-using-namespace): the bench's vocabulary
namespace aeth = vocab::aeth;
using Make = std::unique_ptr<Bench> (*)();

// --- Scenarios (group PSN g, rank r's send PSN s_r, receive PSN v_r) -------------------------

// Root, ranks 0 and 1; AllReduce of 3 packets: g = 100 control, 101..103 data; every rank
// sends and receives all of them at s = v = g.
std::unique_ptr<Bench> ar2() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, false));
  b->announce(CollectiveType::kAllReduce, 192);
  return b;
}
// The same below a parent.
std::unique_ptr<Bench> ar2_up() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, true));
  b->announce(CollectiveType::kAllReduce, 192);
  return b;
}
// Root, ranks 0 and 1; Broadcast from rank 0 (2 packets, g 100..102), then AllReduce of 3
// (g 103..106). Rank 0 sends B 100,101,102 and AR 103..106 (s = g) but receives only the
// controls: v 100 (B ctrl), 101 (AR ctrl), 102..104 (AR data g 104..106). Rank 1 sends
// s 100 (B ctrl), 101 (AR ctrl), 102..104 (AR data g 104..106) and receives everything, v = g.
std::unique_ptr<Bench> bcast_then_ar2() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, false));
  b->announce(CollectiveType::kBroadcast, 128, 0);
  b->announce(CollectiveType::kAllReduce, 192);
  return b;
}
// Root, ranks 0 and 1; Reduce to rank 1 of 3 packets (g 100..103). Both send s = g; rank 0
// receives only the control result (v 100), rank 1 everything (v = g).
std::unique_ptr<Bench> reduce2() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, false));
  b->announce(CollectiveType::kReduce, 192, 1);
  return b;
}
// Root, ranks 0 and 1; ReduceScatter of one packet per chunk: g 100 control, 101 chunk 0,
// 102 chunk 1. Both send s = g; rank 0 receives v 100 (ctrl), 101 (g 101); rank 1 receives
// v 100 (ctrl), 101 (g 102).
std::unique_ptr<Bench> rs2() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, false));
  b->announce(CollectiveType::kReduceScatter, 64);
  return b;
}
// Root, ranks 0, 1, 2; Broadcast from rank 0 of 2 packets (g 100..102). Rank 0 sends s = g and
// receives only v 100; ranks 1 and 2 send only s 100 and receive v = g.
std::unique_ptr<Bench> bcast3() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1), rank(2)}, 3, false));
  b->announce(CollectiveType::kBroadcast, 128, 0);
  return b;
}
// Root, ranks 0 and 1; AllGather of one packet per chunk: g 100 ctrl, 101 (rank 0's chunk),
// 102 (rank 1's). Rank 0 sends s 100, 101 (g 101), receives v 100, 101 (g 102); rank 1 sends
// s 100, 101 (g 102), receives v 100, 101 (g 101).
std::unique_ptr<Bench> ag2() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, false));
  b->announce(CollectiveType::kAllGather, 64);
  return b;
}
// Root; child 0 a switch over ranks 0-1 (group PSNs), child 1 rank 2; AllReduce of 3 packets
// (g 100..103, rank 2 at s = v = g).
std::unique_ptr<Bench> sw_root() {
  auto b = std::make_unique<Bench>(tree({subtree(0, 2), rank(2)}, 3, false));
  b->announce(CollectiveType::kAllReduce, 192);
  return b;
}
// The same below a parent.
std::unique_ptr<Bench> sw_mid() {
  auto b = std::make_unique<Bench>(tree({subtree(0, 2), rank(2)}, 3, true));
  b->announce(CollectiveType::kAllReduce, 192);
  return b;
}
// Below a parent; children rank 0, rank 1, a switch over ranks 2-3; Reduce to rank 4 (beyond
// the parent) of 3 packets (g 100..103). Ranks 0 and 1 send s = g and receive only v 100.
// Their control results are acknowledged (v 100, s 100); slots hold the control result
// (complete) and the three partials sent up.
std::unique_ptr<Bench> reduce_mid() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1), subtree(2, 2)}, 5, true));
  b->announce(CollectiveType::kReduce, 192, 4);
  GroupState& g = b->g();
  for (size_t c = 0; c < 2; ++c) g.acked_recv_psn[c] = g.acked_send_psn[c] = 100;
  b->hold(100, SlotState::kComplete, true);
  for (uint32_t p = 101; p <= 103; ++p) b->hold(p, SlotState::kSentUp);
  return b;
}

// --- The table ---------------------------------------------------------------------------------

enum class Op {
  kRankAck,        // receive_rank_ack: an ACK/NAK from rank child `child`
  kChildFrontier,  // receive_child_frontier: from switch child `child`
  kGroupFrontier,  // receive_group_frontier (the parent's frontier)
  kUpdate,         // update_subtree_frontier
  kRepeatUp,       // repeat_frontier_up
  kRepeatDown,     // repeat_frontier_down to child `child`
};

struct In {
  Op op = Op::kRankAck;
  int16_t child = 0;
  uint32_t psn = 0;
  uint8_t syndrome = kAck;
};

struct Counts {
  uint64_t acks_reflected = 0;
  uint64_t acks_from_ranks = 0;  // GroupStats
  uint64_t frontier_from_child = 0;
  uint64_t upload_acks_sent = 0;
  uint64_t frontiers_sent = 0;
  uint64_t slots_recycled = 0;
  friend bool operator==(const Counts&, const Counts&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Counts& c) {
    return os << "{reflected " << c.acks_reflected << " from_ranks " << c.acks_from_ranks
              << " from_child " << c.frontier_from_child << " upload_acks " << c.upload_acks_sent
              << " frontiers " << c.frontiers_sent << " recycled " << c.slots_recycled << "}";
  }
};

// The ACK state after the row, one entry per child; `held`: slots not kEmpty.
struct State {
  std::vector<uint32_t> acked_recv;
  std::vector<uint32_t> acked_send;
  std::vector<uint32_t> child_frontier;
  uint32_t subtree = 99;
  uint32_t global = 99;
  uint32_t held = 0;
  friend bool operator==(const State&, const State&) = default;
  friend std::ostream& operator<<(std::ostream& os, const State& s) {
    const auto v = [&](const char* n, const std::vector<uint32_t>& x) {
      os << n << " {";
      for (const uint32_t e : x) os << " " << e;
      os << " } ";
    };
    v("acked_recv", s.acked_recv);
    v("acked_send", s.acked_send);
    v("child_frontier", s.child_frontier);
    return os << "subtree " << s.subtree << " global " << s.global << " held " << s.held;
  }
};

struct Row {
  const char* name;
  Make make;
  void (*before)(Bench&);  // state set directly before the input; may be null
  In in;
  std::vector<Sent> frames;
  Counts counts;
  State after;
};
void PrintTo(const Row& r, std::ostream* os) { *os << r.name; }

const std::vector<uint32_t> k99x2 = {99, 99};
const std::vector<uint32_t> k99x3 = {99, 99, 99};

const std::vector<Row> kRows = {
    // ---- receive_rank_ack: the AETH syndromes --------------------------------------------------
    // AllReduce: rank 0 has results up to 102, so its uploads up to 102 are done (own result).
    {.name = "AckOwnResultAllReduce",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, kAck},
     .frames = {ack_to(0, 102)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{102, 99}, {102, 99}, k99x2}},
    // An ACK carrying a credit count (syndrome 0x05) is an ACK all the same; we say 0x1F.
    {.name = "AckWithCreditCount",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, 0x05},
     .frames = {ack_to(0, 102)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{102, 99}, {102, 99}, k99x2}},
    // The same ACK again: the rank may have lost ours — say it again (force).
    {.name = "RepeatedAckForcesOurs",
     .make = ar2,
     .before = [](Bench& b) { b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 102; },
     .in = {Op::kRankAck, 0, 102, kAck},
     .frames = {ack_to(0, 102)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{102, 99}, {102, 99}, k99x2}},
    // An older ACK (a reordered copy) is a repeat too: nothing moves back.
    {.name = "OlderAckRepeatsOurs",
     .make = ar2,
     .before = [](Bench& b) { b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 102; },
     .in = {Op::kRankAck, 0, 101, kAck},
     .frames = {ack_to(0, 102)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{102, 99}, {102, 99}, k99x2}},
    // A repeat below a parent also says our subtree frontier (99) up again.
    {.name = "RepeatedAckBelowParentRepeatsFrontierUp",
     .make = ar2_up,
     .before = [](Bench& b) { b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 102; },
     .in = {Op::kRankAck, 0, 102, kAck},
     .frames = {ack_to(0, 102), ack_up(99)},
     .counts =
         {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1, .frontiers_sent = 1},
     .after = {{102, 99}, {102, 99}, k99x2}},
    // An ACK of receive PSN 104, which no collective announced: nothing is acknowledged; our
    // last ACK (99: nothing yet) is repeated.
    {.name = "AckOfPsnNotAnnounced",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 104, kAck},
     .frames = {ack_to(0, 99)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {k99x2, k99x2, k99x2}},
    // RNR NAK 102 (timer code 0): results up to 101 arrived — ACK uploads up to 101 — and the
    // rank misses 102, which it also uploaded: the same RNR NAK names its upload 102.
    {.name = "RnrNakTimer0ReflectedOntoUpload",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::rnr_nak(0)},
     .frames = {ack_to(0, 101), ack_to(0, 102, 0x20)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 2},
     .after = {{101, 99}, {101, 99}, k99x2}},
    {.name = "RnrNakTimer12ReflectedOntoUpload",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::rnr_nak(12)},
     .frames = {ack_to(0, 101), ack_to(0, 102, 0x2C)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 2},
     .after = {{101, 99}, {101, 99}, k99x2}},
    {.name = "RnrNakTimer31ReflectedOntoUpload",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::rnr_nak(31)},
     .frames = {ack_to(0, 101), ack_to(0, 102, 0x3F)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 2},
     .after = {{101, 99}, {101, 99}, k99x2}},
    {.name = "PsnSequenceNakReflectedOntoUpload",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::kNakPsnSequenceError},
     .frames = {ack_to(0, 101), ack_to(0, 102, 0x60)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 2},
     .after = {{101, 99}, {101, 99}, k99x2}},
    // NAK of the control result (v 100): nothing arrived, so no ACK; the NAK names upload 100.
    {.name = "NakOfControlResult",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 100, aeth::kNakPsnSequenceError},
     .frames = {ack_to(0, 100, 0x60)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {k99x2, k99x2, k99x2}},
    // Rank 0 after its Broadcast: NAK v 102 = AR data 0 (g 104), which it uploaded at s 104.
    // v 101 (AR ctrl, g 103) arrived: its own result covers its uploads up to g 103 — but its
    // Broadcast data (s 101, g 101) it does not receive, and rank 1 has not acknowledged it,
    // so only s 100 is acknowledged, and the NAK (a NAK acknowledges everything before it) is
    // clamped from 104 to acked_send_psn + 1 = 101.
    {.name = "NakClampedToAckedSendPlusOne",
     .make = bcast_then_ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::kNakPsnSequenceError},
     .frames = {ack_to(0, 100), ack_to(0, 101, 0x60)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 2},
     .after = {{101, 99}, {100, 99}, k99x2}},
    // Broadcast receiver rank 1 NAKs v 102 (g 102), which it does not send: only the ACK of
    // what arrived (v 101 covers its control upload s 100); nothing reflected as a NAK.
    {.name = "NakOfResultNotUploaded",
     .make = bcast3,
     .before = nullptr,
     .in = {Op::kRankAck, 1, 102, aeth::kNakPsnSequenceError},
     .frames = {ack_to(1, 100)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{99, 101, 99}, {99, 100, 99}, k99x3}},
    // NAK v 104, just past the announced results: it acknowledges v 103 (uploads to s 103);
    // v 104 is in no collective, so no NAK goes back.
    {.name = "NakPastAnnouncedResults",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 104, aeth::kNakPsnSequenceError},
     .frames = {ack_to(0, 103)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{103, 99}, {103, 99}, k99x2}},
    // A NAK naming v 110, far past anything announced: nothing at all (a NAK never forces).
    {.name = "NakOfPsnNotAnnounced",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 110, aeth::rnr_nak(12)},
     .frames = {},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1},
     .after = {k99x2, k99x2, k99x2}},
    // The other NAKs (fatal for the rank's QP) and a reserved syndrome: counted, nothing
    // reflected, nothing changed — even though an ACK of v 102 would have advanced.
    {.name = "NakInvalidRequestNotReflected",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::kNakInvalidRequest},
     .frames = {},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1},
     .after = {k99x2, k99x2, k99x2}},
    {.name = "NakRemoteAccessErrorNotReflected",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::kNakRemoteAccessError},
     .frames = {},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1},
     .after = {k99x2, k99x2, k99x2}},
    {.name = "NakRemoteOperationalErrorNotReflected",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, aeth::kNakRemoteOperationalError},
     .frames = {},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1},
     .after = {k99x2, k99x2, k99x2}},
    {.name = "ReservedSyndromeNotReflected",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 102, 0x40},
     .frames = {},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1},
     .after = {k99x2, k99x2, k99x2}},

    // ---- receive_rank_ack: whose ACK acknowledges an upload, per primitive -------------------
    // AllReduce after a Broadcast: rank 1's ACK of v 106 (g 106) is its own result for every
    // upload: s 100 (B ctrl), 101 (AR ctrl), 102..104 (AR data) — ACK s 104, not 106.
    {.name = "AllReduceOwnResultAcrossPsnDrift",
     .make = bcast_then_ar2,
     .before = nullptr,
     .in = {Op::kRankAck, 1, 106, kAck},
     .frames = {ack_to(1, 104)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{99, 106}, {99, 104}, k99x2}},
    // Reduce non-root rank 0 has only the control result: its control upload is done, its
    // data uploads wait for the root.
    {.name = "ReduceNonRootAcksOnlyItsControl",
     .make = reduce2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 100, kAck},
     .frames = {ack_to(0, 100)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{100, 99}, {100, 99}, k99x2}},
    // The root (rank 1) acknowledges all results (v 103): its own uploads to s 103, and the
    // group frontier reaches g 103 (rank 0 has nothing more to receive), which acknowledges
    // rank 0's data uploads to s 103 and frees the four slots.
    {.name = "ReduceRootAckAcknowledgesNonRoot",
     .make = reduce2,
     .before =
         [](Bench& b) {
           b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 100;
           b.hold(100, SlotState::kComplete, true);
           for (uint32_t p = 101; p <= 103; ++p) b.hold(p, SlotState::kComplete);
         },
     .in = {Op::kRankAck, 1, 103, kAck},
     .frames = {ack_to(1, 103), ack_to(0, 103)},
     .counts =
         {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 2, .slots_recycled = 4},
     .after = {{100, 103}, {103, 103}, k99x2, 103, 103, 0}},
    // ReduceScatter: rank 0's ACK of its chunk (v 101 = g 101) acknowledges its uploads to
    // g 101, not its upload of rank 1's chunk (g 102).
    {.name = "ReduceScatterOwnChunk",
     .make = rs2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 101, kAck},
     .frames = {ack_to(0, 101)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{101, 99}, {101, 99}, k99x2}},
    // Then rank 1's ACK of its chunk (v 101 = g 102): its own result covers only its control
    // (its s 101 is chunk 0, g 101, which rank 0 receives): ACK s 100; the frontier reaches
    // g 102 and acknowledges both ranks' uploads to s 102.
    {.name = "ReduceScatterFrontierAcksOtherChunk",
     .make = rs2,
     .before = [](Bench& b) { b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 101; },
     .in = {Op::kRankAck, 1, 101, kAck},
     .frames = {ack_to(1, 100), ack_to(0, 102), ack_to(1, 102)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 3},
     .after = {{101, 101}, {102, 102}, k99x2, 102, 102, 0}},
    // Broadcast to ranks 1 and 2 (the root, rank 0, acknowledged its control result): rank 1's
    // ACK of both packets acknowledges its own control upload; the root waits for rank 2.
    {.name = "BroadcastOneReceiverIsNotEnough",
     .make = bcast3,
     .before = [](Bench& b) { b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 100; },
     .in = {Op::kRankAck, 1, 102, kAck},
     .frames = {ack_to(1, 100)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{100, 102, 99}, {100, 100, 99}, k99x3}},
    // Rank 2's ACK makes every receiver: the group frontier g 102 acknowledges the root's
    // uploads s 101, 102.
    {.name = "BroadcastEveryReceiverAcksTheRoot",
     .make = bcast3,
     .before =
         [](Bench& b) {
           b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 100;
           b.g().acked_recv_psn[1] = 102;
           b.g().acked_send_psn[1] = 100;
         },
     .in = {Op::kRankAck, 2, 102, kAck},
     .frames = {ack_to(2, 100), ack_to(0, 102)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 2},
     .after = {{100, 102, 102}, {102, 100, 100}, k99x3, 102, 102, 0}},
    // AllGather: rank 0 receiving rank 1's chunk (v 101 = g 102) acknowledges only its control
    // upload; its chunk (s 101 = g 101) waits for rank 1.
    {.name = "AllGatherOwnChunkWaits",
     .make = ag2,
     .before = nullptr,
     .in = {Op::kRankAck, 0, 101, kAck},
     .frames = {ack_to(0, 100)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 1},
     .after = {{101, 99}, {100, 99}, k99x2}},
    // Rank 1 receiving chunk 0: frontier g 102, both chunks acknowledged to their sources.
    {.name = "AllGatherFrontierAcksEveryChunk",
     .make = ag2,
     .before =
         [](Bench& b) {
           b.g().acked_recv_psn[0] = 101;
           b.g().acked_send_psn[0] = 100;
         },
     .in = {Op::kRankAck, 1, 101, kAck},
     .frames = {ack_to(1, 100), ack_to(0, 101), ack_to(1, 101)},
     .counts = {.acks_reflected = 1, .acks_from_ranks = 1, .upload_acks_sent = 3},
     .after = {{101, 101}, {101, 101}, k99x2, 102, 102, 0}},

    // ---- receive_child_frontier ---------------------------------------------------------------
    // Rank 2 has everything (v 103); switch child 0 reports g 102: the minimum, 102, is the
    // group frontier at the root, sent down to the switch child (rank 2 has nothing new).
    {.name = "ChildFrontierAdvanceAtRoot",
     .make = sw_root,
     .before = [](Bench& b) { b.g().acked_recv_psn[1] = b.g().acked_send_psn[1] = 103; },
     .in = {Op::kChildFrontier, 0, 102, kAck},
     .frames = {ack_to(0, 102)},
     .counts = {.frontier_from_child = 1, .frontiers_sent = 1},
     .after = {{99, 103}, {99, 103}, {102, 99}, 102, 102, 0}},
    // Below a parent the subtree frontier goes up instead.
    {.name = "ChildFrontierAdvanceBelowParent",
     .make = sw_mid,
     .before = [](Bench& b) { b.g().acked_recv_psn[1] = b.g().acked_send_psn[1] = 103; },
     .in = {Op::kChildFrontier, 0, 102, kAck},
     .frames = {ack_up(102)},
     .counts = {.frontier_from_child = 1, .frontiers_sent = 1},
     .after = {{99, 103}, {99, 103}, {102, 99}, 102, 99, 0}},
    // Rank 2 has acknowledged nothing: the minimum stays 99, nothing is sent.
    {.name = "ChildFrontierAdvanceNotTheMinimum",
     .make = sw_root,
     .before = nullptr,
     .in = {Op::kChildFrontier, 0, 102, kAck},
     .frames = {},
     .counts = {.frontier_from_child = 1},
     .after = {k99x2, k99x2, {102, 99}}},
    // The same report again: the child may have lost our group frontier (101): say it again.
    {.name = "ChildFrontierRepeatAtRoot",
     .make = sw_root,
     .before =
         [](Bench& b) {
           b.g().child_frontier[0] = 102;
           b.g().subtree_frontier = b.g().global_frontier = 101;
         },
     .in = {Op::kChildFrontier, 0, 102, kAck},
     .frames = {ack_to(0, 101)},
     .counts = {.frontier_from_child = 1, .frontiers_sent = 1},
     .after = {k99x2, k99x2, {102, 99}, 101, 101, 0}},
    // Below a parent: the group frontier (100) down and the subtree frontier (101) up.
    {.name = "ChildFrontierRepeatBelowParent",
     .make = sw_mid,
     .before =
         [](Bench& b) {
           b.g().child_frontier[0] = 102;
           b.g().subtree_frontier = 101;
           b.g().global_frontier = 100;
         },
     .in = {Op::kChildFrontier, 0, 102, kAck},
     .frames = {ack_to(0, 100), ack_up(101)},
     .counts = {.frontier_from_child = 1, .frontiers_sent = 2},
     .after = {k99x2, k99x2, {102, 99}, 101, 100, 0}},
    // An older report (101 after 102) is a repeat: nothing moves back.
    {.name = "ChildFrontierOlderIsARepeat",
     .make = sw_mid,
     .before =
         [](Bench& b) {
           b.g().child_frontier[0] = 102;
           b.g().subtree_frontier = 101;
           b.g().global_frontier = 100;
         },
     .in = {Op::kChildFrontier, 0, 101, kAck},
     .frames = {ack_to(0, 100), ack_up(101)},
     .counts = {.frontier_from_child = 1, .frontiers_sent = 2},
     .after = {k99x2, k99x2, {102, 99}, 101, 100, 0}},

    // ---- receive_group_frontier (the parent's frontier) --------------------------------------
    // g 102: the slots of g 100..102 are freed (103 stays), ranks 0 and 1 — who receive no
    // data of this Reduce — get their uploads acknowledged to s 102, and the switch child the
    // frontier.
    {.name = "GroupFrontierAdvance",
     .make = reduce_mid,
     .before = nullptr,
     .in = {Op::kGroupFrontier, -1, 102, kAck},
     .frames = {ack_to(0, 102), ack_to(1, 102), ack_to(2, 102)},
     .counts = {.upload_acks_sent = 2, .frontiers_sent = 1, .slots_recycled = 3},
     .after = {{100, 100, 99}, {102, 102, 99}, k99x3, 99, 102, 1}},
    // The same frontier again: the rank children may have lost our ACKs: repeat them.
    {.name = "GroupFrontierRepeatBelowParent",
     .make = reduce_mid,
     .before =
         [](Bench& b) {
           b.g().global_frontier = 102;
           b.g().acked_send_psn[0] = b.g().acked_send_psn[1] = 102;
         },
     .in = {Op::kGroupFrontier, -1, 102, kAck},
     .frames = {ack_to(0, 102), ack_to(1, 102)},
     .counts = {.upload_acks_sent = 2},
     .after = {{100, 100, 99}, {102, 102, 99}, k99x3, 99, 102, 4}},
    // An older frontier is a repeat too.
    {.name = "GroupFrontierOlderIsARepeat",
     .make = reduce_mid,
     .before =
         [](Bench& b) {
           b.g().global_frontier = 102;
           b.g().acked_send_psn[0] = b.g().acked_send_psn[1] = 102;
         },
     .in = {Op::kGroupFrontier, -1, 101, kAck},
     .frames = {ack_to(0, 102), ack_to(1, 102)},
     .counts = {.upload_acks_sent = 2},
     .after = {{100, 100, 99}, {102, 102, 99}, k99x3, 99, 102, 4}},
    // At the root a frontier that does not advance does nothing.
    {.name = "GroupFrontierRepeatAtRoot",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kGroupFrontier, -1, 99, kAck},
     .frames = {},
     .counts = {},
     .after = {k99x2, k99x2, k99x2}},

    // ---- update_subtree_frontier, repeat_frontier_up/down --------------------------------------
    // Reduce at the root: the root (rank 1) has v 103; rank 0 receives nothing more. The subtree
    // frontier 103 is the group frontier: rank 0's uploads acknowledged to s 103.
    {.name = "UpdateAtRootIsGroupFrontier",
     .make = reduce2,
     .before =
         [](Bench& b) {
           b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 100;
           b.g().acked_recv_psn[1] = b.g().acked_send_psn[1] = 103;
         },
     .in = {Op::kUpdate, -1, 0, kAck},
     .frames = {ack_to(0, 103)},
     .counts = {.upload_acks_sent = 1},
     .after = {{100, 103}, {103, 103}, k99x2, 103, 103, 0}},
    // Below a parent: min(switch child 102, rank 2 103) = 102 goes up; the group frontier
    // waits for the parent.
    {.name = "UpdateBelowParentReportsUp",
     .make = sw_mid,
     .before =
         [](Bench& b) {
           b.g().child_frontier[0] = 102;
           b.g().acked_recv_psn[1] = b.g().acked_send_psn[1] = 103;
         },
     .in = {Op::kUpdate, -1, 0, kAck},
     .frames = {ack_up(102)},
     .counts = {.frontiers_sent = 1},
     .after = {{99, 103}, {99, 103}, {102, 99}, 102, 99, 0}},
    {.name = "UpdateWithoutAdvance",
     .make = sw_mid,
     .before = nullptr,
     .in = {Op::kUpdate, -1, 0, kAck},
     .frames = {},
     .counts = {},
     .after = {k99x2, k99x2, k99x2}},
    {.name = "RepeatUpWithoutParentIsNoop",
     .make = ar2,
     .before = [](Bench& b) { b.g().subtree_frontier = b.g().global_frontier = 101; },
     .in = {Op::kRepeatUp, -1, 0, kAck},
     .frames = {},
     .counts = {},
     .after = {k99x2, k99x2, k99x2, 101, 101, 0}},
    {.name = "RepeatUpSaysSubtreeFrontier",
     .make = sw_mid,
     .before =
         [](Bench& b) {
           b.g().subtree_frontier = 101;
           b.g().global_frontier = 100;
         },
     .in = {Op::kRepeatUp, -1, 0, kAck},
     .frames = {ack_up(101)},
     .counts = {.frontiers_sent = 1},
     .after = {k99x2, k99x2, k99x2, 101, 100, 0}},
    {.name = "RepeatDownSaysGroupFrontier",
     .make = sw_mid,
     .before =
         [](Bench& b) {
           b.g().subtree_frontier = 101;
           b.g().global_frontier = 100;
         },
     .in = {Op::kRepeatDown, 0, 0, kAck},
     .frames = {ack_to(0, 100)},
     .counts = {.frontiers_sent = 1},
     .after = {k99x2, k99x2, k99x2, 101, 100, 0}},
};

class AckReflect : public ::testing::TestWithParam<Row> {};

TEST_P(AckReflect, Row) {
  const Row& r = GetParam();
  const auto b = r.make();
  GroupState& g = b->g();
  if (r.before) r.before(*b);
  PacketMeta m;
  m.group = &g;
  m.child = r.in.child;
  m.opcode = wire::op::kAck;
  m.syndrome = r.in.syndrome;
  m.psn = r.in.psn;
  switch (r.in.op) {
    case Op::kRankAck:
      m.kind = PacketKind::kRankAck;
      receive_rank_ack(g, m, b->a);
      break;
    case Op::kChildFrontier:
      m.kind = PacketKind::kChildFrontier;
      receive_child_frontier(g, m, b->a);
      break;
    case Op::kGroupFrontier:
      receive_group_frontier(g, r.in.psn, b->a);
      break;
    case Op::kUpdate:
      update_subtree_frontier(g, b->a);
      break;
    case Op::kRepeatUp:
      repeat_frontier_up(g, b->a);
      break;
    case Op::kRepeatDown:
      repeat_frontier_down(g, static_cast<size_t>(r.in.child), b->a);
      break;
  }
  EXPECT_EQ(b->sent(), r.frames);
  EXPECT_EQ(b->n.tx_frames, r.frames.size());
  const EngineCounters& n = b->n;
  EXPECT_EQ((Counts{n.acks_reflected, g.stats.acks_from_ranks, n.frontier_from_child,
                    n.upload_acks_sent, n.frontiers_sent, n.slots_recycled}),
            r.counts);
  // Nothing else is counted: no drops, no data.
  EXPECT_EQ(n.rx_accounted(), n.acks_reflected + n.frontier_from_child);
  EXPECT_EQ(n.rnr_naks_sent + n.results_replicated + n.results_resent, 0u);
  State s;
  const size_t kids = g.config->children.size();
  for (size_t c = 0; c < kids; ++c) {
    s.acked_recv.push_back(g.acked_recv_psn[c]);
    s.acked_send.push_back(g.acked_send_psn[c]);
    s.child_frontier.push_back(g.child_frontier[c]);
  }
  s.subtree = g.subtree_frontier;
  s.global = g.global_frontier;
  for (const Slot& slot : b->slots.meta) s.held += slot.used && slot.state != SlotState::kEmpty;
  EXPECT_EQ(s, r.after);
}

INSTANTIATE_TEST_SUITE_P(Table, AckReflect, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<Row>& i) { return i.param.name; });

// Forged state (issue 16): a rank's announced collective of 1,000 packets and a group frontier
// claiming all of them arrived everywhere. The rank cannot have more than MW (4) uploads
// outstanding, so one call acknowledges at most the group's 2·MW slots' worth, not 1,000
// packets in a loop on the worker.
TEST(AckRankUploads, OneCallAdvancesAtMostTwoWindowsWhateverTheFrontierClaims) {
  Bench b(tree({rank(0), rank(1)}, 2, false));
  b.announce(CollectiveType::kAllReduce, 64 * 1000);  // g 100 control, 101..1100 data
  GroupState& g = b.g();
  const uint32_t before = g.acked_send_psn[0];
  g.global_frontier = 1100;
  ack_rank_uploads(g, 0, false, b.a);
  EXPECT_EQ(g.acked_send_psn[0], before + 2 * g.config->window);
  EXPECT_EQ(b.sent(), (std::vector<Sent>{ack_to(0, before + 2 * g.config->window)}));
  // The next call goes on from there.
  ack_rank_uploads(g, 0, false, b.a);
  EXPECT_EQ(g.acked_send_psn[0], before + 4 * g.config->window);
}

}  // namespace
}  // namespace epic::engine
