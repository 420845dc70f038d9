// Two RcQps connected by a simulated link with seeded loss, duplication,
// reordering and delay, each sending a random mix of SEND / SEND-with-imm /
// RDMA WRITE / WRITE-with-imm messages to the other. Over 1,000 seeds, every
// message must be delivered exactly once, in order and intact — or the QP must
// end in a reported error state. Never silent corruption, never a hang, and
// every received packet is accounted for by exactly one counter.
#include <gtest/gtest.h>

#include <map>
#include <queue>
#include <random>

#include "rc_test_util.h"

namespace epic::soft {
namespace {

using namespace testing;

struct Message {
  SendOp op;
  uint32_t length;
  uint32_t imm;
  uint64_t mr_offset;  // WRITE target in the peer's region
  std::vector<uint8_t> data;
};

struct Side {
  std::unique_ptr<RcQp> qp;
  std::vector<Message> to_send;                 // what this side sends
  std::vector<std::vector<uint8_t>> recv_bufs;  // one per expected incoming receive
  std::vector<uint8_t> mr;                      // target of the peer's WRITEs
  std::vector<Completion> send_cq, recv_cq;
  size_t recvs_posted = 0;
};

struct Params {
  double loss, dup, reorder;
  uint16_t pmtu;
  uint32_t window;
  bool lazy_recv;  // post receives late, so RNR NAKs happen
};

bool consumes_recv(SendOp op) { return op != SendOp::kRdmaWrite; }
bool is_write(SendOp op) { return op == SendOp::kRdmaWrite || op == SendOp::kRdmaWriteWithImm; }

struct Outcome {
  bool errored = false;
  bool hung = false;
  std::string failure;  // empty when every property held
  QpCounters sum;       // both QPs' counters added, to show what the seed exercised
  size_t messages = 0;
};

Outcome run_seed(uint32_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](double p) { return std::uniform_real_distribution<>(0, 1)(rng) < p; };
  const double losses[] = {0.0, 0.01, 0.05, 0.2};
  Params prm{losses[rng() % 4],
             (rng() % 3) * 0.03,
             (rng() % 2) * 0.2,
             static_cast<uint16_t>(256 << (rng() % 3)),
             1 + static_cast<uint32_t>(rng() % 64),
             rng() % 4 == 0};
  const uint32_t psn_a = rng() % 2 ? 0xFFFFFF - rng() % 40 : rng() & 0xFFFFFF;
  const uint32_t psn_b = rng() % 2 ? 0xFFFFFF - rng() % 40 : rng() & 0xFFFFFF;

  Side s[2];
  for (int i = 0; i < 2; ++i) {
    QpConfig c = i == 0 ? config(kQpA, kQpB, psn_a, psn_b, prm.pmtu)
                        : config(kQpB, kQpA, psn_b, psn_a, prm.pmtu);
    c.max_outstanding = prm.window;
    c.retransmit_timeout_ns = 200'000;
    c.retry_count = 7;
    c.rnr_delay_ns = 50'000;
    c.ack_req_every = 1 + static_cast<uint32_t>(rng() % 16);
    c.probe_on_timeout = seed % 2 == 1;  // half the seeds resend one packet after a timeout
    s[i].qp = std::make_unique<RcQp>(c);
  }
  // Messages; WRITE targets are disjoint slices of the peer's region.
  for (int i = 0; i < 2; ++i) {
    const int n = 3 + static_cast<int>(rng() % 12);
    uint64_t mr_used = 0;
    for (int k = 0; k < n; ++k) {
      Message m;
      m.op = static_cast<SendOp>(rng() % 4);
      m.length = rng() % 3 == 0 ? static_cast<uint32_t>(rng() % 5)
                                : static_cast<uint32_t>(rng() % (4 * prm.pmtu + 100));
      m.imm = static_cast<uint32_t>(rng());
      m.mr_offset = mr_used;
      if (is_write(m.op)) mr_used += m.length;
      m.data.resize(m.length);
      for (auto& b : m.data) b = static_cast<uint8_t>(rng());
      s[i].to_send.push_back(std::move(m));
    }
    Side& peer = s[1 - i];
    peer.mr.assign(mr_used + 1, 0);
    peer.qp->register_mr(
        {0x1000000, peer.mr.data(), peer.mr.size(), 0x5000 + static_cast<uint32_t>(i)});
    for (const Message& m : s[i].to_send) {
      if (consumes_recv(m.op)) peer.recv_bufs.emplace_back(4 * prm.pmtu + 100, 0xEE);
    }
  }
  auto post_recvs = [&](Side& side, size_t upto) {
    while (side.recvs_posted < std::min(upto, side.recv_bufs.size())) {
      auto& b = side.recv_bufs[side.recvs_posted];
      side.qp->post_recv({side.recvs_posted, b.data(), static_cast<uint32_t>(b.size())});
      ++side.recvs_posted;
    }
  };
  for (int i = 0; i < 2; ++i) {
    post_recvs(s[i], prm.lazy_recv ? 1 : SIZE_MAX);
    for (size_t k = 0; k < s[i].to_send.size(); ++k) {
      const Message& m = s[i].to_send[k];
      SendWr wr{k,
                m.op,
                m.data.data(),
                m.length,
                m.imm,
                0x1000000 + m.mr_offset,
                0x5000 + static_cast<uint32_t>(i),
                true};
      if (!s[i].qp->post_send(wr)) return {false, false, "post_send refused", {}, 0};
    }
  }

  struct InFlight {
    uint64_t t, seq;
    int dst;
    std::vector<uint8_t> frame;
    bool operator>(const InFlight& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> link;
  uint64_t now = 0, seq = 0;
  auto transmit = [&](int dst, std::vector<uint8_t> f) {
    if (uni(prm.loss)) return;
    const uint64_t delay = 1000 + (uni(prm.reorder) ? rng() % 20000 : 0);
    if (uni(prm.dup)) link.push({now + delay + rng() % 5000, seq++, dst, f});
    link.push({now + delay, seq++, dst, std::move(f)});
  };
  auto done = [&] {
    for (auto& side : s) {
      if (side.qp->state() != QpState::kError && side.qp->outstanding_sends() > 0) return false;
    }
    return true;
  };

  Outcome out;
  const uint64_t kSimLimit = 2'000'000'000;  // 2 s of simulated time
  uint64_t next_lazy_post = 30'000;
  for (int iter = 0; iter < 5'000'000; ++iter) {
    for (int i = 0; i < 2; ++i) {
      while (auto f = s[i].qp->pop_tx(now)) transmit(1 - i, std::move(*f));
      while (auto c = s[i].qp->poll_cq()) {
        (c->opcode == WcOpcode::kSend || c->opcode == WcOpcode::kRdmaWrite ? s[i].send_cq
                                                                           : s[i].recv_cq)
            .push_back(*c);
      }
    }
    if (done()) break;
    uint64_t next = UINT64_MAX;
    if (!link.empty()) next = link.top().t;
    for (auto& side : s) {
      if (auto d = side.qp->next_deadline()) next = std::min(next, *d);
    }
    if (prm.lazy_recv) next = std::min(next, next_lazy_post);
    if (next == UINT64_MAX || next > kSimLimit) {
      out.hung = true;
      break;
    }
    now = std::max(now, next);
    if (prm.lazy_recv && now >= next_lazy_post) {
      for (auto& side : s) post_recvs(side, side.recvs_posted + 1);
      next_lazy_post = now + 30'000;
    }
    while (!link.empty() && link.top().t <= now) {
      InFlight f = link.top();
      link.pop();
      const auto r = wire::parse(f.frame.data(), f.frame.size());
      if (!r.ok()) return {false, false, "malformed frame on the link", {}, 0};
      s[f.dst].qp->receive(r.view, now);
    }
    for (auto& side : s) side.qp->on_timer(now);
  }
  if (!done()) out.hung = true;

  // Properties.
  std::string& why = out.failure;
  for (int i = 0; i < 2 && why.empty(); ++i) {
    Side& me = s[i];
    Side& peer = s[1 - i];
    const QpCounters& c = me.qp->counters();
    if (c.rx_accounted() != c.rx_packets) why = "rx counters do not add up";
    out.errored |= me.qp->state() == QpState::kError;
    // Each send completes exactly once, successes first and in order.
    if (me.qp->state() != QpState::kError && me.send_cq.size() != me.to_send.size()) {
      why = "a send never completed";
    }
    bool failed = false;
    for (size_t k = 0; k < me.send_cq.size() && why.empty(); ++k) {
      const Completion& cq = me.send_cq[k];
      if (cq.wr_id != k) why = "send completions out of order";
      if (cq.status != WcStatus::kSuccess) failed = true;
      if (failed && cq.status == WcStatus::kSuccess) why = "success after an error";
    }
    // What the peer received is a prefix of what was sent, exactly once, intact.
    size_t r = 0;
    for (size_t k = 0; k < me.to_send.size() && why.empty(); ++k) {
      const Message& m = me.to_send[k];
      const bool acked = k < me.send_cq.size() && me.send_cq[k].status == WcStatus::kSuccess;
      if (is_write(m.op) && acked &&
          !std::equal(m.data.begin(), m.data.end(),
                      peer.mr.begin() + static_cast<long>(m.mr_offset))) {
        why = "RDMA WRITE data corrupted";
      }
      if (!consumes_recv(m.op)) continue;
      const bool got = r < peer.recv_cq.size() && peer.recv_cq[r].status == WcStatus::kSuccess;
      if (acked && !got) why = "acknowledged message was not received";
      if (!got) break;
      const Completion& rc = peer.recv_cq[r];
      if (rc.wr_id != r || rc.byte_len != m.length) why = "received message has wrong length/order";
      const bool want_imm = m.op != SendOp::kSend;
      if (rc.with_imm != want_imm || (want_imm && rc.imm_data != m.imm)) why = "immediate wrong";
      if (m.op != SendOp::kRdmaWriteWithImm &&
          !std::equal(m.data.begin(), m.data.end(), peer.recv_bufs[r].begin())) {
        why = "SEND data corrupted";
      }
      ++r;
    }
    for (size_t k = r; k < peer.recv_cq.size() && why.empty(); ++k) {
      if (peer.recv_cq[k].status == WcStatus::kSuccess) why = "extra (duplicate) message received";
    }
    if (!why.empty()) why = (i == 0 ? "A->B: " : "B->A: ") + why;
  }
  if (out.errored && why.empty()) {
    // An error must be reported: some completion carries a non-success status.
    bool reported = false;
    for (auto& side : s) {
      for (auto& c : side.send_cq) reported |= c.status != WcStatus::kSuccess;
    }
    if (!reported) why = "QP in error without an error completion";
  }
  if (out.hung) why += " [hang]";
  for (auto& side : s) {
    const QpCounters& c = side.qp->counters();
    out.sum.tx_retransmits += c.tx_retransmits;
    out.sum.tx_nak_seq += c.tx_nak_seq;
    out.sum.tx_rnr_naks += c.tx_rnr_naks;
    out.sum.timeouts += c.timeouts;
    out.sum.rx_request_duplicate += c.rx_request_duplicate;
    out.sum.rx_request_out_of_sequence += c.rx_request_out_of_sequence;
    out.sum.rx_ack_stale += c.rx_ack_stale;
    out.sum.rx_packets += c.rx_packets;
    out.messages += side.to_send.size();
  }
  if (out.errored && prm.loss <= 0.05 && why.empty()) why = "errored at <= 5% loss";
  return out;
}

TEST(RcSeededPair, ThousandSeedsDeliverExactlyOnceInOrderIntactOrReportAnError) {
  int errored = 0;
  int failures = 0;
  QpCounters sum;
  size_t messages = 0;
  for (uint32_t seed = 1; seed <= 1000; ++seed) {
    const Outcome o = run_seed(seed);
    errored += o.errored;
    messages += o.messages;
    sum.rx_packets += o.sum.rx_packets;
    sum.tx_retransmits += o.sum.tx_retransmits;
    sum.tx_nak_seq += o.sum.tx_nak_seq;
    sum.tx_rnr_naks += o.sum.tx_rnr_naks;
    sum.timeouts += o.sum.timeouts;
    sum.rx_request_duplicate += o.sum.rx_request_duplicate;
    sum.rx_request_out_of_sequence += o.sum.rx_request_out_of_sequence;
    sum.rx_ack_stale += o.sum.rx_ack_stale;
    if (!o.failure.empty() && ++failures <= 10)
      ADD_FAILURE() << "seed " << seed << ": " << o.failure;
  }
  EXPECT_EQ(failures, 0);
  // 20% loss seeds may legitimately exhaust retries; report how many did.
  RecordProperty("errored_seeds", errored);
  std::printf(
      "seeds: 1000, messages: %zu, ended in a reported error state: %d\n"
      "packets received %llu, retransmitted %llu, timeouts %llu, NAK-seq %llu, RNR NAK %llu,\n"
      "duplicates seen %llu, out-of-sequence %llu, stale ACKs %llu\n",
      messages, errored, (unsigned long long)sum.rx_packets, (unsigned long long)sum.tx_retransmits,
      (unsigned long long)sum.timeouts, (unsigned long long)sum.tx_nak_seq,
      (unsigned long long)sum.tx_rnr_naks, (unsigned long long)sum.rx_request_duplicate,
      (unsigned long long)sum.rx_request_out_of_sequence, (unsigned long long)sum.rx_ack_stale);
  // The harness must have exercised every recovery path, or it proves nothing.
  EXPECT_GT(sum.tx_retransmits, 0u);
  EXPECT_GT(sum.timeouts, 0u);
  EXPECT_GT(sum.tx_nak_seq, 0u);
  EXPECT_GT(sum.tx_rnr_naks, 0u);
  EXPECT_GT(sum.rx_request_duplicate, 0u);
}

}  // namespace
}  // namespace epic::soft
