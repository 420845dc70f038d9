// ReplicateData (replicate_data.h), as packet tables: replicate_data sends a packet of a
// collective down to every child with a receiver of it (Fanout kFirst, kAgain) or to one child
// (kOne), each copy addressed to that child's endpoint with the PSN of that child's receive
// sequence and AckReq set; only a first replication counts results_replicated. send_up sends a
// packet to the parent at its group PSN.
//
// The group: six ranks, this switch below the root (a parent link); child 0 is rank 0 (port
// 3), child 1 a lower switch above ranks 1..3 (port 5, group PSNs), child 2 rank 4 (port 7);
// rank 5 lies elsewhere in the tree. Path MTU 256 (64 int32 per packet). Before the collective
// under test the group ran a Broadcast from rank 0 of 2 packets, so the receive sequences have
// drifted: the collective's control message has group PSN S+3 and receive PSNs S+1 (rank 0,
// which received no data), S+3 (the switch), S+3 (rank 4). Every expected PSN is worked out by
// hand from proto/vocab/collective_map.h. Each frame is decoded with wire::parse and checked
// field by field, its ICRC and IPv4 checksum verified.
#include "datapath/engine/replicate_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "datapath/engine/group_instance.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/parser.h"

namespace epic::engine {
namespace {

namespace w = epic::wire;
using vocab::DType;
using vocab::ReduceOp;
using CT = CollectiveType;

CollectiveDescriptor desc(CT type, uint32_t count, uint16_t root = 0) {
  return {type, DType::kInt32, ReduceOp::kSum, root, count};
}

// The children's and the parent's edges (the frames' expected addresses).
const vocab::MacAddr kSwitchMac{2, 0xEE, 0, 0, 0, 1};
constexpr uint32_t kSwitchIp = 0x0AC80001;  // 10.200.0.1
constexpr std::array<uint16_t, 3> kPort = {3, 5, 7};
constexpr std::array<uint32_t, 3> kLocalQp = {0x4000, 0x4001, 0x4002};
const std::array<vocab::MacAddr, 3> kRemoteMac = {vocab::MacAddr{2, 0xAA, 0, 0, 0, 0x10},
                                                  vocab::MacAddr{2, 0xBB, 0, 0, 0, 0x01},
                                                  vocab::MacAddr{2, 0xAA, 0, 0, 0, 0x14}};
constexpr std::array<uint32_t, 3> kRemoteIp = {0x0A64000A, 0x0AC80101, 0x0A64000E};
constexpr std::array<uint32_t, 3> kRemoteQp = {0x110, 0x220, 0x114};
constexpr std::array<uint16_t, 3> kUdpPort = {0xC001, 0xC002, 0xC003};
constexpr uint16_t kParentPort = 9;
constexpr uint32_t kParentLocalQp = 0x4009;
const vocab::MacAddr kParentMac{2, 0xCC, 0, 0, 0, 9};
constexpr uint32_t kParentIp = 0x0AC80909;
constexpr uint32_t kParentQp = 0x990;
constexpr uint16_t kParentUdpPort = 0xC009;

GroupConfig six_rank_group(uint32_t initial_psn) {
  GroupConfig cfg;
  cfg.group_id = 77;
  cfg.num_ranks = 6;
  cfg.window = 4;
  cfg.pmtu = 256;
  cfg.initial_psn = initial_psn;
  const uint16_t first[3] = {0, 1, 4};
  const uint16_t count[3] = {1, 3, 1};
  for (size_t c = 0; c < 3; ++c) {
    ChildLink l;
    l.local = {kSwitchMac, kSwitchIp, kLocalQp[c]};
    l.remote = {kRemoteMac[c], kRemoteIp[c], kRemoteQp[c]};
    l.port = kPort[c];
    l.is_rank = c != 1;
    l.first_rank = first[c];
    l.rank_count = count[c];
    l.udp_src_port = kUdpPort[c];
    cfg.children.push_back(l);
  }
  ParentLink p;
  p.local = {kSwitchMac, kSwitchIp, kParentLocalQp};
  p.remote = {kParentMac, kParentIp, kParentQp};
  p.port = kParentPort;
  p.udp_src_port = kParentUdpPort;
  cfg.parent = p;
  return cfg;
}

struct TestGroup {
  std::unique_ptr<SlotRegion> slots;
  std::unique_ptr<GroupInstance> inst;
  GroupState& g() { return inst->state; }
};

// The group, after the Broadcast from rank 0 (2 packets) and the announcement of `d`.
TestGroup group_with(const CollectiveDescriptor& d, uint32_t initial_psn) {
  TestGroup t;
  t.slots = std::make_unique<SlotRegion>(4, 256);
  std::string error;
  t.inst = prepare_group(six_rank_group(initial_psn), t.slots.get(), error);
  EXPECT_EQ(error, "");
  create_record(t.g(), desc(CT::kBroadcast, 100, 0));
  create_record(t.g(), d);
  return t;
}

std::vector<uint8_t> bytes(uint16_t len, uint8_t seed) {
  std::vector<uint8_t> v(len);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(seed + 7 * i);
  return v;
}

vocab::MacAddr mac_at(const uint8_t* p) {
  vocab::MacAddr m;
  std::copy(p, p + m.size(), m.begin());
  return m;
}

// What a frame must be.
struct Expect {
  uint16_t port;
  vocab::MacAddr dst_mac;
  uint32_t dst_ip;
  uint32_t dst_qp;
  uint16_t udp_src_port;
  uint32_t psn;
  bool ack_req;
  uint8_t opcode;
  uint32_t immdt;
};

void check_frame(const TxBatch& tx, size_t i, const Expect& e, const std::vector<uint8_t>& data) {
  SCOPED_TRACE(::testing::Message() << "frame " << i);
  EXPECT_EQ(tx.frame(i).port, e.port);
  w::ParseOptions no_icrc;
  no_icrc.verify_icrc = false;
  const auto r = w::parse(tx.data(i), tx.frame(i).length, no_icrc);
  ASSERT_TRUE(r.ok()) << w::to_string(r.error);
  EXPECT_TRUE(w::icrc_ok(r.view));
  EXPECT_TRUE(w::parse(tx.data(i), tx.frame(i).length).ok());  // ICRC and IPv4 checksum
  const w::PacketView& v = r.view;
  EXPECT_EQ(mac_at(v.eth_dst()), e.dst_mac);
  EXPECT_EQ(mac_at(v.eth_src()), kSwitchMac);
  EXPECT_EQ(v.ipv4_src(), kSwitchIp);
  EXPECT_EQ(v.ipv4_dst(), e.dst_ip);
  EXPECT_EQ(v.udp_src_port(), e.udp_src_port);
  EXPECT_EQ(v.dest_qp(), e.dst_qp);
  EXPECT_EQ(v.psn(), e.psn);
  EXPECT_EQ(v.ack_req(), e.ack_req);
  EXPECT_EQ(v.opcode(), e.opcode);
  if (v.op->has(w::kExtImmDt)) {
    EXPECT_EQ(v.immdt(), e.immdt);
  }
  ASSERT_EQ(v.data_len(), data.size());
  EXPECT_EQ(std::vector<uint8_t>(v.payload(), v.payload() + v.data_len()), data);
}

Expect to_child(size_t c, uint32_t psn, uint8_t opcode, uint32_t immdt) {
  return {kPort[c], kRemoteMac[c], kRemoteIp[c], kRemoteQp[c], kUdpPort[c],
          psn,      true,          opcode,       immdt};
}

// --- replicate_data ----------------------------------------------------------------------------

struct Out {
  size_t child;
  uint32_t psn;
};

struct ReplicateRow {
  const char* what;
  CollectiveDescriptor d;
  bool control;
  uint32_t j;
  Fanout fanout;
  int only_child;
  uint8_t opcode;
  uint32_t immdt;
  uint16_t len;
  std::vector<Out> frames;  // in child order
  uint64_t replicated;      // results_replicated afterwards
  uint32_t initial_psn = 500;
};

constexpr uint32_t kCtrlImm = kControlImm;
using w::op::kSendFirst, w::op::kSendMiddle, w::op::kSendLast, w::op::kSendLastImm,
    w::op::kSendOnly, w::op::kSendOnlyImm;

const ReplicateRow kRows[] = {
    // AllReduce (160 int32: 3 packets): every child receives every packet.
    {"AllReduce control result, first",
     desc(CT::kAllReduce, 160),
     true,
     0,
     Fanout::kFirst,
     -1,
     kSendOnlyImm,
     kCtrlImm,
     16,
     {{0, 501}, {1, 503}, {2, 503}},
     3},
    {"AllReduce j0, first",
     desc(CT::kAllReduce, 160),
     false,
     0,
     Fanout::kFirst,
     -1,
     kSendFirst,
     0,
     256,
     {{0, 502}, {1, 504}, {2, 504}},
     3},
    {"AllReduce j1, first (only_child ignored)",
     desc(CT::kAllReduce, 160),
     false,
     1,
     Fanout::kFirst,
     2,
     kSendMiddle,
     0,
     256,
     {{0, 503}, {1, 505}, {2, 505}},
     3},
    {"AllReduce j2, first, last packet",
     desc(CT::kAllReduce, 160),
     false,
     2,
     Fanout::kFirst,
     -1,
     kSendLast,
     0,
     128,
     {{0, 504}, {1, 506}, {2, 506}},
     3},
    {"AllReduce j2 with immediate",
     desc(CT::kAllReduce, 160),
     false,
     2,
     Fanout::kFirst,
     -1,
     kSendLastImm,
     0xDEADBEEF,
     128,
     {{0, 504}, {1, 506}, {2, 506}},
     3},
    {"AllReduce j0, again: not counted",
     desc(CT::kAllReduce, 160),
     false,
     0,
     Fanout::kAgain,
     -1,
     kSendFirst,
     0,
     256,
     {{0, 502}, {1, 504}, {2, 504}},
     0},
    {"AllReduce j1, to rank 4 only",
     desc(CT::kAllReduce, 160),
     false,
     1,
     Fanout::kOne,
     2,
     kSendMiddle,
     0,
     256,
     {{2, 505}},
     0},
    {"AllReduce control, to the switch only",
     desc(CT::kAllReduce, 160),
     true,
     0,
     Fanout::kOne,
     1,
     kSendOnlyImm,
     kCtrlImm,
     16,
     {{1, 503}},
     0},
    // Reduce (128 int32: 2 packets): only the child of the root.
    {"Reduce root 4 j1",
     desc(CT::kReduce, 128, 4),
     false,
     1,
     Fanout::kFirst,
     -1,
     kSendLast,
     0,
     256,
     {{2, 505}},
     1},
    {"Reduce root 2 (below the switch) j0",
     desc(CT::kReduce, 128, 2),
     false,
     0,
     Fanout::kFirst,
     -1,
     kSendFirst,
     0,
     256,
     {{1, 504}},
     1},
    {"Reduce root 5 (elsewhere): nobody here",
     desc(CT::kReduce, 128, 5),
     false,
     0,
     Fanout::kFirst,
     -1,
     kSendFirst,
     0,
     256,
     {},
     0},
    {"Reduce root 4 j0, to rank 0 only: no receiver",
     desc(CT::kReduce, 128, 4),
     false,
     0,
     Fanout::kOne,
     0,
     kSendFirst,
     0,
     256,
     {},
     0},
    {"Reduce control reaches every child",
     desc(CT::kReduce, 128, 4),
     true,
     0,
     Fanout::kFirst,
     -1,
     kSendOnlyImm,
     kCtrlImm,
     16,
     {{0, 501}, {1, 503}, {2, 503}},
     3},
    // Broadcast (100 int32: 256 + 144 bytes): every child with a rank but the root.
    {"Broadcast root 4 j0",
     desc(CT::kBroadcast, 100, 4),
     false,
     0,
     Fanout::kFirst,
     -1,
     kSendFirst,
     0,
     256,
     {{0, 502}, {1, 504}},
     2},
    {"Broadcast root 1 j1 (the switch's other ranks receive)",
     desc(CT::kBroadcast, 100, 1),
     false,
     1,
     Fanout::kFirst,
     -1,
     kSendLast,
     0,
     144,
     {{0, 503}, {1, 505}, {2, 505}},
     3},
    {"Broadcast root 0 j0, again",
     desc(CT::kBroadcast, 100, 0),
     false,
     0,
     Fanout::kAgain,
     -1,
     kSendFirst,
     0,
     256,
     {{1, 504}, {2, 504}},
     0},
    {"Broadcast root 0 j0, to the root only: no receiver",
     desc(CT::kBroadcast, 100, 0),
     false,
     0,
     Fanout::kOne,
     0,
     kSendFirst,
     0,
     256,
     {},
     0},
    // Barrier: the control result only.
    {"Barrier control",
     desc(CT::kBarrier, 0),
     true,
     0,
     Fanout::kFirst,
     -1,
     kSendOnlyImm,
     kCtrlImm,
     16,
     {{0, 501}, {1, 503}, {2, 503}},
     3},
    // ReduceScatter (64 int32 per chunk: 1 packet; 6 chunks): chunk q to rank q's child.
    {"ReduceScatter j0 (rank 0's chunk)",
     desc(CT::kReduceScatter, 64),
     false,
     0,
     Fanout::kFirst,
     -1,
     kSendOnly,
     0,
     256,
     {{0, 502}},
     1},
    {"ReduceScatter j2 (rank 2's)",
     desc(CT::kReduceScatter, 64),
     false,
     2,
     Fanout::kFirst,
     -1,
     kSendOnly,
     0,
     256,
     {{1, 506}},
     1},
    {"ReduceScatter j4 (rank 4's)",
     desc(CT::kReduceScatter, 64),
     false,
     4,
     Fanout::kFirst,
     -1,
     kSendOnly,
     0,
     256,
     {{2, 504}},
     1},
    {"ReduceScatter j5 (rank 5's, elsewhere)",
     desc(CT::kReduceScatter, 64),
     false,
     5,
     Fanout::kFirst,
     -1,
     kSendOnly,
     0,
     256,
     {},
     0},
    {"ReduceScatter j2, to the switch only",
     desc(CT::kReduceScatter, 64),
     false,
     2,
     Fanout::kOne,
     1,
     kSendOnly,
     0,
     256,
     {{1, 506}},
     0},
    // AllGather (64 int32 per chunk: 1 packet; 6 chunks): chunk q to everyone but rank q.
    {"AllGather j0 (rank 0's)",
     desc(CT::kAllGather, 64),
     false,
     0,
     Fanout::kFirst,
     -1,
     kSendOnly,
     0,
     256,
     {{1, 504}, {2, 504}},
     2},
    {"AllGather j4 (rank 4's)",
     desc(CT::kAllGather, 64),
     false,
     4,
     Fanout::kFirst,
     -1,
     kSendOnly,
     0,
     256,
     {{0, 505}, {1, 508}},
     2},
    {"AllGather j5 (rank 5's)",
     desc(CT::kAllGather, 64),
     false,
     5,
     Fanout::kFirst,
     -1,
     kSendOnly,
     0,
     256,
     {{0, 506}, {1, 509}, {2, 508}},
     3},
    {"AllGather j4, to its sender only: nothing",
     desc(CT::kAllGather, 64),
     false,
     4,
     Fanout::kOne,
     2,
     kSendOnly,
     0,
     256,
     {},
     0},
    {"AllGather j4, to rank 0 only",
     desc(CT::kAllGather, 64),
     false,
     4,
     Fanout::kOne,
     0,
     kSendOnly,
     0,
     256,
     {{0, 505}},
     0},
    // Across the wrap: S = 0xFFFFFE; the AllReduce's control message has group PSN 1, rank 0's
    // receive PSN 0xFFFFFF.
    {"AllReduce control across the wrap",
     desc(CT::kAllReduce, 160),
     true,
     0,
     Fanout::kFirst,
     -1,
     kSendOnlyImm,
     kCtrlImm,
     16,
     {{0, 0xFFFFFF}, {1, 1}, {2, 1}},
     3,
     0xFFFFFE},
    {"AllReduce j0 across the wrap",
     desc(CT::kAllReduce, 160),
     false,
     0,
     Fanout::kFirst,
     -1,
     kSendFirst,
     0,
     256,
     {{0, 0}, {1, 2}, {2, 2}},
     3,
     0xFFFFFE},
};

TEST(ReplicateData, EachChildWithAReceiverGetsAFrameInItsOwnReceiveSequence) {
  uint8_t seed = 1;
  for (const ReplicateRow& row : kRows) {
    SCOPED_TRACE(row.what);
    TestGroup t = group_with(row.d, row.initial_psn);
    GroupState& g = t.g();
    const std::vector<uint8_t> data = bytes(row.len, seed++);
    TxBatch tx;
    EngineCounters counters;
    Actions a(tx, counters);
    const PacketRef ref{&g.history[1], row.control, row.j};
    replicate_data(g, ref, {row.opcode, row.immdt, data.data(), row.len}, row.fanout,
                   row.only_child, a);
    ASSERT_EQ(tx.size(), row.frames.size());
    for (size_t i = 0; i < row.frames.size(); ++i) {
      check_frame(tx, i, to_child(row.frames[i].child, row.frames[i].psn, row.opcode, row.immdt),
                  data);
    }
    EXPECT_EQ(counters.tx_frames, row.frames.size());
    EXPECT_EQ(counters.results_replicated, row.replicated);
    EXPECT_EQ(g.stats.results_replicated, row.replicated);
  }
}

TEST(ReplicateData, TheDefaultOverloadReachesEveryReceiverAndCountsUpAcrossCalls) {
  TestGroup t = group_with(desc(CT::kAllGather, 64), 500);
  GroupState& g = t.g();
  const std::vector<uint8_t> data = bytes(256, 9);
  TxBatch tx;
  EngineCounters counters;
  Actions a(tx, counters);
  const Payload p{kSendOnly, 0, data.data(), 256};
  replicate_data(g, PacketRef{&g.history[1], false, 2}, p, Fanout::kFirst, a);  // rank 2's
  replicate_data(g, PacketRef{&g.history[1], false, 2}, p, Fanout::kAgain, a);
  replicate_data(g, PacketRef{&g.history[1], false, 3}, p, Fanout::kFirst, a);  // rank 3's
  // j2 and j3 come from ranks below the switch, which has other receivers: 3 + 3 + 3 frames.
  // Rank 0 receives chunks 1..5 (j2 is its 2nd, j3 its 3rd), rank 4 chunks 0..3 (3rd, 4th).
  ASSERT_EQ(tx.size(), 9u);
  const uint32_t psn[9] = {503, 506, 506, 503, 506, 506, 504, 507, 507};
  for (size_t i = 0; i < 9; ++i) check_frame(tx, i, to_child(i % 3, psn[i], kSendOnly, 0), data);
  EXPECT_EQ(counters.results_replicated, 6u);
  EXPECT_EQ(g.stats.results_replicated, 6u);
  EXPECT_EQ(counters.tx_frames, 9u);
}

// The ICRC check above can fail: one flipped payload bit of a replicated frame breaks it.
TEST(ReplicateData, ACorruptedCopyFailsTheIcrcCheck) {
  TestGroup t = group_with(desc(CT::kAllReduce, 160), 500);
  const std::vector<uint8_t> data = bytes(256, 3);
  TxBatch tx;
  EngineCounters counters;
  Actions a(tx, counters);
  replicate_data(t.g(), PacketRef{&t.g().history[1], false, 0}, {kSendFirst, 0, data.data(), 256},
                 Fanout::kOne, 0, a);
  ASSERT_EQ(tx.size(), 1u);
  std::vector<uint8_t> f(tx.data(0), tx.data(0) + tx.frame(0).length);
  w::ParseOptions no_icrc;
  no_icrc.verify_icrc = false;
  ASSERT_TRUE(w::icrc_ok(w::parse(f.data(), f.size(), no_icrc).view));
  f[f.size() - 10] ^= 0x01;
  const auto r = w::parse(f.data(), f.size(), no_icrc);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(w::icrc_ok(r.view));
  EXPECT_FALSE(w::parse(f.data(), f.size()).ok());
}

// --- send_up -----------------------------------------------------------------------------------

struct UpRow {
  const char* what;
  uint32_t gpsn;
  uint8_t opcode;
  uint32_t immdt;
  uint16_t len;
};

const UpRow kUpRows[] = {
    {"partial aggregate, data", 504, kSendFirst, 0, 256},
    {"partial aggregate, last packet", 506, kSendLast, 0, 128},
    {"control message", 503, kSendOnlyImm, kCtrlImm, 16},
    {"one-source packet with immediate", 0x123456, kSendLastImm, 0xCAFEF00D, 144},
    {"at the wrap", 0xFFFFFF, kSendOnly, 0, 64},
    {"after the wrap", 0, kSendMiddle, 0, 256},
};

TEST(ReplicateDataSendUp, OneFrameToTheParentAtTheGroupPsn) {
  uint8_t seed = 40;
  for (const UpRow& row : kUpRows) {
    SCOPED_TRACE(row.what);
    TestGroup t = group_with(desc(CT::kAllReduce, 160), 500);
    const std::vector<uint8_t> data = bytes(row.len, seed++);
    TxBatch tx;
    EngineCounters counters;
    Actions a(tx, counters);
    send_up(t.g(), row.gpsn, {row.opcode, row.immdt, data.data(), row.len}, a);
    ASSERT_EQ(tx.size(), 1u);
    // No AckReq: a switch edge is acknowledged by ACK frontiers, not per packet.
    check_frame(tx, 0,
                {kParentPort, kParentMac, kParentIp, kParentQp, kParentUdpPort, row.gpsn, false,
                 row.opcode, row.immdt},
                data);
    EXPECT_EQ(counters.tx_frames, 1u);
    EXPECT_EQ(counters.results_replicated, 0u);
    EXPECT_EQ(t.g().stats.results_replicated, 0u);
  }
}

}  // namespace
}  // namespace epic::engine
