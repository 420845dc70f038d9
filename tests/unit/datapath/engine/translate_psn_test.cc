// TranslateHeader, the PSN half (translate_psn.h), as packet tables: create_record announces a
// collective (a record at the end of every child's send and receive sequence and of the group
// PSN space), locate_send/locate_recv/locate_group turn a PSN of one sequence into a packet of
// an announced collective, recv_psn/send_psn turn a packet into a child's PSN, and
// child_sends/child_receives/fan_in say which children take part in a packet.
//
// The group: five ranks at a root switch, path MTU 256 (64 int32 per packet); child 0 is rank
// 0, child 1 a lower switch above ranks 1..3 (the group PSN space), child 2 is rank 4. Every
// expected PSN below is worked out by hand from proto/vocab/collective_map.h's layout and
// written as an offset from the group's initial PSN S; the sequence tables run for S = 1000 and
// for S just before the 2^24 wrap. Also covered: the history ring overwriting its oldest records
// (history_records(1) = 4), a PSN more than 2^23 behind a sequence's end, a PSN not announced
// yet, a PSN before the first collective.
#include "datapath/engine/translate_psn.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datapath/engine/group_instance.h"

namespace epic::engine {
namespace {

using vocab::DType;
using vocab::ReduceOp;
using CT = CollectiveType;

constexpr uint32_t kMask = 0xFFFFFF;

// S + off, in the 24-bit PSN space.
uint32_t at(uint32_t s, int64_t off) { return static_cast<uint32_t>((s + off) & kMask); }

CollectiveDescriptor desc(CT type, uint32_t count, uint16_t root = 0) {
  return {type, DType::kInt32, ReduceOp::kSum, root, count};
}

// The group the file's comment describes.
GroupConfig five_rank_group(uint32_t initial_psn, uint32_t window) {
  GroupConfig cfg;
  cfg.group_id = 42;
  cfg.num_ranks = 5;
  cfg.window = window;
  cfg.pmtu = 256;
  cfg.initial_psn = initial_psn;
  const auto child = [](bool is_rank, uint16_t first, uint16_t count, uint8_t k) {
    ChildLink l;
    l.local = {{2, 0xEE, 0, 0, 0, 1}, 0x0AC80001, 0x5000u + k};
    l.remote = {{2, 0xAA, 0, 0, 0, k}, 0x0A640010u + k, 0x200u + k};
    l.port = k;
    l.is_rank = is_rank;
    l.first_rank = first;
    l.rank_count = count;
    return l;
  };
  cfg.children = {child(true, 0, 1, 0), child(false, 1, 3, 1), child(true, 4, 1, 2)};
  return cfg;
}

struct TestGroup {
  std::unique_ptr<SlotRegion> slots;
  std::unique_ptr<GroupInstance> inst;
  GroupState& g() { return inst->state; }
};

TestGroup make_group(uint32_t initial_psn, uint32_t window = 4) {
  TestGroup t;
  t.slots = std::make_unique<SlotRegion>(window, 256);
  std::string error;
  t.inst = prepare_group(five_rank_group(initial_psn, window), t.slots.get(), error);
  EXPECT_EQ(error, "");
  return t;
}

// --- create_record, one primitive on a fresh group --------------------------------------------

struct CreateRow {
  const char* name;
  CollectiveDescriptor d;
  uint32_t n_data;                           // data packets in the group PSN space
  std::array<uint32_t, 3> sent;              // data packets each child sends (switch child: n_data)
  std::array<uint32_t, 3> recvd;             // data packets each child receives
  std::optional<uint32_t> one_source_until;  // offset from S; nullopt: stays unset
};

const CreateRow kCreateRows[] = {
    // 160 int32 = 640 B = 256 + 256 + 128.
    {"AllReduce", desc(CT::kAllReduce, 160), 3, {3, 3, 3}, {3, 3, 3}, std::nullopt},
    // Only the root receives: rank 0 receives nothing; the switch child is in group PSNs.
    {"Reduce root 4", desc(CT::kReduce, 128, 4), 2, {2, 2, 2}, {0, 2, 2}, std::nullopt},
    {"Reduce root 2 (below the switch)",
     desc(CT::kReduce, 128, 2),
     2,
     {2, 2, 2},
     {0, 2, 0},
     std::nullopt},
    // 100 int32 = 400 B = 2 packets; only the root sends, every other rank receives.
    {"Broadcast root 2 (below the switch)",
     desc(CT::kBroadcast, 100, 2),
     2,
     {0, 2, 0},
     {2, 2, 2},
     2},
    {"Broadcast root 0", desc(CT::kBroadcast, 100, 0), 2, {2, 2, 0}, {0, 2, 2}, 2},
    {"Barrier", desc(CT::kBarrier, 0), 0, {0, 0, 0}, {0, 0, 0}, std::nullopt},
    // 96 int32 = 384 B per chunk = 2 packets; 5 chunks = 10; rank q receives chunk q.
    {"ReduceScatter", desc(CT::kReduceScatter, 96), 10, {10, 10, 10}, {2, 10, 2}, std::nullopt},
    // 32 int32 = 128 B per chunk = 1 packet; rank q sends chunk q and receives the other 4.
    {"AllGather 1 packet per chunk", desc(CT::kAllGather, 32), 5, {1, 5, 1}, {4, 5, 4}, 5},
    {"AllGather 2 packets per chunk", desc(CT::kAllGather, 100), 10, {2, 10, 2}, {8, 10, 8}, 10},
};

TEST(TranslatePsnCreateRecord, EachPrimitiveAdvancesEverySequenceByWhatEachChildSendsAndReceives) {
  constexpr uint32_t s = 1000;
  for (const CreateRow& row : kCreateRows) {
    SCOPED_TRACE(row.name);
    TestGroup t = make_group(s);
    GroupState& g = t.g();
    const CollectiveRecord* rec = create_record(g, row.d);
    ASSERT_EQ(rec, &g.history[0]);
    EXPECT_EQ(g.collectives, 1u);
    EXPECT_EQ(rec->shape.desc, row.d);
    EXPECT_EQ(rec->shape.n_data, row.n_data);
    EXPECT_EQ(rec->g_ctrl, s);
    EXPECT_EQ(g.next_g_ctrl, s + 1 + row.n_data);
    for (size_t c = 0; c < 3; ++c) {
      SCOPED_TRACE(c);
      EXPECT_EQ(rec->send_ctrl[c], s);
      EXPECT_EQ(rec->recv_ctrl[c], s);
      EXPECT_EQ(g.next_send_ctrl[c], s + 1 + row.sent[c]);
      EXPECT_EQ(g.next_recv_ctrl[c], s + 1 + row.recvd[c]);
    }
    if (row.one_source_until) {
      EXPECT_EQ(g.one_source_until, std::optional<uint32_t>(s + *row.one_source_until));
    } else {
      EXPECT_FALSE(g.one_source_until.has_value());
    }
  }
}

// --- the six primitives in a row: the ranks' PSNs drift apart ---------------------------------
//
//   #  collective               g_ctrl  send_ctrl c0,c1,c2  recv_ctrl c0,c1,c2  one_source_until
//   1  AllReduce (3)              0        0, 0, 0            0, 0, 0          -
//   2  Reduce root 4 (2)          4        4, 4, 4            4, 4, 4          -
//   3  Broadcast root 2 (2)       7        7, 7, 7            5, 7, 7          9
//   4  Barrier                   10        8,10, 8            8,10,10          9
//   5  ReduceScatter (5 x 2)     11        9,11, 9            9,11,11          9
//   6  AllGather (5 x 1)         22       20,22,20           12,22,14          27
//   next                         28       22,28,22           17,28,19

const CollectiveDescriptor kSequence[] = {
    desc(CT::kAllReduce, 160), desc(CT::kReduce, 128, 4),    desc(CT::kBroadcast, 100, 2),
    desc(CT::kBarrier, 0),     desc(CT::kReduceScatter, 96), desc(CT::kAllGather, 32),
};

struct SequenceRow {
  uint32_t g_ctrl;
  std::array<uint32_t, 3> send_ctrl;
  std::array<uint32_t, 3> recv_ctrl;
  std::optional<uint32_t> one_source_until;  // after this collective
};

const SequenceRow kSequenceRows[] = {
    {0, {0, 0, 0}, {0, 0, 0}, std::nullopt},
    {4, {4, 4, 4}, {4, 4, 4}, std::nullopt},
    {7, {7, 7, 7}, {5, 7, 7}, 9},
    {10, {8, 10, 8}, {8, 10, 10}, 9},
    {11, {9, 11, 9}, {9, 11, 11}, 9},
    {22, {20, 22, 20}, {12, 22, 14}, 27},
};
constexpr uint32_t kNextG = 28;
constexpr std::array<uint32_t, 3> kNextSend = {22, 28, 22};
constexpr std::array<uint32_t, 3> kNextRecv = {17, 28, 19};

// Initial PSNs: away from the wrap, with the wrap inside the ReduceScatter, right at it, at 0.
constexpr uint32_t kStarts[] = {1000, 0xFFFFF0, 0xFFFFFF, 0};

TestGroup sequence_group(uint32_t s) {
  TestGroup t = make_group(s);
  for (const CollectiveDescriptor& d : kSequence) create_record(t.g(), d);
  return t;
}

TEST(TranslatePsnCreateRecord, SixPrimitivesInARowDriftTheRanksApartAcrossTheWrap) {
  for (const uint32_t s : kStarts) {
    SCOPED_TRACE(s);
    TestGroup t = make_group(s);
    GroupState& g = t.g();
    for (size_t k = 0; k < std::size(kSequence); ++k) {
      SCOPED_TRACE(k + 1);
      const SequenceRow& row = kSequenceRows[k];
      const CollectiveRecord* rec = create_record(g, kSequence[k]);
      ASSERT_EQ(rec, &g.history[k]);
      EXPECT_EQ(rec->g_ctrl, at(s, row.g_ctrl));
      for (size_t c = 0; c < 3; ++c) {
        EXPECT_EQ(rec->send_ctrl[c], at(s, row.send_ctrl[c])) << "child " << c;
        EXPECT_EQ(rec->recv_ctrl[c], at(s, row.recv_ctrl[c])) << "child " << c;
      }
      if (row.one_source_until) {
        EXPECT_EQ(g.one_source_until, std::optional<uint32_t>(at(s, *row.one_source_until)));
      } else {
        EXPECT_FALSE(g.one_source_until.has_value());
      }
    }
    EXPECT_EQ(g.collectives, 6u);
    EXPECT_EQ(g.next_g_ctrl, at(s, kNextG));
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(g.next_send_ctrl[c], at(s, kNextSend[c])) << "child " << c;
      EXPECT_EQ(g.next_recv_ctrl[c], at(s, kNextRecv[c])) << "child " << c;
    }
    // Nothing else of the state is create_record's to change.
    for (size_t c = 0; c < 3; ++c) EXPECT_EQ(g.child_frontier[c], at(s, -1));
    EXPECT_EQ(g.subtree_frontier, at(s, -1));
  }
}

// --- locate_send / locate_recv / locate_group on the sequence ---------------------------------

enum class Seq { kSend, kRecv, kGroup };

struct LocateRow {
  const char* what;
  Seq seq;
  int child;    // unused for kGroup
  int64_t off;  // the PSN, as an offset from S
  int coll;     // 1..6 (kSequence), 0: no packet
  bool control;
  uint32_t j;
};

PacketRef locate(const GroupState& g, Seq seq, int child, uint32_t psn) {
  switch (seq) {
    case Seq::kSend:
      return locate_send(g, child, psn);
    case Seq::kRecv:
      return locate_recv(g, child, psn);
    case Seq::kGroup:
      return locate_group(g, psn);
  }
  return {};
}

const LocateRow kLocateRows[] = {
    // Rank 0's sends: every packet of AllReduce, Reduce, ReduceScatter, chunk 0 of AllGather.
    {"c0 send: first control message", Seq::kSend, 0, 0, 1, true, 0},
    {"c0 send: AllReduce first data", Seq::kSend, 0, 1, 1, false, 0},
    {"c0 send: AllReduce last data", Seq::kSend, 0, 3, 1, false, 2},
    {"c0 send: Reduce control", Seq::kSend, 0, 4, 2, true, 0},
    {"c0 send: Reduce last data", Seq::kSend, 0, 6, 2, false, 1},
    {"c0 send: Broadcast control (sends no data)", Seq::kSend, 0, 7, 3, true, 0},
    {"c0 send: Barrier control", Seq::kSend, 0, 8, 4, true, 0},
    {"c0 send: ReduceScatter control", Seq::kSend, 0, 9, 5, true, 0},
    {"c0 send: ReduceScatter first data", Seq::kSend, 0, 10, 5, false, 0},
    {"c0 send: ReduceScatter last data", Seq::kSend, 0, 19, 5, false, 9},
    {"c0 send: AllGather control", Seq::kSend, 0, 20, 6, true, 0},
    {"c0 send: AllGather, its own chunk 0", Seq::kSend, 0, 21, 6, false, 0},
    {"c0 send: next control, not announced", Seq::kSend, 0, 22, 0, false, 0},
    {"c0 send: further ahead", Seq::kSend, 0, 30, 0, false, 0},
    {"c0 send: before the first collective", Seq::kSend, 0, -1, 0, false, 0},
    {"c0 send: 2^22 ahead", Seq::kSend, 0, 22 + (1 << 22), 0, false, 0},
    // Rank 4: same PSN, another packet (its chunk of the AllGather is chunk 4).
    {"c2 send: Broadcast control", Seq::kSend, 2, 7, 3, true, 0},
    {"c2 send: Barrier control", Seq::kSend, 2, 8, 4, true, 0},
    {"c2 send: AllGather control", Seq::kSend, 2, 20, 6, true, 0},
    {"c2 send: AllGather, its own chunk 4", Seq::kSend, 2, 21, 6, false, 4},
    {"c2 send: not announced", Seq::kSend, 2, 22, 0, false, 0},
    // A switch child sends in group PSNs.
    {"c1 send: Broadcast first data", Seq::kSend, 1, 8, 3, false, 0},
    {"c1 send: Broadcast last data", Seq::kSend, 1, 9, 3, false, 1},
    {"c1 send: Barrier control", Seq::kSend, 1, 10, 4, true, 0},
    {"c1 send: AllGather chunk 4", Seq::kSend, 1, 27, 6, false, 4},
    {"c1 send: not announced", Seq::kSend, 1, 28, 0, false, 0},
    // Rank 0 receives: no Reduce data (root 4), chunk 0 of ReduceScatter, AllGather 1..4.
    {"c0 recv: first control result", Seq::kRecv, 0, 0, 1, true, 0},
    {"c0 recv: AllReduce last data", Seq::kRecv, 0, 3, 1, false, 2},
    {"c0 recv: Reduce control", Seq::kRecv, 0, 4, 2, true, 0},
    {"c0 recv: Broadcast control", Seq::kRecv, 0, 5, 3, true, 0},
    {"c0 recv: Broadcast first data", Seq::kRecv, 0, 6, 3, false, 0},
    {"c0 recv: Broadcast last data", Seq::kRecv, 0, 7, 3, false, 1},
    {"c0 recv: Barrier control", Seq::kRecv, 0, 8, 4, true, 0},
    {"c0 recv: ReduceScatter control", Seq::kRecv, 0, 9, 5, true, 0},
    {"c0 recv: ReduceScatter chunk 0, first", Seq::kRecv, 0, 10, 5, false, 0},
    {"c0 recv: ReduceScatter chunk 0, last", Seq::kRecv, 0, 11, 5, false, 1},
    {"c0 recv: AllGather control", Seq::kRecv, 0, 12, 6, true, 0},
    {"c0 recv: AllGather first (chunk 1)", Seq::kRecv, 0, 13, 6, false, 1},
    {"c0 recv: AllGather last (chunk 4)", Seq::kRecv, 0, 16, 6, false, 4},
    {"c0 recv: not announced", Seq::kRecv, 0, 17, 0, false, 0},
    {"c0 recv: before the first collective", Seq::kRecv, 0, -5, 0, false, 0},
    // Rank 4 receives every Reduce packet, chunk 4 of ReduceScatter, AllGather 0..3.
    {"c2 recv: Reduce last data", Seq::kRecv, 2, 6, 2, false, 1},
    {"c2 recv: Broadcast control", Seq::kRecv, 2, 7, 3, true, 0},
    {"c2 recv: Broadcast last data", Seq::kRecv, 2, 9, 3, false, 1},
    {"c2 recv: Barrier control", Seq::kRecv, 2, 10, 4, true, 0},
    {"c2 recv: ReduceScatter control", Seq::kRecv, 2, 11, 5, true, 0},
    {"c2 recv: ReduceScatter chunk 4, first", Seq::kRecv, 2, 12, 5, false, 8},
    {"c2 recv: ReduceScatter chunk 4, last", Seq::kRecv, 2, 13, 5, false, 9},
    {"c2 recv: AllGather control", Seq::kRecv, 2, 14, 6, true, 0},
    {"c2 recv: AllGather first (chunk 0)", Seq::kRecv, 2, 15, 6, false, 0},
    {"c2 recv: AllGather last (chunk 3)", Seq::kRecv, 2, 18, 6, false, 3},
    {"c2 recv: not announced", Seq::kRecv, 2, 19, 0, false, 0},
    // The group PSN space.
    {"group: first control", Seq::kGroup, 0, 0, 1, true, 0},
    {"group: Reduce control", Seq::kGroup, 0, 4, 2, true, 0},
    {"group: Barrier control", Seq::kGroup, 0, 10, 4, true, 0},
    {"group: ReduceScatter control", Seq::kGroup, 0, 11, 5, true, 0},
    {"group: ReduceScatter last data", Seq::kGroup, 0, 21, 5, false, 9},
    {"group: AllGather control", Seq::kGroup, 0, 22, 6, true, 0},
    {"group: AllGather first data", Seq::kGroup, 0, 23, 6, false, 0},
    {"group: AllGather last data", Seq::kGroup, 0, 27, 6, false, 4},
    {"group: not announced", Seq::kGroup, 0, 28, 0, false, 0},
    {"group: before the first collective", Seq::kGroup, 0, -1, 0, false, 0},
    {"group: 2^23 + 1 back", Seq::kGroup, 0, 28 - (1 << 23) - 1, 0, false, 0},
};

// Group PSN offsets of the six control messages (kSequenceRows' g_ctrl).
constexpr uint32_t kGCtrl[] = {0, 4, 7, 10, 11, 22};
constexpr CT kTypes[] = {CT::kAllReduce, CT::kReduce,        CT::kBroadcast,
                         CT::kBarrier,   CT::kReduceScatter, CT::kAllGather};

TEST(TranslatePsnLocate, EverySequenceMapsToTheRightPacketAcrossTheWrap) {
  for (const uint32_t s : kStarts) {
    SCOPED_TRACE(s);
    TestGroup t = sequence_group(s);
    for (const LocateRow& row : kLocateRows) {
      SCOPED_TRACE(row.what);
      const PacketRef ref = locate(t.g(), row.seq, row.child, at(s, row.off));
      if (row.coll == 0) {
        EXPECT_FALSE(ref.known());
        continue;
      }
      ASSERT_TRUE(ref.known());
      const auto k = static_cast<size_t>(row.coll - 1);
      EXPECT_EQ(ref.record, &t.g().history[k]);
      EXPECT_EQ(ref.record->shape.desc.type, kTypes[k]);
      EXPECT_EQ(ref.record->g_ctrl, at(s, kGCtrl[k]));
      EXPECT_EQ(ref.control, row.control);
      if (!row.control) {
        EXPECT_EQ(ref.j, row.j);
      }
      EXPECT_EQ(ref.gpsn(), at(s, kGCtrl[k] + (row.control ? 0 : 1 + row.j)));
    }
  }
}

// --- recv_psn / send_psn on the sequence ------------------------------------------------------

struct PsnRow {
  const char* what;
  bool send;  // send_psn (else recv_psn)
  int coll;   // 1..6
  bool control;
  uint32_t j;
  size_t child;
  uint32_t off;  // expected PSN, offset from S
};

const PsnRow kPsnRows[] = {
    {"recv c0 AllReduce control", false, 1, true, 0, 0, 0},
    {"recv c0 AllReduce j2", false, 1, false, 2, 0, 3},
    {"recv c1 AllReduce j2 (group PSN)", false, 1, false, 2, 1, 3},
    {"recv c2 AllReduce j2", false, 1, false, 2, 2, 3},
    {"recv c1 Reduce j1 (group PSN)", false, 2, false, 1, 1, 6},
    {"recv c2 Reduce j1", false, 2, false, 1, 2, 6},
    {"recv c0 Broadcast control", false, 3, true, 0, 0, 5},
    {"recv c0 Broadcast j0", false, 3, false, 0, 0, 6},
    {"recv c0 Broadcast j1", false, 3, false, 1, 0, 7},
    {"recv c1 Broadcast j0", false, 3, false, 0, 1, 8},
    {"recv c2 Broadcast j0", false, 3, false, 0, 2, 8},
    {"recv c0 Barrier control", false, 4, true, 0, 0, 8},
    {"recv c1 Barrier control", false, 4, true, 0, 1, 10},
    {"recv c2 Barrier control", false, 4, true, 0, 2, 10},
    {"recv c0 ReduceScatter j0", false, 5, false, 0, 0, 10},
    {"recv c0 ReduceScatter j1", false, 5, false, 1, 0, 11},
    {"recv c1 ReduceScatter j4 (group PSN)", false, 5, false, 4, 1, 16},
    {"recv c2 ReduceScatter control", false, 5, true, 0, 2, 11},
    {"recv c2 ReduceScatter j9", false, 5, false, 9, 2, 13},
    {"recv c0 AllGather control", false, 6, true, 0, 0, 12},
    {"recv c0 AllGather j1", false, 6, false, 1, 0, 13},
    {"recv c0 AllGather j4", false, 6, false, 4, 0, 16},
    {"recv c1 AllGather j2 (group PSN)", false, 6, false, 2, 1, 25},
    {"recv c2 AllGather j0", false, 6, false, 0, 2, 15},
    {"recv c2 AllGather j3", false, 6, false, 3, 2, 18},
    {"send c0 AllReduce j2", true, 1, false, 2, 0, 3},
    {"send c2 Reduce j0", true, 2, false, 0, 2, 5},
    {"send c0 Broadcast control", true, 3, true, 0, 0, 7},
    {"send c0 Barrier control", true, 4, true, 0, 0, 8},
    {"send c2 Barrier control", true, 4, true, 0, 2, 8},
    {"send c2 ReduceScatter j0", true, 5, false, 0, 2, 10},
    {"send c0 ReduceScatter j9", true, 5, false, 9, 0, 19},
    {"send c2 AllGather control", true, 6, true, 0, 2, 20},
    {"send c0 AllGather j0", true, 6, false, 0, 0, 21},
    {"send c2 AllGather j4", true, 6, false, 4, 2, 21},
};

TEST(TranslatePsnRecvSendPsn, APacketGetsThePsnOfEachChildsOwnSequence) {
  for (const uint32_t s : kStarts) {
    SCOPED_TRACE(s);
    TestGroup t = sequence_group(s);
    for (const PsnRow& row : kPsnRows) {
      SCOPED_TRACE(row.what);
      const PacketRef ref{&t.g().history[static_cast<size_t>(row.coll - 1)], row.control, row.j};
      const uint32_t psn =
          row.send ? send_psn(t.g(), row.child, ref) : recv_psn(t.g(), row.child, ref);
      EXPECT_EQ(psn, at(s, row.off));
    }
  }
}

// --- child_sends / child_receives / fan_in ----------------------------------------------------

struct RoleRow {
  const char* what;
  CollectiveDescriptor d;
  bool control;
  uint32_t j;
  std::array<bool, 3> sends;
  std::array<bool, 3> receives;
  uint16_t fan_in;
};

const RoleRow kRoleRows[] = {
    {"AllReduce control", desc(CT::kAllReduce, 160), true, 0, {1, 1, 1}, {1, 1, 1}, 3},
    {"AllReduce j0", desc(CT::kAllReduce, 160), false, 0, {1, 1, 1}, {1, 1, 1}, 3},
    {"AllReduce j2", desc(CT::kAllReduce, 160), false, 2, {1, 1, 1}, {1, 1, 1}, 3},
    {"Reduce root 4 j1", desc(CT::kReduce, 128, 4), false, 1, {1, 1, 1}, {0, 0, 1}, 3},
    {"Reduce root 3 j0", desc(CT::kReduce, 128, 3), false, 0, {1, 1, 1}, {0, 1, 0}, 3},
    {"Reduce root 0 j0", desc(CT::kReduce, 128, 0), false, 0, {1, 1, 1}, {1, 0, 0}, 3},
    {"Broadcast root 2 j0", desc(CT::kBroadcast, 100, 2), false, 0, {0, 1, 0}, {1, 1, 1}, 1},
    {"Broadcast root 0 j1", desc(CT::kBroadcast, 100, 0), false, 1, {1, 0, 0}, {0, 1, 1}, 1},
    {"Broadcast root 4 j0", desc(CT::kBroadcast, 100, 4), false, 0, {0, 0, 1}, {1, 1, 0}, 1},
    {"Broadcast control", desc(CT::kBroadcast, 100, 4), true, 0, {1, 1, 1}, {1, 1, 1}, 3},
    {"Barrier control", desc(CT::kBarrier, 0), true, 0, {1, 1, 1}, {1, 1, 1}, 3},
    {"ReduceScatter j0 (chunk 0)", desc(CT::kReduceScatter, 96), false, 0, {1, 1, 1}, {1, 0, 0}, 3},
    {"ReduceScatter j3 (chunk 1)", desc(CT::kReduceScatter, 96), false, 3, {1, 1, 1}, {0, 1, 0}, 3},
    {"ReduceScatter j7 (chunk 3)", desc(CT::kReduceScatter, 96), false, 7, {1, 1, 1}, {0, 1, 0}, 3},
    {"ReduceScatter j8 (chunk 4)", desc(CT::kReduceScatter, 96), false, 8, {1, 1, 1}, {0, 0, 1}, 3},
    {"AllGather j0 (rank 0's)", desc(CT::kAllGather, 32), false, 0, {1, 0, 0}, {0, 1, 1}, 1},
    {"AllGather j2 (rank 2's)", desc(CT::kAllGather, 32), false, 2, {0, 1, 0}, {1, 1, 1}, 1},
    {"AllGather j3 (rank 3's)", desc(CT::kAllGather, 32), false, 3, {0, 1, 0}, {1, 1, 1}, 1},
    {"AllGather j4 (rank 4's)", desc(CT::kAllGather, 32), false, 4, {0, 0, 1}, {1, 1, 0}, 1},
    {"AllGather 2/chunk j3 (rank 1's)",
     desc(CT::kAllGather, 100),
     false,
     3,
     {0, 1, 0},
     {1, 1, 1},
     1},
    {"AllGather control", desc(CT::kAllGather, 32), true, 0, {1, 1, 1}, {1, 1, 1}, 3},
};

TEST(TranslatePsnRoles, WhichChildrenSendAndReceiveEachPacket) {
  for (const RoleRow& row : kRoleRows) {
    SCOPED_TRACE(row.what);
    TestGroup t = make_group(1000);
    const PacketRef ref{create_record(t.g(), row.d), row.control, row.j};
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(child_sends(t.g(), c, ref), row.sends[c]) << "child " << c;
      EXPECT_EQ(child_receives(t.g(), c, ref), row.receives[c]) << "child " << c;
    }
    EXPECT_EQ(fan_in(t.g(), ref), row.fan_in);
  }
}

// --- the history ring: window 1 keeps 2*1 + 2 = 4 records -------------------------------------
//
// Collective k (1..6) is an AllReduce of k packets (64*k int32): group PSN offsets of the
// control messages 0, 2, 5, 9, 14, 20; the sequence ends at 27. Every rank sends and receives
// every packet, so the rank sequences match the group's. After the 5th the 1st is overwritten,
// after the 6th the 2nd.

struct RingRow {
  int after;  // collectives announced
  int64_t off;
  int coll;  // 0: no packet
  bool control;
  uint32_t j;
};

constexpr uint32_t kRingCtrl[] = {0, 2, 5, 9, 14, 20};

const RingRow kRingRows[] = {
    {4, 0, 1, true, 0},   {4, 1, 1, false, 0},  {4, 13, 4, false, 3}, {4, 14, 0, false, 0},
    {5, 0, 0, false, 0},  {5, 1, 0, false, 0},  {5, 2, 2, true, 0},   {5, 4, 2, false, 1},
    {5, 19, 5, false, 4}, {5, 20, 0, false, 0}, {6, 2, 0, false, 0},  {6, 4, 0, false, 0},
    {6, 5, 3, true, 0},   {6, 8, 3, false, 2},  {6, 9, 4, true, 0},   {6, 26, 6, false, 5},
    {6, 27, 0, false, 0}, {6, -1, 0, false, 0},
};

TEST(TranslatePsnHistory, ThePacketsOfAnOverwrittenRecordAreNobodys) {
  constexpr uint32_t s = 0xFFFFF8;  // the ring's records straddle the wrap too
  for (const RingRow& row : kRingRows) {
    SCOPED_TRACE(::testing::Message() << "after " << row.after << " at +" << row.off);
    TestGroup t = make_group(s, 1);
    GroupState& g = t.g();
    ASSERT_EQ(g.history.size(), 4u);
    for (int k = 1; k <= row.after; ++k) {
      const CollectiveRecord* rec =
          create_record(g, desc(CT::kAllReduce, 64 * static_cast<uint32_t>(k)));
      ASSERT_EQ(rec, &g.history[static_cast<size_t>(k - 1) % 4]);  // the oldest slot
    }
    const uint32_t psn = at(s, row.off);
    const PacketRef refs[] = {locate_group(g, psn), locate_send(g, 0, psn), locate_send(g, 1, psn),
                              locate_recv(g, 2, psn)};
    for (const PacketRef& ref : refs) {
      if (row.coll == 0) {
        EXPECT_FALSE(ref.known());
        continue;
      }
      ASSERT_TRUE(ref.known());
      const auto k = static_cast<size_t>(row.coll - 1);
      EXPECT_EQ(ref.record, &g.history[k % 4]);
      EXPECT_EQ(ref.record->g_ctrl, at(s, kRingCtrl[k]));
      EXPECT_EQ(ref.record->shape.n_data, k + 1);
      EXPECT_EQ(ref.control, row.control);
      if (!row.control) {
        EXPECT_EQ(ref.j, row.j);
      }
    }
  }
}

// --- a full history: every packet of every record kept, found --------------------------------
//
// Window 2048 keeps kMaxHistory = 4096 records. 4146 collectives, each an AllReduce of 0..3
// packets, an AllGather of one packet per chunk or a Barrier, chosen by a fixed LCG; the
// expected sequences come from the primitives' layout worked by hand (not from the module):
//   AllReduce of n packets: group 1 + n, rank 0's sends 1 + n, rank 4's receives 1 + n;
//   AllGather, 5 chunks of 1 packet: group 1 + 5, rank 0 sends 1 + 1 (chunk 0), rank 4
//     receives 1 + 4 (chunks 0..3);
//   Barrier: 1 each.
// Every PSN of the 4096 newest records maps to its record, control message and packet; every
// PSN of the 50 overwritten ones is nobody's.

TEST(TranslatePsnHistory, EveryPacketOfAFullHistoryIsFound) {
  constexpr uint32_t s = 0xFF0000;  // the history straddles the wrap
  TestGroup t = make_group(s, 2048);
  GroupState& g = t.g();
  ASSERT_EQ(g.history.size(), size_t{kMaxHistory});
  struct Expect {
    const CollectiveRecord* rec;
    std::array<uint32_t, 3> start;  // group, rank 0's sends, rank 4's receives
    std::array<uint32_t, 3> len;
    bool allgather;
  };
  std::vector<Expect> all;
  std::array<uint32_t, 3> next{s, s, s};
  uint32_t lcg = 12345;
  for (int i = 0; i < int{kMaxHistory} + 50; ++i) {
    lcg = lcg * 1103515245u + 12345u;
    const uint32_t pick = (lcg >> 16) % 6;
    Expect e{};
    if (pick < 4) {
      e.rec = create_record(g, desc(CT::kAllReduce, 64 * pick));
      e.len = {1 + pick, 1 + pick, 1 + pick};
    } else if (pick == 4) {
      e.rec = create_record(g, desc(CT::kAllGather, 32));
      e.len = {6, 2, 5};
      e.allgather = true;
    } else {
      e.rec = create_record(g, desc(CT::kBarrier, 0));
      e.len = {1, 1, 1};
    }
    e.start = next;
    for (size_t q = 0; q < 3; ++q) next[q] = at(next[q], e.len[q]);
    all.push_back(e);
  }
  ASSERT_EQ(g.next_g_ctrl, next[0]);
  for (size_t i = 0; i < all.size(); ++i) {
    const Expect& e = all[i];
    const bool kept = i >= all.size() - kMaxHistory;
    for (size_t q = 0; q < 3; ++q) {
      for (uint32_t off = 0; off < e.len[q]; ++off) {
        const uint32_t psn = at(e.start[q], off);
        const PacketRef ref = q == 0   ? locate_group(g, psn)
                              : q == 1 ? locate_send(g, 0, psn)
                                       : locate_recv(g, 2, psn);
        if (!kept) {
          ASSERT_FALSE(ref.known()) << "record " << i << " sequence " << q << " +" << off;
          continue;
        }
        ASSERT_TRUE(ref.known()) << "record " << i << " sequence " << q << " +" << off;
        ASSERT_EQ(ref.record, e.rec) << "record " << i << " sequence " << q << " +" << off;
        ASSERT_EQ(ref.control, off == 0);
        if (off > 0) {
          // AllGather: rank 0 sends chunk 0 (j 0); rank 4 receives chunks 0..3 (j = off - 1).
          ASSERT_EQ(ref.j, e.allgather && q == 1 ? 0u : off - 1);
        }
      }
    }
  }
}

// --- records that span more than the PSN space are forgotten ----------------------------------
//
// Window 8 keeps 18 records. Announced, oldest first: 3 Barriers; AllReduces of 2^22 - 5 and
// 3 x (2^22 - 1) packets (2^22 - 4 and 2^22 PSNs each); 9 Barriers. Counted back from the end,
// the record starts lie 1..9 (the Barriers), 9 + 2^22, 9 + 2^23, 9 + 3·2^22, 2^24 + 5 and
// 2^24 + 6..8 PSNs behind: the distances of the oldest wrap past 2^24. A search over all 16
// records would meet the wrapped distances (the oldest Barrier's start reads as 8 back, before
// the newest 9th-back Barrier) and lose packets of the newest records; the module keeps only the
// records with a PSN within 2^23 of the end (the newest 11), so the order it searches is exact.

TEST(TranslatePsnHistory, RecordsWhosePsnsAreAllHalfTheSpaceBackAreForgotten) {
  constexpr uint32_t k22 = 1u << 22;
  for (const uint32_t s : {0u, 0x800000u}) {
    SCOPED_TRACE(s);
    TestGroup t = make_group(s, 8);
    GroupState& g = t.g();
    ASSERT_EQ(g.history.size(), 18u);
    std::vector<const CollectiveRecord*> recs;  // oldest first
    for (int i = 0; i < 3; ++i) recs.push_back(create_record(g, desc(CT::kBarrier, 0)));
    recs.push_back(create_record(g, desc(CT::kAllReduce, 64 * (k22 - 5))));
    for (int i = 0; i < 3; ++i)
      recs.push_back(create_record(g, desc(CT::kAllReduce, 64 * (k22 - 1))));
    for (int i = 0; i < 9; ++i) recs.push_back(create_record(g, desc(CT::kBarrier, 0)));
    const uint32_t end = g.next_g_ctrl;
    ASSERT_EQ(end, at(s, 3 + (k22 - 4) + 3 * k22 + 9));
    EXPECT_EQ(g.collectives - g.first_kept, 11u);
    // The 9 newest Barriers: 1..9 back.
    for (uint32_t back = 1; back <= 9; ++back) {
      for (const PacketRef& ref :
           {locate_group(g, at(end, -int64_t{back})), locate_send(g, 0, at(end, -int64_t{back})),
            locate_recv(g, 2, at(end, -int64_t{back}))}) {
        ASSERT_TRUE(ref.known()) << back;
        EXPECT_EQ(ref.record, recs[16 - back]);
        EXPECT_TRUE(ref.control);
      }
    }
    // The newest big AllReduce: control 9 + 2^22 back, its last packet 10 back.
    const PacketRef big_ctrl = locate_group(g, at(end, -(9 + int64_t{k22})));
    ASSERT_TRUE(big_ctrl.known());
    EXPECT_EQ(big_ctrl.record, recs[6]);
    EXPECT_TRUE(big_ctrl.control);
    const PacketRef big_last = locate_send(g, 0, at(end, -10));
    ASSERT_TRUE(big_last.known());
    EXPECT_EQ(big_last.record, recs[6]);
    EXPECT_EQ(big_last.j, k22 - 2);
    // The one before: its packets up to exactly 2^23 back are found, its control message
    // (9 + 2^23 back) is nobody's.
    const PacketRef half = locate_recv(g, 2, at(end, -int64_t{1u << 23}));
    ASSERT_TRUE(half.known());
    EXPECT_EQ(half.record, recs[5]);
    EXPECT_EQ(half.j, 8u);  // control at 9 + 2^23 back, data j at 8 + 2^23 - j back
    EXPECT_FALSE(locate_group(g, at(end, -(9 + int64_t{1u << 23}))).known());
  }
}

// --- more than 2^23 back ----------------------------------------------------------------------
//
// One AllReduce of 2^23 + 10 packets (64 * (2^23 + 10) int32): the control message at S, data j
// at S + 1 + j, the sequence ends at S + 2^23 + 11. PSN order is defined within half the space:
// a PSN exactly 2^23 behind the end is the record's, one more back is nobody's, though the
// record spans it.

struct FarRow {
  int64_t off;
  bool known;
  bool control;
  uint32_t j;
};

constexpr uint32_t kHalf = 1u << 23;

const FarRow kFarRows[] = {
    {0, false, false, 0},                  // the control message: 2^23 + 11 back
    {10, false, false, 0},                 // j 9: 2^23 + 1 back
    {11, true, false, 10},                 // j 10: exactly 2^23 back
    {12, true, false, 11},                 // j 11
    {kHalf + 10, true, false, kHalf + 9},  // the last data packet
    {kHalf + 11, false, false, 0},         // the end: not announced
    {-1, false, false, 0},                 // before the record
};

TEST(TranslatePsnLocate, APsnMoreThanHalfTheSpaceBehindTheEndIsNobodys) {
  for (const uint32_t s : {0u, 0xC00000u}) {  // the second: the record wraps in its middle
    SCOPED_TRACE(s);
    TestGroup t = make_group(s);
    GroupState& g = t.g();
    create_record(g, desc(CT::kAllReduce, 64 * (kHalf + 10)));
    ASSERT_EQ(g.next_g_ctrl, at(s, kHalf + 11));
    for (const FarRow& row : kFarRows) {
      SCOPED_TRACE(row.off);
      const uint32_t psn = at(s, row.off);
      for (const PacketRef& ref :
           {locate_group(g, psn), locate_send(g, 0, psn), locate_recv(g, 2, psn)}) {
        EXPECT_EQ(ref.known(), row.known);
        if (ref.known()) {
          EXPECT_EQ(ref.control, row.control);
          EXPECT_EQ(ref.j, row.j);
        }
      }
    }
  }
}

// --- the wrap, spelled out --------------------------------------------------------------------

TEST(TranslatePsnLocate, AnAllReduceAcrossTheWrap) {
  TestGroup t = make_group(0xFFFFFE);
  GroupState& g = t.g();
  create_record(g, desc(CT::kAllReduce, 160));  // control 0xFFFFFE, data 0xFFFFFF, 0, 1
  EXPECT_EQ(g.next_g_ctrl, 2u);
  struct {
    uint32_t psn;
    bool known;
    bool control;
    uint32_t j;
  } const rows[] = {{0xFFFFFD, false, false, 0}, {0xFFFFFE, true, true, 0},
                    {0xFFFFFF, true, false, 0},  {0, true, false, 1},
                    {1, true, false, 2},         {2, false, false, 0}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.psn);
    for (const PacketRef& ref :
         {locate_group(g, row.psn), locate_send(g, 0, row.psn), locate_recv(g, 2, row.psn)}) {
      ASSERT_EQ(ref.known(), row.known);
      if (!ref.known()) continue;
      EXPECT_EQ(ref.control, row.control);
      if (!row.control) {
        EXPECT_EQ(ref.j, row.j);
      }
      EXPECT_EQ(ref.gpsn(), row.psn);
    }
  }
  const PacketRef j1{&g.history[0], false, 1};
  EXPECT_EQ(recv_psn(g, 0, j1), 0u);
  EXPECT_EQ(send_psn(g, 2, j1), 0u);
  EXPECT_EQ(recv_psn(g, 1, PacketRef{&g.history[0], false, 2}), 1u);
}

TEST(TranslatePsnLocate, NothingIsKnownBeforeTheFirstCollective) {
  TestGroup t = make_group(1000);
  for (const uint32_t psn : {999u, 1000u, 1001u, 0u}) {
    EXPECT_FALSE(locate_group(t.g(), psn).known());
    EXPECT_FALSE(locate_send(t.g(), 0, psn).known());
    EXPECT_FALSE(locate_send(t.g(), 1, psn).known());
    EXPECT_FALSE(locate_recv(t.g(), 2, psn).known());
  }
}

}  // namespace
}  // namespace epic::engine
