// CollectiveRunner (host/collective/collective_runner.h) against a scripted
// switch endpoint: a second RcQp on a perfect link that plays the switch's
// virtual endpoint for one rank — it receives what the rank uploads and sends
// the results the test chooses. The tests pin the rank library's obligations
// (docs/mode2.md): control message first, one message per chunk, one-source
// data deferred until the receivers are ready, results placed at their
// offsets, errors and the stuck-state dump.
#include "host/collective/collective_runner.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "datapath/wire/parser.h"
#include "host/collective/layout.h"
#include "host/transport/soft/soft_endpoint.h"

namespace epic::host {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;

constexpr uint32_t kRankQp = 0x11, kSwitchQp = 0x1000, kPsn = 0xFFFFFE;  // wraps on purpose

soft::QpConfig qp_config(uint32_t self, uint32_t peer) {
  soft::QpConfig c;
  c.qpn = self;
  c.remote_qpn = peer;
  c.sq_psn = c.rq_psn = kPsn;
  c.pmtu = 256;
  c.max_outstanding = 16;
  c.retransmit_timeout_ns = 1'000'000;
  c.path.local_mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(self)};
  c.path.remote_mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(peer)};
  c.path.local_ipv4 = 0x0A000000 | self;
  c.path.remote_ipv4 = 0x0A000000 | peer;
  return c;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), seed);
  return v;
}

// A rank (qp + runner) and the switch endpoint it talks to.
class Fixture : public ::testing::Test {
 protected:
  void SetUp() override { make(0, 1); }
  void make(uint16_t rank, uint16_t ranks) {
    runner.reset();
    rank_qp = std::make_unique<soft::RcQp>(qp_config(kRankQp, kSwitchQp));
    sw = std::make_unique<soft::RcQp>(qp_config(kSwitchQp, kRankQp));
    endpoint = std::make_unique<soft::SoftQpEndpoint>(*rank_qp);
    runner = std::make_unique<CollectiveRunner>(*endpoint, rank, ranks);
    for (auto& b : sw_in) b.assign(1 << 16, 0);
    for (size_t i = 0; i < sw_in.size(); ++i) {
      ASSERT_TRUE(sw->post_recv({i, sw_in[i].data(), static_cast<uint32_t>(sw_in[i].size())}));
    }
  }
  // Moves frames both ways until the link is quiet; the runner polls after each round.
  void pump() {
    for (bool moved = true; moved;) {
      const bool up = move(*rank_qp, *sw);
      const bool down = move(*sw, *rank_qp);
      moved = up || down;
      runner->poll();
    }
  }
  static bool move(soft::RcQp& from, soft::RcQp& to) {
    bool any = false;
    while (auto f = from.pop_tx(0)) {
      const auto r = wire::parse(f->data(), f->size());
      EXPECT_TRUE(r.ok());
      to.receive(r.view, 0);
      any = true;
    }
    return any;
  }
  // What the switch endpoint received so far, in order (control messages included).
  std::vector<soft::Completion> switch_received() {
    while (auto c = sw->poll_cq()) {
      if (c->opcode == soft::WcOpcode::kRecv) got.push_back(*c);
    }
    return got;
  }
  std::vector<uint8_t> received_bytes(size_t i) {
    return {sw_in[i].begin(), sw_in[i].begin() + got.at(i).byte_len};
  }
  // The switch returns the control result (the descriptor every rank agreed on).
  void send_control(const CollectiveDescriptor& d) {
    ctrl_out.emplace_back();
    vocab::encode_control(d, ctrl_out.back().data());
    ASSERT_TRUE(sw->post_send({0, soft::SendOp::kSendWithImm, ctrl_out.back().data(),
                               vocab::kControlPayloadBytes, vocab::kControlImm}));
  }
  void send_result(const std::vector<uint8_t>& bytes) {
    results_out.push_back(bytes);
    ASSERT_TRUE(sw->post_send(
        {0, soft::SendOp::kSend, results_out.back().data(), static_cast<uint32_t>(bytes.size())}));
  }

  std::unique_ptr<soft::RcQp> rank_qp, sw;
  std::unique_ptr<soft::SoftQpEndpoint> endpoint;  // the runner's view of rank_qp
  std::unique_ptr<CollectiveRunner> runner;
  std::array<std::vector<uint8_t>, 16> sw_in;
  std::vector<soft::Completion> got;
  std::deque<std::array<uint8_t, vocab::kControlPayloadBytes>> ctrl_out;
  std::deque<std::vector<uint8_t>> results_out;
};

TEST_F(Fixture, AllReduceSendsControlThenDataAndFinishesWithTheResult) {
  const CollectiveDescriptor d{CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, 200};
  const std::vector<uint8_t> in = pattern(800, 1);
  std::vector<uint8_t> out(800);
  EXPECT_TRUE(runner->done());
  ASSERT_TRUE(runner->start(d, in, out));
  EXPECT_FALSE(runner->done());
  EXPECT_EQ(runner->started(), 1u);
  pump();
  // The control message first (SEND with Immediate carrying the descriptor), then the data.
  ASSERT_EQ(switch_received().size(), 2u);
  EXPECT_TRUE(got[0].with_imm);
  EXPECT_EQ(got[0].imm_data, vocab::kControlImm);
  EXPECT_EQ(vocab::decode_control(sw_in[0].data(), got[0].byte_len), d);
  EXPECT_EQ(received_bytes(1), in);
  EXPECT_FALSE(runner->done());
  send_control(d);
  pump();
  EXPECT_FALSE(runner->done());  // the result is still missing
  const std::vector<uint8_t> result = pattern(800, 77);
  send_result(result);
  pump();
  EXPECT_TRUE(runner->done());
  EXPECT_EQ(runner->error(), "");
  EXPECT_EQ(out, result);
  EXPECT_TRUE(runner->sends_complete());
  EXPECT_EQ(runner->sends_busy_from(), 1u);
}

TEST_F(Fixture, AllGatherChunkWaitsForTheControlResultAndTheChunksBeforeIt) {
  make(1, 3);
  const CollectiveDescriptor d{CollectiveType::kAllGather, DType::kFp32, ReduceOp::kSum, 0, 100};
  const std::vector<uint8_t> in = pattern(400, 5);
  std::vector<uint8_t> out(recv_bytes(d, 1, 3), 0xEE);
  ASSERT_EQ(out.size(), 1200u);
  ASSERT_TRUE(runner->start(d, in, out));
  pump();
  EXPECT_EQ(switch_received().size(), 1u);  // the control message only
  EXPECT_EQ(runner->sends_busy_from(), 0u);
  send_control(d);
  pump();
  EXPECT_EQ(switch_received().size(), 1u) << "rank 0's chunk has not arrived";
  const std::vector<uint8_t> chunk0 = pattern(400, 100), chunk2 = pattern(400, 200);
  send_result(chunk0);
  pump();
  ASSERT_EQ(switch_received().size(), 2u);
  EXPECT_EQ(received_bytes(1), in);
  EXPECT_FALSE(runner->done());
  send_result(chunk2);
  pump();
  EXPECT_TRUE(runner->done());
  // Chunk q at q * chunk bytes, this rank's own from its input.
  std::vector<uint8_t> want = chunk0;
  want.insert(want.end(), in.begin(), in.end());
  want.insert(want.end(), chunk2.begin(), chunk2.end());
  EXPECT_EQ(out, want);
  EXPECT_TRUE(runner->sends_complete());
}

TEST_F(Fixture, BroadcastRootSendsAfterTheControlResultAndKeepsItsOwnData) {
  make(0, 2);
  const CollectiveDescriptor d{CollectiveType::kBroadcast, DType::kBf16, ReduceOp::kSum, 0, 300};
  const std::vector<uint8_t> in = pattern(600, 9);
  std::vector<uint8_t> out(600);
  ASSERT_TRUE(runner->start(d, in, out));
  pump();
  EXPECT_EQ(switch_received().size(), 1u);
  EXPECT_EQ(out, in);  // the root's result is its own data
  send_control(d);
  pump();
  EXPECT_TRUE(runner->done());  // a root receives nothing but the control result
  ASSERT_EQ(switch_received().size(), 2u);
  EXPECT_EQ(received_bytes(1), in);
}

TEST_F(Fixture, ReduceScatterSendsOneMessagePerChunkAtOnce) {
  make(1, 2);
  const CollectiveDescriptor d{CollectiveType::kReduceScatter, DType::kInt32, ReduceOp::kMax, 0,
                               70};
  const std::vector<uint8_t> in = pattern(560, 3);
  std::vector<uint8_t> out(280);
  ASSERT_TRUE(runner->start(d, in, out));
  pump();
  ASSERT_EQ(switch_received().size(), 3u);
  EXPECT_EQ(received_bytes(1), std::vector<uint8_t>(in.begin(), in.begin() + 280));
  EXPECT_EQ(received_bytes(2), std::vector<uint8_t>(in.begin() + 280, in.end()));
  send_control(d);
  send_result(pattern(280, 50));
  pump();
  EXPECT_TRUE(runner->done());
  EXPECT_EQ(out, pattern(280, 50));
}

TEST_F(Fixture, ConsecutiveCollectivesKeepEachControlBufferUntilItsCompletion) {
  const CollectiveDescriptor barrier{CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0};
  const CollectiveDescriptor ar{CollectiveType::kAllReduce, DType::kFp32, ReduceOp::kMin, 0, 3};
  const std::vector<uint8_t> in = pattern(12, 1);
  std::vector<uint8_t> out(12);
  ASSERT_TRUE(runner->start(barrier, {}, {}));
  // The control result arrives before the rank's own control message is acknowledged.
  send_control(barrier);
  move(*sw, *rank_qp);
  runner->poll();
  ASSERT_TRUE(runner->done());
  ASSERT_TRUE(runner->start(ar, in, out));
  EXPECT_EQ(runner->sends_busy_from(), 0u);  // the barrier's control message is still in flight
  pump();
  ASSERT_EQ(switch_received().size(), 3u);
  EXPECT_EQ(vocab::decode_control(sw_in[0].data(), got[0].byte_len), barrier);
  EXPECT_EQ(vocab::decode_control(sw_in[1].data(), got[1].byte_len), ar);
  send_control(ar);
  send_result(pattern(12, 40));
  pump();
  EXPECT_TRUE(runner->done());
  EXPECT_EQ(runner->started(), 2u);
  EXPECT_EQ(runner->sends_busy_from(), 2u);
}

TEST_F(Fixture, AWrongControlResultIsAnErrorNamingTheCollective) {
  const CollectiveDescriptor d{CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, 4};
  std::vector<uint8_t> in(16), out(16);
  ASSERT_TRUE(runner->start(d, in, out));
  CollectiveDescriptor other = d;
  other.count = 5;
  send_control(other);
  pump();
  EXPECT_NE(runner->error().find("collective 0 (allreduce:int32:sum:4): the switch returned a "
                                 "different control result (allreduce:int32:sum:5)"),
            std::string::npos)
      << runner->error();
  EXPECT_FALSE(runner->start(d, in, out));  // no progress after an error
}

TEST_F(Fixture, DumpShowsWhatTheCollectiveWaitsForAndTheQueuePsns) {
  const CollectiveDescriptor d{CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, 4};
  std::vector<uint8_t> in(16), out(16);
  EXPECT_EQ(runner->dump().substr(0, 31), "rank 0/1: idle after 0 collecti");
  ASSERT_TRUE(runner->start(d, in, out));
  move(*rank_qp, *sw);  // the uploads leave; the switch's ACKs never come back
  const std::string dump = runner->dump();
  for (const char* part :
       {"rank 0/1: collective 0 (allreduce:int32:sum:4) waits for the control result and 1 of 1 "
        "result messages (downlink, switch to rank); unacknowledged uploads of 1 collectives from "
        "0 "
        "(uplink, rank to switch)",
        " state=RTS next_send_psn=0x000000 expected_psn=0xfffffe outstanding_sends=2 "
        "posted_recvs=2"}) {
    EXPECT_NE(dump.find(part), std::string::npos) << dump;
  }
}

TEST_F(Fixture, RetryExceededIsReportedWithTheCompletionStatusAndTheDump) {
  const CollectiveDescriptor d{CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, 4};
  std::vector<uint8_t> in(16), out(16);
  ASSERT_TRUE(runner->start(d, in, out));
  // Nothing reaches the switch: the QP retransmits until its retry count runs out.
  for (int i = 0; i < 100 && runner->error().empty(); ++i) {
    while (rank_qp->pop_tx(0)) {
    }
    if (auto t = rank_qp->next_deadline()) rank_qp->on_timer(*t);
    runner->poll();
  }
  const std::string& e = runner->error();
  EXPECT_NE(e.find("collective 0 (allreduce:int32:sum:4): send of the control message completed "
                   "with retry_exceeded"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(" state=ERROR next_send_psn="), std::string::npos) << e;
}

// Refused before anything is posted, with the reason (vocab::check_collective): the switch
// would drop the control message. 2^22 packets of 256 bytes are 2^28 int32; one more is too many.
TEST_F(Fixture, ACollectiveTheSwitchWouldRefuseIsRefusedWithItsReason) {
  make(0, 2);
  std::vector<uint8_t> none;
  const CollectiveDescriptor big{CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0,
                                 (1u << 28) + 1};
  EXPECT_FALSE(runner->start(big, none, none));
  EXPECT_NE(runner->error().find("in a group of 2 at path MTU 256: more data packets than"),
            std::string::npos)
      << runner->error();
  EXPECT_EQ(runner->started(), 0u);
  make(0, 2);
  const CollectiveDescriptor rootless{CollectiveType::kBroadcast, DType::kInt32, ReduceOp::kSum, 2,
                                      4};
  EXPECT_FALSE(runner->start(rootless, none, none));
  EXPECT_NE(runner->error().find("the root is not a rank of the group"), std::string::npos)
      << runner->error();
}

TEST_F(Fixture, ShortBuffersAndAStartWhileBusyAreRefused) {
  make(0, 2);
  const CollectiveDescriptor d{CollectiveType::kAllGather, DType::kInt32, ReduceOp::kSum, 0, 4};
  std::vector<uint8_t> in(16), out(31);
  EXPECT_FALSE(runner->start(d, in, out));
  EXPECT_NE(runner->error().find("needs 16 to send and 32 to receive"), std::string::npos)
      << runner->error();
  EXPECT_EQ(runner->started(), 0u);
  make(0, 2);
  out.resize(32);
  ASSERT_TRUE(runner->start(d, in, out));
  EXPECT_FALSE(runner->start(d, in, out));
  EXPECT_NE(runner->error().find("while collective 0 (allgather:int32:4) is in progress"),
            std::string::npos)
      << runner->error();
}

}  // namespace
}  // namespace epic::host
