// Responder transitions of RcQp as packet tables: {description, setup, input
// frames, expected output frames, expected completions/counters}.
#include <gtest/gtest.h>

#include <functional>

#include "proto/vocab/aeth.h"
#include "rc_test_util.h"

namespace epic::soft {
namespace {

using namespace testing;
namespace op = wire::op;

constexpr uint32_t kStart = 0xFFFFFE;  // responder expects this PSN first: wraps after 2 packets
constexpr uint16_t kMtu = 256;

struct Env {
  RcQp qp{config(kQpB, kQpA, 0x500, kStart, kMtu)};
  std::vector<uint8_t> rbuf = std::vector<uint8_t>(4096, 0xEE);
  std::vector<uint8_t> mr = std::vector<uint8_t>(4096, 0);
  void post_recv(uint64_t id = 1, uint32_t len = 4096) { qp.post_recv({id, rbuf.data(), len}); }
  void register_mr() { qp.register_mr({0x10000, mr.data(), mr.size(), 0xABC}); }
};

struct Row {
  const char* description;
  std::function<void(Env&)> setup;
  std::vector<std::vector<uint8_t>> in;
  std::vector<Out> out;
  std::function<void(Env&)> check;  // completions, counters, memory
};

std::vector<uint8_t> write(uint8_t opcode, uint32_t psn, size_t payload, uint64_t va, uint32_t rkey,
                           uint32_t dma_len, uint32_t imm = 0) {
  auto b = wire::PacketBuilder(wire::PacketBuilder()
                                   .eth({2, 0, 0, 0, 0, kQpB}, {2, 0, 0, 0, 0, kQpA})
                                   .ipv4(0x0A000011, 0x0A000012)
                                   .bth(opcode, kQpB, psn)
                                   .ack_req()
                                   .payload_pattern(payload, 3)
                                   .packet());
  b.reth(va, rkey, dma_len).immdt(imm);
  return b.build();
}

const uint8_t kAck = vocab::aeth::kAckUnlimitedCredits;

const std::vector<Row>& rows() {
  static const std::vector<Row> kRows = {
      {"SEND ONLY in sequence with AckReq: executed, ACK of its PSN with MSN 1",
       [](Env& e) { e.post_recv(7); },
       {request(op::kSendOnly, kStart, 10)},
       {{op::kAck, kStart, kAck, 1}},
       [](Env& e) {
         const auto c = e.qp.poll_cq();
         ASSERT_TRUE(c);
         EXPECT_EQ(*c, (Completion{7, WcOpcode::kRecv, WcStatus::kSuccess, 10, false, 0}));
         EXPECT_EQ(e.rbuf[9], 9);
         EXPECT_EQ(e.qp.expected_psn(), 0xFFFFFFu);
       }},
      {"SEND ONLY without AckReq: executed, no ACK yet",
       [](Env& e) { e.post_recv(); },
       {request(op::kSendOnly, kStart, 10, false)},
       {},
       [](Env& e) { EXPECT_TRUE(e.qp.poll_cq()); }},
      {"three messages, AckReq on each: one coalesced ACK for the last, across the PSN wrap",
       [](Env& e) {
         e.post_recv(1);
         e.post_recv(2);
         e.post_recv(3);
       },
       {request(op::kSendOnly, kStart, 1), request(op::kSendOnly, 0xFFFFFF, 2),
        request(op::kSendOnly, 0, 3)},
       {{op::kAck, 0, kAck, 3}},
       [](Env& e) {
         for (uint64_t id = 1; id <= 3; ++id) EXPECT_EQ(e.qp.poll_cq()->wr_id, id);
         EXPECT_EQ(e.qp.counters().tx_acks, 1u);
       }},
      {"SEND FIRST/MIDDLE/LAST: one receive completion of the whole message",
       [](Env& e) { e.post_recv(5); },
       {request(op::kSendFirst, kStart, kMtu, false, 0),
        request(op::kSendMiddle, 0xFFFFFF, kMtu, false, 0),
        request(op::kSendLastImm, 0, 17, true, 0)},
       {{op::kAck, 0, kAck, 1}},
       [](Env& e) {
         const auto c = e.qp.poll_cq();
         ASSERT_TRUE(c);
         EXPECT_EQ(c->byte_len, 2u * kMtu + 17);
         EXPECT_TRUE(c->with_imm);
         EXPECT_FALSE(e.qp.poll_cq());
       }},
      {"duplicate of an executed packet: not executed again, ACK of expected-1",
       [](Env& e) {
         e.post_recv(1);
         e.post_recv(2);
       },
       {request(op::kSendOnly, kStart, 4), request(op::kSendOnly, kStart, 4)},
       {{op::kAck, kStart, kAck, 1}},
       [](Env& e) {
         EXPECT_EQ(e.qp.poll_cq()->wr_id, 1u);
         EXPECT_FALSE(e.qp.poll_cq());
         EXPECT_EQ(e.qp.counters().rx_request_duplicate, 1u);
         EXPECT_EQ(e.qp.posted_recvs(), 1u);
       }},
      {"PSN ahead of the expected one: dropped, one NAK-sequence-error for two such packets",
       [](Env& e) { e.post_recv(); },
       {request(op::kSendOnly, 0, 4), request(op::kSendOnly, 1, 4)},
       {{op::kAck, kStart, vocab::aeth::kNakPsnSequenceError, 0}},
       [](Env& e) {
         EXPECT_FALSE(e.qp.poll_cq());
         EXPECT_EQ(e.qp.counters().rx_request_out_of_sequence, 2u);
         EXPECT_EQ(e.qp.state(), QpState::kRts);
       }},
      {"MIDDLE without FIRST: NAK invalid request, QP enters error, receive flushed",
       [](Env& e) { e.post_recv(9); },
       {request(op::kSendMiddle, kStart, kMtu)},
       {{op::kAck, kStart, vocab::aeth::kNakInvalidRequest}},
       [](Env& e) {
         EXPECT_EQ(e.qp.state(), QpState::kError);
         EXPECT_EQ(e.qp.poll_cq()->status, WcStatus::kWrFlushErr);
         EXPECT_EQ(e.qp.counters().rx_request_invalid, 1u);
       }},
      {"LAST with no payload: NAK invalid request",
       [](Env& e) { e.post_recv(); },
       {request(op::kSendFirst, kStart, kMtu), request(op::kSendLast, 0xFFFFFF, 0)},
       {{op::kAck, 0xFFFFFF, vocab::aeth::kNakInvalidRequest}},
       [](Env& e) { EXPECT_EQ(e.qp.state(), QpState::kError); }},
      {"FIRST shorter than the path MTU: NAK invalid request",
       [](Env& e) { e.post_recv(); },
       {request(op::kSendFirst, kStart, kMtu - 4)},
       {{op::kAck, kStart, vocab::aeth::kNakInvalidRequest}},
       nullptr},
      {"ONLY larger than the path MTU: NAK invalid request",
       [](Env& e) { e.post_recv(); },
       {request(op::kSendOnly, kStart, kMtu + 4)},
       {{op::kAck, kStart, vocab::aeth::kNakInvalidRequest}},
       nullptr},
      {"SEND with no receive posted: RNR NAK, not executed; later packets silently dropped",
       nullptr,
       {request(op::kSendOnly, kStart, 4), request(op::kSendOnly, 0xFFFFFF, 4)},
       {{op::kAck, kStart, vocab::aeth::kRnrNak | 14}},
       [](Env& e) {
         EXPECT_EQ(e.qp.expected_psn(), kStart);
         EXPECT_EQ(e.qp.counters().rx_request_rnr, 1u);
         EXPECT_EQ(e.qp.counters().tx_rnr_naks, 1u);
         EXPECT_EQ(e.qp.state(), QpState::kRts);
         // the requester retries after posting: now it is executed
         e.post_recv(4);
         feed(e.qp, request(op::kSendOnly, kStart, 4));
         EXPECT_EQ(e.qp.poll_cq()->wr_id, 4u);
       }},
      {"SEND longer than the posted receive: local length error, NAK invalid request",
       [](Env& e) { e.post_recv(3, 8); },
       {request(op::kSendOnly, kStart, 9)},
       {{op::kAck, kStart, vocab::aeth::kNakInvalidRequest}},
       [](Env& e) {
         EXPECT_EQ(e.qp.poll_cq()->status, WcStatus::kLocLenErr);
         EXPECT_EQ(e.qp.state(), QpState::kError);
       }},
      {"RDMA WRITE ONLY into a registered region: placed, ACKed, no receive consumed",
       [](Env& e) { e.register_mr(); },
       {write(op::kWriteOnly, kStart, 100, 0x10010, 0xABC, 100)},
       {{op::kAck, kStart, kAck, 1}},
       [](Env& e) {
         EXPECT_EQ(e.mr[0x10], 3);
         EXPECT_EQ(e.mr[0x10 + 99], static_cast<uint8_t>(3 + 99));
         EXPECT_EQ(e.mr[0x10 + 100], 0);
         EXPECT_FALSE(e.qp.poll_cq());
       }},
      {"RDMA WRITE with an unknown rkey: NAK remote access error, QP error",
       [](Env& e) { e.register_mr(); },
       {write(op::kWriteOnly, kStart, 100, 0x10010, 0xABD, 100)},
       {{op::kAck, kStart, vocab::aeth::kNakRemoteAccessError}},
       [](Env& e) {
         EXPECT_EQ(e.qp.state(), QpState::kError);
         EXPECT_EQ(e.qp.counters().rx_request_access_error, 1u);
       }},
      {"RDMA WRITE past the end of the region: NAK remote access error",
       [](Env& e) { e.register_mr(); },
       {write(op::kWriteOnly, kStart, 100, 0x10000 + 4000, 0xABC, 100)},
       {{op::kAck, kStart, vocab::aeth::kNakRemoteAccessError}},
       nullptr},
      {"RDMA WRITE FIRST/LAST-with-Immediate: placed, receive completion with imm and length",
       [](Env& e) {
         e.register_mr();
         e.post_recv(8);
       },
       {write(op::kWriteFirst, kStart, kMtu, 0x10000, 0xABC, kMtu + 10),
        write(op::kWriteLastImm, 0xFFFFFF, 10, 0, 0, 0, 0xCAFE)},
       {{op::kAck, 0xFFFFFF, kAck, 1}},
       [](Env& e) {
         EXPECT_EQ(*e.qp.poll_cq(), (Completion{8, WcOpcode::kRecvRdmaWithImm, WcStatus::kSuccess,
                                                kMtu + 10, true, 0xCAFE}));
         EXPECT_EQ(e.mr[kMtu + 9], static_cast<uint8_t>(3 + 9));
       }},
      {"RDMA WRITE ONLY with Immediate and no receive: RNR NAK",
       [](Env& e) { e.register_mr(); },
       {write(op::kWriteOnlyImm, kStart, 10, 0x10000, 0xABC, 10, 1)},
       {{op::kAck, kStart, vocab::aeth::kRnrNak | 14}},
       nullptr},
      {"RDMA WRITE LAST that ends before the RETH length: NAK invalid request",
       [](Env& e) { e.register_mr(); },
       {write(op::kWriteFirst, kStart, kMtu, 0x10000, 0xABC, kMtu + 10),
        write(op::kWriteLast, 0xFFFFFF, 8, 0, 0, 0)},
       {{op::kAck, 0xFFFFFF, vocab::aeth::kNakInvalidRequest}},
       nullptr},
      {"zero-length RDMA WRITE: no key check, ACKed",
       nullptr,
       {write(op::kWriteOnly, kStart, 0, 0, 0x999, 0)},
       {{op::kAck, kStart, kAck, 1}},
       nullptr},
      {"packet for another QP: dropped and counted, nothing sent",
       [](Env& e) { e.post_recv(); },
       {wire::PacketBuilder().bth(op::kSendOnly, 0x77, kStart).ack_req().build()},
       {},
       [](Env& e) {
         EXPECT_EQ(e.qp.counters().rx_wrong_qp, 1u);
         EXPECT_EQ(e.qp.expected_psn(), kStart);
       }},
      {"UD opcode on an RC QP: silently dropped",
       nullptr,
       {wire::PacketBuilder().bth(op::kUdSendOnly, kQpB, kStart).build()},
       {},
       [](Env& e) { EXPECT_EQ(e.qp.counters().rx_request_invalid, 1u); }},
      {"RDMA READ request (unsupported): NAK invalid request",
       [](Env& e) { e.register_mr(); },
       {write(op::kReadRequest, kStart, 0, 0x10000, 0xABC, 64)},
       {{op::kAck, kStart, vocab::aeth::kNakInvalidRequest}},
       nullptr},
      {"CE-marked requests: one CNP (BECN) to the peer QP per interval, then the ACK",
       [](Env& e) {
         e.post_recv();
         e.post_recv();
       },
       {wire::PacketBuilder(wire::PacketBuilder().bth(op::kSendOnly, kQpB, kStart).ecn(3).packet())
            .build(),
        wire::PacketBuilder(
            wire::PacketBuilder().bth(op::kSendOnly, kQpB, 0xFFFFFF).ecn(3).ack_req().packet())
            .build()},
       {{op::kCnp, 0}, {op::kAck, 0xFFFFFF, kAck, 2}},
       [](Env& e) {
         EXPECT_EQ(e.qp.counters().rx_ce_marked, 2u);
         EXPECT_EQ(e.qp.counters().tx_cnps, 1u);
       }},
  };
  return kRows;
}

TEST(RcResponder, PacketTable) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.description);
    Env e;
    if (row.setup) row.setup(e);
    for (const auto& f : row.in) feed(e.qp, f);
    const auto got = drain(e.qp, row.out);
    EXPECT_EQ(got, row.out) << "got " << describe(got) << "\nwant " << describe(row.out);
    if (row.check) row.check(e);
    EXPECT_EQ(e.qp.counters().rx_accounted(), e.qp.counters().rx_packets);
  }
}

TEST(RcResponder, CnpGoesToThePeerQpWithBecnAndNoEcn) {
  Env e;
  e.post_recv();
  feed(e.qp, wire::PacketBuilder().bth(op::kSendOnly, kQpB, kStart).tos(0x0B).build());
  auto f = e.qp.pop_tx(0);
  ASSERT_TRUE(f);
  const auto r = wire::parse(f->data(), f->size());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.view.opcode(), op::kCnp);
  EXPECT_EQ(r.view.dest_qp(), kQpA);
  EXPECT_TRUE(r.view.becn());
  EXPECT_EQ(r.view.ecn(), 0);
}

}  // namespace
}  // namespace epic::soft
