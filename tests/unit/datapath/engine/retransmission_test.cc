// Retransmission (retransmission.h) as a packet table. The ranks' NICs retransmit end to end;
// the switch answers each kind of retransmission so that it repairs what the retransmission
// signals: an upload every receiver acknowledged — the ACK again (a rank) or the group
// frontier again (a switch child); a duplicate contribution — by its slot's state, the result
// to that child again (complete, it receives), to the receivers again and up (complete, it
// receives nothing: Reduce), the partial up again (sent up), nothing more (aggregating), with
// the frontiers repeated and a rank parked with RNR NAK; a one-source retransmission — park the
// source and repeat the subtree frontier; park_rank — RNR NAK naming the oldest unacknowledged
// upload, only for the oldest and the newest upload, with the RNR timer backing off from
// kParkTimerFirst (12) to kParkTimerLast (21) while the same upload stays parked, restarting
// after progress, and stray copies of acknowledged uploads ignored.
//
// Each row: a group (from ack_reflect_test_util.h: rank and switch children, with or without a
// parent) with its collective announced by create_record and state set directly, one call of
// the module, and what must follow: the frames (port, destination QPN, opcode, PSN, AETH
// syndrome, payload bytes), the counters, and the park state. Group PSNs start at 100; int32,
// 256-byte path MTU (64 elements a packet); group PSN p's slot is p % 8.
#include "datapath/engine/retransmission.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "proto/vocab/aeth.h"
#include "tests/unit/datapath/engine/ack_reflect_test_util.h"

namespace epic::engine {
namespace {

using namespace acks_testing;  // NOLINT(google-build-using-namespace): the bench's vocabulary
using Make = std::unique_ptr<Bench> (*)();
using vocab::aeth::rnr_nak;

// --- Scenarios (group PSN g, rank r's send PSN s_r, receive PSN v_r) -------------------------

// AllReduce of 3 packets (g 100 ctrl, 101..103 data; every rank s = v = g). Rank 0 has sent
// all four (max_send_psn 103); its control upload is acknowledged (acked_send_psn 100), so its
// oldest unacknowledged upload is s 101. The subtree frontier is 100 (the control message).
void sent_all(Bench& b) {
  GroupState& g = b.g();
  g.max_send_psn[0] = 103;
  g.acked_recv_psn[0] = g.acked_send_psn[0] = 100;
  g.subtree_frontier = g.global_frontier = 100;
}
std::unique_ptr<Bench> with(const GroupConfig& cfg, CollectiveType t, uint16_t root = 0) {
  auto b = std::make_unique<Bench>(cfg);
  b->announce(t, 192, root);
  sent_all(*b);
  return b;
}
// Root, ranks 0 and 1.
std::unique_ptr<Bench> ar2() {
  return with(tree({rank(0), rank(1)}, 2, false), CollectiveType::kAllReduce);
}
// Ranks 0 and 1 below a parent.
std::unique_ptr<Bench> ar2_up() {
  return with(tree({rank(0), rank(1)}, 2, true), CollectiveType::kAllReduce);
}
// Root, Reduce to rank 1: rank 0 receives only the control result.
std::unique_ptr<Bench> reduce2() {
  return with(tree({rank(0), rank(1)}, 2, false), CollectiveType::kReduce, 1);
}
// Below a parent, Reduce to rank 2, beyond the parent: nobody here receives the data.
std::unique_ptr<Bench> reduce2_up_root_away() {
  return with(tree({rank(0), rank(1)}, 3, true), CollectiveType::kReduce, 2);
}
// Below a parent, Reduce to rank 1, our child.
std::unique_ptr<Bench> reduce2_up_root_here() {
  return with(tree({rank(0), rank(1)}, 3, true), CollectiveType::kReduce, 1);
}
// Root; child 0 a switch over ranks 0-1 (group PSNs), child 1 rank 2.
std::unique_ptr<Bench> sw_root() {
  return with(tree({subtree(0, 2), rank(2)}, 3, false), CollectiveType::kAllReduce);
}
// The same below a parent (frontiers: subtree 100, group 99).
std::unique_ptr<Bench> sw_mid() {
  auto b = with(tree({subtree(0, 2), rank(2)}, 3, true), CollectiveType::kAllReduce);
  b->g().global_frontier = 99;
  return b;
}
// Root; switch child 0 over ranks 0-1, rank 2 child 1; Reduce to rank 2.
std::unique_ptr<Bench> sw_reduce_root() {
  return with(tree({subtree(0, 2), rank(2)}, 3, false), CollectiveType::kReduce, 2);
}
// Broadcast of 3 packets from rank 0 (s = g 100..103); root, then below a parent.
std::unique_ptr<Bench> bcast2() {
  return with(tree({rank(0), rank(1)}, 2, false), CollectiveType::kBroadcast, 0);
}
std::unique_ptr<Bench> bcast2_up() {
  return with(tree({rank(0), rank(1)}, 2, true), CollectiveType::kBroadcast, 0);
}
// AllReduce after a Broadcast from rank 0 (2 packets, g 100..102): AllReduce g 103 ctrl,
// 104..106 data. Rank 1 sent nothing in the Broadcast: it sends the AllReduce at s 101..104
// but receives it at v 103..106 (it received the Broadcast).
std::unique_ptr<Bench> bcast_then_ar2() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, false));
  b->announce(CollectiveType::kBroadcast, 128, 0);
  b->announce(CollectiveType::kAllReduce, 192);
  GroupState& g = b->g();
  g.max_send_psn[1] = 104;
  g.acked_recv_psn[1] = 103;
  g.acked_send_psn[1] = 101;
  return b;
}
// Ranks 0 and 1 with PSNs about to wrap: initial PSN 0xFFFFFE, AllReduce g 0xFFFFFE ctrl,
// 0xFFFFFF, 0, 1 data. Rank 0 has sent them all; its uploads to 0xFFFFFF are acknowledged.
std::unique_ptr<Bench> wrap2() {
  auto b = std::make_unique<Bench>(tree({rank(0), rank(1)}, 2, false, 0xFFFFFE));
  b->announce(CollectiveType::kAllReduce, 192);
  b->g().max_send_psn[0] = 1;
  b->g().acked_send_psn[0] = 0xFFFFFF;
  return b;
}

// --- The table ---------------------------------------------------------------------------------

enum class Op {
  kAcknowledged,  // answer_acknowledged_upload(child)
  kDuplicate,     // answer_duplicate_contribution(child, ref of s psn, its slot, psn)
  kOneSource,     // answer_one_source_retransmission(child, psn)
  kPark,          // park_rank(child, psn)
};

struct In {
  Op op = Op::kPark;
  int child = 0;
  uint32_t psn = 0;  // the child's send PSN (a switch child's: the group PSN)
};

struct Counts {
  uint64_t upload_acks_sent = 0;
  uint64_t frontiers_sent = 0;
  uint64_t results_resent = 0;
  uint64_t partials_resent_up = 0;
  uint64_t rnr_naks_sent = 0;
  friend bool operator==(const Counts&, const Counts&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Counts& c) {
    return os << "{upload_acks " << c.upload_acks_sent << " frontiers " << c.frontiers_sent
              << " results_resent " << c.results_resent << " partials_resent_up "
              << c.partials_resent_up << " rnr " << c.rnr_naks_sent << "}";
  }
};

// Rank child `child`'s state after the row.
struct After {
  uint32_t acked_send = 0;
  uint32_t parked = 0;
  uint8_t rounds = 0;
  friend bool operator==(const After&, const After&) = default;
  friend std::ostream& operator<<(std::ostream& os, const After& s) {
    return os << "{acked_send " << s.acked_send << " parked " << s.parked << " rounds "
              << int{s.rounds} << "}";
  }
};

struct Row {
  const char* name;
  Make make;
  void (*before)(Bench&);  // may be null
  In in;
  std::vector<Sent> frames;
  Counts counts;
  After after;
  std::optional<bool> answered;  // park_rank's and nothing else's
};
void PrintTo(const Row& r, std::ostream* os) { *os << r.name; }

constexpr uint16_t kCtrlLen = kControlPayloadBytes;
constexpr uint8_t kImm = wire::op::kSendOnlyImm;
// Slot states of group PSN 101 (rank 0's s 101 in most scenarios).
void aggregating(Bench& b) { b.hold(101, SlotState::kAggregating); }
void sent_up(Bench& b) { b.hold(101, SlotState::kSentUp); }
void complete(Bench& b) { b.hold(101, SlotState::kComplete); }

const std::vector<Row> kRows = {
    // ---- answer_acknowledged_upload ------------------------------------------------------------
    // Every receiver acknowledged s 103; the rank lost our ACK: ACK 103 again.
    {.name = "AcknowledgedUploadRankAckAgain",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().global_frontier = 103;
           b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 103;
         },
     .in = {Op::kAcknowledged, 0, 103},
     .frames = {ack_to(0, 103)},
     .counts = {.upload_acks_sent = 1},
     .after = {103, 99, 0},
     .answered = std::nullopt},
    // The frontier passed uploads we had not acknowledged yet (s 101..103): the ACK catches up.
    {.name = "AcknowledgedUploadRankAckCatchesUp",
     .make = ar2,
     .before = [](Bench& b) { b.g().global_frontier = 103; },
     .in = {Op::kAcknowledged, 0, 102},
     .frames = {ack_to(0, 103)},
     .counts = {.upload_acks_sent = 1},
     .after = {103, 99, 0},
     .answered = std::nullopt},
    // A switch child: the group frontier again, down to it only.
    {.name = "AcknowledgedUploadSwitchChildFrontierDown",
     .make = sw_root,
     .before = [](Bench& b) { b.g().subtree_frontier = b.g().global_frontier = 103; },
     .in = {Op::kAcknowledged, 0, 103},
     .frames = {ack_to(0, 103)},
     .counts = {.frontiers_sent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    {.name = "AcknowledgedUploadSwitchChildBelowParentOnlyDown",
     .make = sw_mid,
     .before = [](Bench& b) { b.g().global_frontier = 100; },
     .in = {Op::kAcknowledged, 0, 100},
     .frames = {ack_to(0, 100)},
     .counts = {.frontiers_sent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},

    // ---- answer_duplicate_contribution: rank child ---------------------------------------------
    // Aggregating (rank 1 is late): rank 0's oldest upload s 101 again: parked, RNR NAK 101.
    {.name = "DuplicateAggregatingOldestParked",
     .make = ar2,
     .before = aggregating,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_to(0, 101, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    // An upload between the oldest and the newest: not answered at all.
    {.name = "DuplicateAggregatingBetweenNotAnswered",
     .make = ar2,
     .before = [](Bench& b) { b.hold(102, SlotState::kAggregating); },
     .in = {Op::kDuplicate, 0, 102},
     .frames = {},
     .counts = {},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // The control message again while it aggregates (nothing acknowledged: oldest s 100).
    {.name = "DuplicateControlAggregatingParked",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().acked_recv_psn[0] = b.g().acked_send_psn[0] = 99;
           b.hold(100, SlotState::kAggregating, true);
         },
     .in = {Op::kDuplicate, 0, 100},
     .frames = {ack_to(0, 100, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {99, 100, 0},
     .answered = std::nullopt},
    // Below a parent the subtree frontier (100) goes up first: it may be what was lost.
    {.name = "DuplicateAggregatingBelowParent",
     .make = ar2_up,
     .before = aggregating,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_up(100), ack_to(0, 101, rnr_nak(12))},
     .counts = {.frontiers_sent = 1, .rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    // Sent up, result not back: the partial again to the parent (g 101, 256 bytes), park.
    {.name = "DuplicateSentUpPartialAgain",
     .make = ar2_up,
     .before = sent_up,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_up(100), data_up(101, 256), ack_to(0, 101, rnr_nak(12))},
     .counts = {.frontiers_sent = 1, .partials_resent_up = 1, .rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    // Complete, and the rank receives it (AllReduce): the result to it alone; no park.
    {.name = "DuplicateCompleteResultToChild",
     .make = ar2,
     .before = complete,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {data_to(0, 101, 256)},
     .counts = {.results_resent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    {.name = "DuplicateCompleteResultToChildBelowParent",
     .make = ar2_up,
     .before = complete,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_up(100), data_to(0, 101, 256)},
     .counts = {.frontiers_sent = 1, .results_resent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // The result goes at the rank's receive PSN: rank 1's upload s 102 is AllReduce data 0
    // (g 104), which it receives at v 104.
    {.name = "DuplicateCompleteResultAtReceivePsn",
     .make = bcast_then_ar2,
     .before = [](Bench& b) { b.hold(104, SlotState::kComplete); },
     .in = {Op::kDuplicate, 1, 102},
     .frames = {data_to(1, 104, 256)},
     .counts = {.results_resent = 1},
     .after = {101, 99, 0},
     .answered = std::nullopt},
    // The control result again (SEND with immediate, the descriptor's bytes).
    {.name = "DuplicateControlCompleteResultToChild",
     .make = ar2,
     .before = [](Bench& b) { b.hold(100, SlotState::kComplete, true); },
     .in = {Op::kDuplicate, 0, 100},
     .frames = {data_to(0, 100, kCtrlLen, kImm)},
     .counts = {.results_resent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // Reduce at the root, non-root rank 0 (receives nothing): it waits for the root's ACK, whose
    // last copy may be lost: the result again to the root (rank 1, v 101), and park rank 0.
    {.name = "DuplicateCompleteNonReceiverAtRoot",
     .make = reduce2,
     .before = complete,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {data_to(1, 101, 256), ack_to(0, 101, rnr_nak(12))},
     .counts = {.results_resent = 1, .rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    // Below a parent with the root elsewhere: nobody here receives it; the result goes up so
    // the root's switch sends it to the root again.
    {.name = "DuplicateCompleteNonReceiverRootAway",
     .make = reduce2_up_root_away,
     .before = complete,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_up(100), data_up(101, 256), ack_to(0, 101, rnr_nak(12))},
     .counts = {.frontiers_sent = 1, .results_resent = 1, .rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    // Below a parent with the root our child: to the root here, and up.
    {.name = "DuplicateCompleteNonReceiverRootHere",
     .make = reduce2_up_root_here,
     .before = complete,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_up(100), data_to(1, 101, 256), data_up(101, 256), ack_to(0, 101, rnr_nak(12))},
     .counts = {.frontiers_sent = 1, .results_resent = 1, .rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},

    // ---- answer_duplicate_contribution: switch child (never parked) ---------------------------
    {.name = "DuplicateSwitchChildAggregating",
     .make = sw_root,
     .before = aggregating,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_to(0, 100)},
     .counts = {.frontiers_sent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // Complete: the group frontier down, and the result at its group PSN.
    {.name = "DuplicateSwitchChildComplete",
     .make = sw_root,
     .before = complete,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_to(0, 100), data_to(0, 101, 256)},
     .counts = {.frontiers_sent = 1, .results_resent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // Sent up below a parent: group frontier (99) down, subtree frontier (100) up, partial up.
    {.name = "DuplicateSwitchChildSentUpBelowParent",
     .make = sw_mid,
     .before = sent_up,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_to(0, 99), ack_up(100), data_up(101, 256)},
     .counts = {.frontiers_sent = 2, .partials_resent_up = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // Reduce to rank 2 (child 1): the switch child receives nothing; the result again to
    // rank 2 (v 101); no park (a switch).
    {.name = "DuplicateSwitchChildCompleteNonReceiver",
     .make = sw_reduce_root,
     .before = complete,
     .in = {Op::kDuplicate, 0, 101},
     .frames = {ack_to(0, 100), data_to(1, 101, 256)},
     .counts = {.frontiers_sent = 1, .results_resent = 1},
     .after = {100, 99, 0},
     .answered = std::nullopt},

    // ---- answer_one_source_retransmission (Broadcast source rank 0, s 100 acknowledged) -------
    {.name = "OneSourceOldestParked",
     .make = bcast2,
     .before = nullptr,
     .in = {Op::kOneSource, 0, 101},
     .frames = {ack_to(0, 101, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    {.name = "OneSourceNewestParked",
     .make = bcast2,
     .before = nullptr,
     .in = {Op::kOneSource, 0, 103},
     .frames = {ack_to(0, 101, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    {.name = "OneSourceBetweenNotAnswered",
     .make = bcast2,
     .before = nullptr,
     .in = {Op::kOneSource, 0, 102},
     .frames = {},
     .counts = {},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // Below a parent: parked, and the subtree frontier (100) up.
    {.name = "OneSourceBelowParentFrontierUp",
     .make = bcast2_up,
     .before = nullptr,
     .in = {Op::kOneSource, 0, 101},
     .frames = {ack_to(0, 101, rnr_nak(12)), ack_up(100)},
     .counts = {.frontiers_sent = 1, .rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = std::nullopt},
    // Not parked (between): no frontier either.
    {.name = "OneSourceBelowParentBetweenNothing",
     .make = bcast2_up,
     .before = nullptr,
     .in = {Op::kOneSource, 0, 102},
     .frames = {},
     .counts = {},
     .after = {100, 99, 0},
     .answered = std::nullopt},
    // A stray copy of an acknowledged upload (s 100): nothing.
    {.name = "OneSourceAcknowledgedCopyIgnored",
     .make = bcast2_up,
     .before = nullptr,
     .in = {Op::kOneSource, 0, 100},
     .frames = {},
     .counts = {},
     .after = {100, 99, 0},
     .answered = std::nullopt},

    // ---- park_rank (AllReduce, rank 0 sent s 100..103, s 100 acknowledged: oldest 101) ---------
    {.name = "ParkFirstOldest",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kPark, 0, 101},
     .frames = {ack_to(0, 101, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = true},
    {.name = "ParkFirstNewestNamesOldest",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kPark, 0, 103},
     .frames = {ack_to(0, 101, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 0},
     .answered = true},
    {.name = "ParkBetweenNotAnswered",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().parked_psn[0] = 101;
           b.g().park_rounds[0] = 4;
         },
     .in = {Op::kPark, 0, 102},
     .frames = {},
     .counts = {},
     .after = {100, 101, 4},
     .answered = false},
    // The oldest again: the next round, one timer code longer.
    {.name = "ParkOldestAgainNextRound",
     .make = ar2,
     .before = [](Bench& b) { b.g().parked_psn[0] = 101; },
     .in = {Op::kPark, 0, 101},
     .frames = {ack_to(0, 101, rnr_nak(13))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 1},
     .answered = true},
    // The newest within a round: the same code (the oldest's copy was lost).
    {.name = "ParkNewestSameRound",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().parked_psn[0] = 101;
           b.g().park_rounds[0] = 3;
         },
     .in = {Op::kPark, 0, 103},
     .frames = {ack_to(0, 101, rnr_nak(15))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 3},
     .answered = true},
    {.name = "ParkReachesLastTimer",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().parked_psn[0] = 101;
           b.g().park_rounds[0] = 8;
         },
     .in = {Op::kPark, 0, 101},
     .frames = {ack_to(0, 101, rnr_nak(21))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 9},
     .answered = true},
    {.name = "ParkStaysAtLastTimer",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().parked_psn[0] = 101;
           b.g().park_rounds[0] = 9;
         },
     .in = {Op::kPark, 0, 101},
     .frames = {ack_to(0, 101, rnr_nak(21))},
     .counts = {.rnr_naks_sent = 1},
     .after = {100, 101, 9},
     .answered = true},
    // Progress (s 101 acknowledged since it was parked): the back-off starts again at 12.
    {.name = "ParkRestartsAfterProgress",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().acked_send_psn[0] = 101;
           b.g().parked_psn[0] = 101;
           b.g().park_rounds[0] = 9;
         },
     .in = {Op::kPark, 0, 102},
     .frames = {ack_to(0, 102, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {101, 102, 0},
     .answered = true},
    {.name = "ParkRestartsAfterProgressOnNewest",
     .make = ar2,
     .before =
         [](Bench& b) {
           b.g().acked_send_psn[0] = 101;
           b.g().parked_psn[0] = 101;
           b.g().park_rounds[0] = 9;
         },
     .in = {Op::kPark, 0, 103},
     .frames = {ack_to(0, 102, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {101, 102, 0},
     .answered = true},
    // One upload outstanding: it is the oldest and the newest.
    {.name = "ParkOneOutstanding",
     .make = ar2,
     .before = [](Bench& b) { b.g().acked_send_psn[0] = 102; },
     .in = {Op::kPark, 0, 103},
     .frames = {ack_to(0, 103, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {102, 103, 0},
     .answered = true},
    // Stray copies of acknowledged uploads park nobody: one below the oldest, and the newest
    // once everything is acknowledged (it is still max_send_psn).
    {.name = "ParkIgnoresAcknowledgedCopy",
     .make = ar2,
     .before = nullptr,
     .in = {Op::kPark, 0, 100},
     .frames = {},
     .counts = {},
     .after = {100, 99, 0},
     .answered = false},
    {.name = "ParkIgnoresAcknowledgedNewest",
     .make = ar2,
     .before = [](Bench& b) { b.g().acked_send_psn[0] = 103; },
     .in = {Op::kPark, 0, 103},
     .frames = {},
     .counts = {},
     .after = {103, 99, 0},
     .answered = false},
    // Across the PSN wrap: oldest 0 (after 0xFFFFFF), newest 1.
    {.name = "ParkAcrossWrapOldest",
     .make = wrap2,
     .before = nullptr,
     .in = {Op::kPark, 0, 0},
     .frames = {ack_to(0, 0, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {0xFFFFFF, 0, 0},
     .answered = true},
    {.name = "ParkAcrossWrapNewest",
     .make = wrap2,
     .before = nullptr,
     .in = {Op::kPark, 0, 1},
     .frames = {ack_to(0, 0, rnr_nak(12))},
     .counts = {.rnr_naks_sent = 1},
     .after = {0xFFFFFF, 0, 0},
     .answered = true},
    {.name = "ParkAcrossWrapAcknowledgedCopy",
     .make = wrap2,
     .before = nullptr,
     .in = {Op::kPark, 0, 0xFFFFFF},
     .frames = {},
     .counts = {},
     .after = {0xFFFFFF, 0xFFFFFD, 0},
     .answered = false},
};

class Retransmission : public ::testing::TestWithParam<Row> {};

TEST_P(Retransmission, Row) {
  const Row& r = GetParam();
  const auto b = r.make();
  GroupState& g = b->g();
  if (r.before) r.before(*b);
  std::optional<bool> answered;
  switch (r.in.op) {
    case Op::kAcknowledged:
      answer_acknowledged_upload(g, r.in.child, b->a);
      break;
    case Op::kDuplicate: {
      // What the caller (mode2.cc) hands over: the packet the PSN names, and its slot.
      const PacketRef ref = locate_send(g, r.in.child, r.in.psn);
      ASSERT_TRUE(ref.known());
      answer_duplicate_contribution(g, r.in.child, ref, b->slots.index(ref.gpsn()), r.in.psn, b->a);
      break;
    }
    case Op::kOneSource:
      answer_one_source_retransmission(g, r.in.child, r.in.psn, b->a);
      break;
    case Op::kPark:
      answered = park_rank(g, r.in.child, r.in.psn, b->a);
      break;
  }
  EXPECT_EQ(b->sent(), r.frames);
  EXPECT_EQ(b->n.tx_frames, r.frames.size());
  const EngineCounters& n = b->n;
  EXPECT_EQ((Counts{n.upload_acks_sent, n.frontiers_sent, n.results_resent, n.partials_resent_up,
                    n.rnr_naks_sent}),
            r.counts);
  // Answers are never first replications, nor counted as dispositions (the caller counts).
  EXPECT_EQ(n.results_replicated + n.rx_accounted() + n.slots_recycled, 0u);
  const auto c = static_cast<size_t>(r.in.child);
  EXPECT_EQ((After{g.acked_send_psn[c], g.parked_psn[c], g.park_rounds[c]}), r.after);
  EXPECT_EQ(answered, r.answered);
}

INSTANTIATE_TEST_SUITE_P(Table, Retransmission, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<Row>& i) { return i.param.name; });

// One rank parked for a long wait, as the NIC would retransmit: each round starts with the
// oldest upload (s 101), and the newest (s 103) within the round gets the round's code. The
// codes go 12, 13, ..., 21 and stay at 21 (15.36 ms); after progress they start at 12 again.
TEST(RetransmissionPark, BackOffOverRounds) {
  const auto b = ar2();
  GroupState& g = b->g();
  std::vector<uint8_t> oldest;
  std::vector<uint8_t> newest;
  for (int round = 0; round < 13; ++round) {
    b->tx.clear();
    ASSERT_TRUE(park_rank(g, 0, 101, b->a));
    ASSERT_TRUE(park_rank(g, 0, 103, b->a));
    ASSERT_FALSE(park_rank(g, 0, 102, b->a));
    const auto s = b->sent();
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].psn, 101u);
    EXPECT_EQ(s[1].psn, 101u);
    oldest.push_back(s[0].syndrome);
    newest.push_back(s[1].syndrome);
  }
  std::vector<uint8_t> want;
  for (const int code : {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 21, 21, 21}) {
    want.push_back(rnr_nak(static_cast<uint8_t>(code)));
  }
  EXPECT_EQ(oldest, want);
  EXPECT_EQ(newest, want);
  EXPECT_EQ(b->n.rnr_naks_sent, 26u);
  EXPECT_EQ(kParkTimerFirst, 12);
  EXPECT_EQ(kParkTimerLast, 21);
  EXPECT_EQ(vocab::aeth::kRnrTimerNs[kParkTimerFirst], 640'000u);
  EXPECT_EQ(vocab::aeth::kRnrTimerNs[kParkTimerLast], 15'360'000u);
  // s 101 acknowledged: s 102 is the oldest, parked at the first code.
  g.acked_send_psn[0] = 101;
  b->tx.clear();
  ASSERT_TRUE(park_rank(g, 0, 102, b->a));
  EXPECT_EQ(b->sent(), (std::vector<Sent>{ack_to(0, 102, rnr_nak(12))}));
}

}  // namespace
}  // namespace epic::engine
