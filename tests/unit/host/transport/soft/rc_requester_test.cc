// Requester transitions of RcQp: segmentation, AckReq, the window, ACK/NAK
// processing, go-back-N, timeouts and RNR, as packet tables.
#include <gtest/gtest.h>

#include "proto/vocab/aeth.h"
#include "rc_test_util.h"

namespace epic::soft {
namespace {

using namespace testing;
namespace op = wire::op;

constexpr uint32_t kStart = 0xFFFFFE;
constexpr uint16_t kMtu = 256;
const uint8_t kAck = vocab::aeth::kAckUnlimitedCredits;

struct Req {
  QpConfig cfg = config(kQpA, kQpB, kStart, 0x100, kMtu);
  std::vector<uint8_t> data = std::vector<uint8_t>(8192, 0x5A);
  std::unique_ptr<RcQp> qp;
  explicit Req(uint32_t window = 128, bool probe = false) {
    cfg.max_outstanding = window;
    cfg.probe_on_timeout = probe;
    cfg.retransmit_timeout_ns = 1000;
    cfg.retry_count = 2;
    cfg.rnr_delay_ns = 500;
    qp = std::make_unique<RcQp>(cfg);
  }
  void send(uint64_t id, uint32_t len, SendOp o = SendOp::kSend, bool signaled = true) {
    SendWr wr{id, o, data.data(), len, 0x01020304, 0x2000, 0x77, signaled};
    ASSERT_TRUE(qp->post_send(wr));
  }
};

TEST(RcRequester, SegmentsASendIntoPathMtuPacketsAcrossThePsnWrap) {
  Req r;
  r.send(1, 2 * kMtu + 5);
  const std::vector<Out> want = {{op::kSendFirst, 0xFFFFFE, -1, -1, 0, kMtu},
                                 {op::kSendMiddle, 0xFFFFFF, -1, -1, 0, kMtu},
                                 {op::kSendLast, 0x000000, -1, -1, 1, 5}};
  EXPECT_EQ(drain(*r.qp, want), want);
  EXPECT_EQ(r.qp->counters().tx_requests, 3u);
}

TEST(RcRequester, WriteCarriesRethOnFirstAndImmediateOnLast) {
  Req r;
  r.send(1, kMtu + 1, SendOp::kRdmaWriteWithImm);
  r.send(2, 0, SendOp::kRdmaWrite);
  std::vector<wire::PacketView> views;
  std::vector<std::vector<uint8_t>> frames;
  while (auto f = r.qp->pop_tx(0)) frames.push_back(*f);
  ASSERT_EQ(frames.size(), 3u);
  auto v0 = wire::parse(frames[0].data(), frames[0].size()).view;
  auto v1 = wire::parse(frames[1].data(), frames[1].size()).view;
  auto v2 = wire::parse(frames[2].data(), frames[2].size()).view;
  EXPECT_EQ(v0.opcode(), op::kWriteFirst);
  EXPECT_EQ(v0.reth(), (wire::Reth{0x2000, 0x77, kMtu + 1}));
  EXPECT_EQ(v1.opcode(), op::kWriteLastImm);
  EXPECT_EQ(v1.immdt(), 0x01020304u);
  EXPECT_EQ(v2.opcode(), op::kWriteOnly);
  EXPECT_EQ(v2.reth().dma_len, 0u);
  EXPECT_EQ(v2.data_len(), 0);
}

TEST(RcRequester, AckReqOnLastPacketAndEveryNthPacket) {
  Req r;
  r.cfg.ack_req_every = 3;
  r.qp = std::make_unique<RcQp>(r.cfg);
  r.send(1, 7 * kMtu);
  const auto got = drain(*r.qp, {});
  ASSERT_EQ(got.size(), 7u);
  std::string flags;
  for (const auto& o : got) flags += o.ack_req ? '1' : '0';
  EXPECT_EQ(flags, "0010011");
}

TEST(RcRequester, WindowLimitsPacketsInFlightAndAnAckReleasesMore) {
  Req r(4);
  r.send(1, 10 * kMtu);
  EXPECT_EQ(drain(*r.qp, {}).size(), 4u);
  feed(*r.qp, ack(0xFFFFFF, kAck));  // acknowledges 2 packets
  const std::vector<Out> want = {{op::kSendMiddle, 0x000002}, {op::kSendMiddle, 0x000003}};
  EXPECT_EQ(drain(*r.qp, want), want);
}

TEST(RcRequester, OneCoalescedAckCompletesSeveralMessages) {
  Req r;
  r.send(1, 10);
  r.send(2, kMtu * 2);
  r.send(3, 0, SendOp::kSend, false);  // unsignaled: no completion on success
  r.send(4, 1);
  drain(*r.qp, {});
  feed(*r.qp, ack(0x000002, kAck, 4));  // PSNs fffffe, ffffff, 0, 1, 2
  std::vector<uint64_t> ids;
  while (auto c = r.qp->poll_cq()) {
    EXPECT_EQ(c->status, WcStatus::kSuccess);
    ids.push_back(c->wr_id);
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_EQ(r.qp->outstanding_sends(), 0u);
  EXPECT_FALSE(r.qp->next_deadline());
}

TEST(RcRequester, NakSequenceErrorGoesBackToTheNakedPsn) {
  Req r;
  r.send(1, 10);
  r.send(2, 3 * kMtu);
  drain(*r.qp, {});
  feed(*r.qp,
       ack(0x000000, vocab::aeth::kNakPsnSequenceError));  // expects PSN 0: fffffe, ffffff ok
  EXPECT_EQ(r.qp->poll_cq()->wr_id, 1u);
  const std::vector<Out> want = {{op::kSendMiddle, 0x000000}, {op::kSendLast, 0x000001}};
  EXPECT_EQ(drain(*r.qp, want), want);
  EXPECT_EQ(r.qp->counters().tx_retransmits, 2u);
  // the same NAK again (duplicated in the network) does not restart twice
  feed(*r.qp, ack(0x000000, vocab::aeth::kNakPsnSequenceError));
  EXPECT_TRUE(drain(*r.qp, {}).empty());
  EXPECT_EQ(r.qp->counters().rx_ack_stale, 1u);
}

TEST(RcRequester, TimeoutRetransmitsFromOldestUnackedThenFailsWhenRetriesRunOut) {
  Req r;  // timeout 1000 ns, retry_count 2
  r.send(1, 2 * kMtu);
  r.send(2, 4);
  EXPECT_EQ(drain(*r.qp, {}).size(), 3u);
  feed(*r.qp, ack(0xFFFFFE, kAck));
  EXPECT_EQ(r.qp->next_deadline(), 1000u);
  r.qp->on_timer(1000);
  const std::vector<Out> want = {{op::kSendLast, 0xFFFFFF}, {op::kSendOnly, 0x000000}};
  EXPECT_EQ(drain(*r.qp, want, 1000), want);
  r.qp->on_timer(2000);
  EXPECT_EQ(drain(*r.qp, want, 2000), want);
  r.qp->on_timer(3000);  // third expiry: retries exhausted
  EXPECT_TRUE(drain(*r.qp, {}, 3000).empty());
  EXPECT_EQ(r.qp->state(), QpState::kError);
  EXPECT_EQ(r.qp->poll_cq()->status, WcStatus::kRetryExcErr);
  EXPECT_EQ(r.qp->poll_cq()->status, WcStatus::kWrFlushErr);
  EXPECT_EQ(r.qp->counters().timeouts, 3u);
  EXPECT_FALSE(r.qp->post_send({9, SendOp::kSend, nullptr, 0}));
}

TEST(RcRequester, ForwardProgressRefillsTheRetryBudget) {
  Req r;
  r.send(1, 4 * kMtu);
  drain(*r.qp, {});
  for (uint32_t k = 0; k < 3; ++k) {
    r.qp->on_timer(1000 * (k + 1));
    drain(*r.qp, {}, 1000 * (k + 1));
    feed(*r.qp, ack(vocab::psn_add(kStart, k), kAck), 1000 * (k + 1));
  }
  EXPECT_EQ(r.qp->state(), QpState::kRts);
}

TEST(RcRequester, RnrNakPausesThenResendsFromTheNakedPsn) {
  Req r;
  r.send(1, 4);
  r.send(2, 4);
  drain(*r.qp, {});
  feed(*r.qp, ack(0xFFFFFF, vocab::aeth::kRnrNak | 1), 100);
  EXPECT_EQ(r.qp->poll_cq()->wr_id, 1u);
  EXPECT_TRUE(drain(*r.qp, {}, 100).empty());
  // RNR timer code 1 is 10 us (IBA table 45), more than the configured 500 ns minimum.
  EXPECT_EQ(r.qp->next_deadline(), 10'100u);
  r.qp->on_timer(10'000);
  EXPECT_TRUE(drain(*r.qp, {}, 10'000).empty());
  r.qp->on_timer(10'100);
  const std::vector<Out> want = {{op::kSendOnly, 0xFFFFFF}};
  EXPECT_EQ(drain(*r.qp, want, 10'100), want);
}

// An RNR wait longer than the local ACK timeout (a Mode-II switch parks a waiting rank for up
// to 15 ms; the timeout here is 1 us): neither the timer nor a NAK that arrives during the wait
// spends the retry budget, and the resend after the wait arms the timer afresh.
TEST(RcRequester, NoLocalAckTimeoutWhileWaitingOutAnRnrNak) {
  Req r;  // timeout 1000 ns, retry_count 2
  r.send(1, 4);
  r.send(2, 4);
  drain(*r.qp, {});
  feed(*r.qp, ack(0xFFFFFE, vocab::aeth::kRnrNak | 1), 100);  // wait 10 us from t=100
  feed(*r.qp, ack(0xFFFFFE, vocab::aeth::kNakPsnSequenceError), 200);
  EXPECT_EQ(r.qp->next_deadline(), 10'100u);  // the RNR timer only
  for (uint64_t t = 1'200; t < 10'100; t += 1'000) {
    r.qp->on_timer(t);
    EXPECT_TRUE(drain(*r.qp, {}, t).empty()) << t;
  }
  EXPECT_EQ(r.qp->counters().timeouts, 0u);
  r.qp->on_timer(10'100);
  const std::vector<Out> want = {{op::kSendOnly, 0xFFFFFE}, {op::kSendOnly, 0xFFFFFF}};
  EXPECT_EQ(drain(*r.qp, want, 10'100), want);
  EXPECT_EQ(r.qp->next_deadline(), 11'100u);  // armed by the resend
  r.qp->on_timer(11'100);  // a real timeout: the last retry (the NAK spent the first)
  EXPECT_EQ(drain(*r.qp, want, 11'100), want);
  EXPECT_EQ(r.qp->state(), QpState::kRts);
  EXPECT_EQ(r.qp->counters().timeouts, 1u);
}

TEST(RcRequester, StaleAndOutOfRangeAcksChangeNothing) {
  Req r;
  r.send(1, 4);
  drain(*r.qp, {});
  feed(*r.qp, ack(0xFFFFFD, kAck));  // before anything outstanding
  feed(*r.qp, ack(0x000005, kAck));  // beyond anything sent
  EXPECT_FALSE(r.qp->poll_cq());
  EXPECT_EQ(r.qp->counters().rx_ack_stale, 2u);
  EXPECT_EQ(r.qp->counters().rx_accounted(), r.qp->counters().rx_packets);
}

TEST(RcRequester, FatalNakFailsItsRequestAndFlushesTheRest) {
  Req r;
  r.send(1, 4);
  r.send(2, 4, SendOp::kRdmaWrite);
  r.send(3, 4);
  drain(*r.qp, {});
  feed(*r.qp, ack(0xFFFFFF, vocab::aeth::kNakRemoteAccessError));
  EXPECT_EQ(*r.qp->poll_cq(), (Completion{1, WcOpcode::kSend, WcStatus::kSuccess, 4, false, 0}));
  EXPECT_EQ(r.qp->poll_cq()->status, WcStatus::kRemAccessErr);
  EXPECT_EQ(r.qp->poll_cq()->status, WcStatus::kWrFlushErr);
  EXPECT_EQ(r.qp->state(), QpState::kError);
}

TEST(RcRequester, RejectsBadConfiguration) {
  QpConfig c = config(kQpA, kQpB, 0, 0);
  c.pmtu = 1000;
  EXPECT_THROW(RcQp{c}, std::invalid_argument);
  c.pmtu = 1024;
  c.max_outstanding = 0;
  EXPECT_THROW(RcQp{c}, std::invalid_argument);
}

// After an RNR wait only the NAKed packet goes again (a Mode-II switch parks a rank that waits
// for slower ranks; the packets after it are in the switch): no window of duplicates. A
// responder that did drop them answers with a NAK-sequence-error, and the requester goes back.
TEST(RcRequester, AfterAnRnrWaitOnlyTheNakedPacketIsResent) {
  Req r;
  r.send(1, 4 * kMtu);  // PSNs fffffe, ffffff, 0, 1
  EXPECT_EQ(drain(*r.qp, {}).size(), 4u);
  feed(*r.qp, ack(0xFFFFFE, vocab::aeth::kRnrNak | 1), 100);  // 10 us
  r.qp->on_timer(10'100);
  const std::vector<Out> probe = {{op::kSendFirst, 0xFFFFFE}};
  EXPECT_EQ(drain(*r.qp, probe, 10'100), probe);
  feed(*r.qp, ack(0x000001, kAck), 10'200);  // everything was in the switch
  EXPECT_EQ(r.qp->poll_cq()->status, WcStatus::kSuccess);
  EXPECT_EQ(r.qp->counters().tx_retransmits, 1u);
  EXPECT_FALSE(r.qp->next_deadline().has_value());
}

TEST(RcRequester, AfterAnRnrProbeANakSequenceErrorStillRecoversWhatTheResponderDropped) {
  Req r;
  r.send(1, 4 * kMtu);
  drain(*r.qp, {});
  feed(*r.qp, ack(0xFFFFFE, vocab::aeth::kRnrNak | 1), 100);
  r.qp->on_timer(10'100);
  EXPECT_EQ(drain(*r.qp, {}, 10'100).size(), 1u);
  // A plain RC responder dropped ffffff.. after its RNR NAK: it acknowledges the probe and
  // asks for ffffff.
  feed(*r.qp, ack(0xFFFFFF, vocab::aeth::kNakPsnSequenceError), 10'200);
  const std::vector<Out> want = {
      {op::kSendMiddle, 0xFFFFFF}, {op::kSendMiddle, 0x000000}, {op::kSendLast, 0x000001}};
  EXPECT_EQ(drain(*r.qp, want, 10'200), want);
}

// probe_on_timeout (libinc's soft transport to an EPIC switch): a timeout resends the oldest
// unacknowledged packet alone, asking for an ACK; the switch held the rest, so a cumulative ACK
// completes everything and nothing else goes again.
TEST(RcRequester, ProbeOnTimeoutResendsTheOldestPacketAloneWithAckReq) {
  Req r(128, true);
  r.send(1, 4 * kMtu);  // PSNs fffffe (FIRST), ffffff, 0, 1 (LAST)
  EXPECT_EQ(drain(*r.qp, {}).size(), 4u);
  r.qp->on_timer(1000);
  const std::vector<Out> probe = {{op::kSendFirst, 0xFFFFFE, -1, -1, 1}};  // AckReq set
  EXPECT_EQ(drain(*r.qp, probe, 1000), probe);
  EXPECT_EQ(r.qp->counters().tx_resent_timeout, 1u);
  feed(*r.qp, ack(0x000001, kAck), 1500);
  EXPECT_EQ(r.qp->poll_cq()->status, WcStatus::kSuccess);
  EXPECT_EQ(r.qp->counters().tx_retransmits, 1u);
  EXPECT_FALSE(r.qp->next_deadline().has_value());
}

// ... and a plain responder that dropped what followed (its NAK lost) acknowledges the probe
// alone: then the rest goes again, counted as resent after a probe.
TEST(RcRequester, ProbeOnTimeoutGoesBackWhenTheResponderAcknowledgesTheProbeAlone) {
  Req r(128, true);
  r.send(1, 4 * kMtu);
  drain(*r.qp, {});
  r.qp->on_timer(1000);
  EXPECT_EQ(drain(*r.qp, {}, 1000).size(), 1u);
  feed(*r.qp, ack(0xFFFFFE, kAck), 1200);
  const std::vector<Out> rest = {
      {op::kSendMiddle, 0xFFFFFF}, {op::kSendMiddle, 0x000000}, {op::kSendLast, 0x000001}};
  EXPECT_EQ(drain(*r.qp, rest, 1200), rest);
  EXPECT_EQ(r.qp->counters().tx_resent_after_probe, 3u);
  feed(*r.qp, ack(0x000001, kAck), 1400);
  EXPECT_EQ(r.qp->poll_cq()->status, WcStatus::kSuccess);
}

// Without it (a NIC's way) the whole window goes again, and the causes add up.
TEST(RcRequester, ResendCausesAddUpToTheRetransmissions) {
  Req r;
  r.send(1, 4 * kMtu);
  drain(*r.qp, {});
  r.qp->on_timer(1000);
  EXPECT_EQ(drain(*r.qp, {}, 1000).size(), 4u);
  feed(*r.qp, ack(0xFFFFFF, vocab::aeth::kNakPsnSequenceError), 1100);
  EXPECT_EQ(drain(*r.qp, {}, 1100).size(), 3u);
  const QpCounters& c = r.qp->counters();
  EXPECT_EQ(c.tx_resent_timeout, 4u);
  EXPECT_EQ(c.tx_resent_nak_seq, 3u);
  EXPECT_EQ(c.tx_retransmits, c.tx_resent_timeout + c.tx_resent_nak_seq + c.tx_resent_rnr_probe +
                                  c.tx_resent_rnr_window + c.tx_resent_after_probe);
}

// An ACK of the packet an RNR NAK refused ends the wait at once (a Mode-II switch completed the
// slot): new packets go without waiting out the NAK's timer, and nothing in flight goes again.
TEST(RcRequester, AnAckOfTheRefusedPacketEndsTheRnrWait) {
  Req r(4);
  r.send(1, 8 * kMtu);  // PSNs fffffe .. 5; window 4: fffffe, ffffff, 0, 1 go
  EXPECT_EQ(drain(*r.qp, {}).size(), 4u);
  feed(*r.qp, ack(0xFFFFFE, vocab::aeth::kRnrNak | 14), 100);  // code 14: 1.28 ms
  EXPECT_EQ(r.qp->next_deadline(), 100u + 1'280'000u);
  feed(*r.qp, ack(0xFFFFFF, kAck), 200);  // the refused packet and the next are acknowledged
  const std::vector<Out> next = {{op::kSendMiddle, 0x000002}, {op::kSendMiddle, 0x000003}};
  EXPECT_EQ(drain(*r.qp, next, 200), next);
  EXPECT_EQ(r.qp->counters().tx_retransmits, 0u);
  EXPECT_EQ(r.qp->counters().rnr_waits_cut, 1u);
  EXPECT_EQ(r.qp->next_deadline(), 200u + 1000u);  // the local ACK timer again
}

}  // namespace
}  // namespace epic::soft
