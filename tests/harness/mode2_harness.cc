#include "tests/harness/mode2_harness.h"

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <sstream>

#include "datapath/arith/accumulate.h"
#include "datapath/engine/collective_map.h"
#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/parser.h"
#include "host/transport/soft/rc_qp.h"

namespace epic::harness {

namespace e = epic::engine;
namespace w = epic::wire;
namespace s = epic::soft;

int rank_count(const std::vector<int>& shape) {
  int n = 1;
  for (int f : shape) n *= f;
  return n;
}

namespace {

constexpr uint32_t kChildQpBase = 0x1000, kParentQp = 0x2000, kRankQpBase = 0x100;

w::MacAddr mac(uint8_t kind, int i) {
  return {2, kind, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
}

struct Switch {
  e::Mode2Engine engine;
  e::GroupConfig config;
  std::unique_ptr<e::SlotRegion> slots;
  e::Endpoint self;
};

struct Rank {
  std::unique_ptr<s::RcQp> qp;
  size_t k = 0;  // collective in progress
  bool posted = false;
  int pending = 0;  // receives still expected for collective k
  bool ctrl_done = false;
  uint32_t data_done = 0;  // result messages received in collective k
  bool deferred = false;   // one-source data still to send
  // Control messages sent, one per collective: a send buffer must stay valid until its
  // completion, and a rank may move on before its uploads are acknowledged.
  std::vector<std::array<uint8_t, e::kControlPayloadBytes>> ctrl_out;
  std::vector<uint8_t> ctrl_in;
  std::vector<std::vector<uint8_t>> data_in;  // one buffer per expected result message
  std::vector<std::vector<uint8_t>> results;  // per collective: its result messages, concatenated
};

// A node is a switch (index < switches) or a rank; each has numbered ports.
struct PortRef {
  int node = -1;
  int port = -1;
};

struct InFlight {
  uint64_t t, seq;
  PortRef to;
  std::vector<uint8_t> frame;
  bool operator>(const InFlight& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Network {
 public:
  Network(const HarnessConfig& cfg) : cfg_(cfg), rng_(cfg.seed) {}

  // Builds the tree; returns the switch index of the subtree root.
  int build(size_t level, int parent, int index_at_parent) {
    const int sw = static_cast<int>(switches_.size());
    switches_.push_back(std::make_unique<Switch>());
    Switch& S = *switches_.back();
    S.self = {mac(0xEE, sw), 0x0AC80000u + static_cast<uint32_t>(sw), 0};
    S.config.group_id = 1;
    S.config.num_ranks = static_cast<uint16_t>(rank_count(cfg_.shape));
    S.config.initial_psn = cfg_.initial_psn;
    S.config.window = cfg_.window;
    S.config.pmtu = cfg_.pmtu;
    const int fan = cfg_.shape[level];
    const bool leaf = level + 1 == cfg_.shape.size();
    if (parent >= 0) {
      const Switch& P = *switches_[static_cast<size_t>(parent)];
      e::ParentLink pl;
      pl.local = {S.self.mac, S.self.ipv4, kParentQp};
      pl.remote = {P.self.mac, P.self.ipv4, kChildQpBase + static_cast<uint32_t>(index_at_parent)};
      pl.port = static_cast<uint16_t>(fan);
      S.config.parent = pl;
    }
    for (int c = 0; c < fan; ++c) {
      e::ChildLink cl;
      cl.local = {S.self.mac, S.self.ipv4, kChildQpBase + static_cast<uint32_t>(c)};
      cl.port = static_cast<uint16_t>(c);
      if (leaf) {
        const int r = static_cast<int>(ranks_.size());
        ranks_.push_back(std::make_unique<Rank>());
        cl.is_rank = true;
        cl.first_rank = static_cast<uint16_t>(r);
        cl.rank_count = 1;
        cl.remote = {mac(0xAA, r), 0x0A640000u + static_cast<uint32_t>(r),
                     kRankQpBase + static_cast<uint32_t>(r)};
        s::QpConfig q;
        q.qpn = cl.remote.qpn;
        q.remote_qpn = cl.local.qpn;
        q.sq_psn = q.rq_psn = cfg_.initial_psn;
        q.pmtu = cfg_.pmtu;
        q.max_outstanding = cfg_.window;
        q.retransmit_timeout_ns = 2'000'000;
        q.retry_count = 7;
        q.path.local_mac = cl.remote.mac;
        q.path.remote_mac = S.self.mac;
        q.path.local_ipv4 = cl.remote.ipv4;
        q.path.remote_ipv4 = S.self.ipv4;
        ranks_.back()->qp = std::make_unique<s::RcQp>(q);
        rank_leaf_.push_back({sw, c});
        S.config.children.push_back(cl);
      } else {
        cl.first_rank = static_cast<uint16_t>(ranks_.size());
        S.config.children.push_back(cl);  // remote filled in after the child switch exists
        const int child_sw = build(level + 1, sw, c);
        Switch& S2 = *switches_[static_cast<size_t>(sw)];  // switches_ may have grown
        S2.config.children[static_cast<size_t>(c)].rank_count = static_cast<uint16_t>(
            ranks_.size() - S2.config.children[static_cast<size_t>(c)].first_rank);
        S2.config.children[static_cast<size_t>(c)].remote = {
            switches_[static_cast<size_t>(child_sw)]->self.mac,
            switches_[static_cast<size_t>(child_sw)]->self.ipv4, kParentQp};
        links_[{sw, c}] = {child_sw, cfg_.shape[level + 1]};
        links_[{child_sw, cfg_.shape[level + 1]}] = {sw, c};
      }
    }
    return sw;
  }

  void install() {
    for (auto& S : switches_) {
      S->slots = std::make_unique<e::SlotRegion>(cfg_.window, cfg_.pmtu);
      S->engine.install_group(S->config, S->slots.get());
    }
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const auto [sw, c] = rank_leaf_[r];
      links_[{sw, c}] = {rank_node(r), 0};
      links_[{rank_node(r), 0}] = {sw, c};
    }
  }

  int rank_node(size_t r) const { return static_cast<int>(switches_.size() + r); }

  void transmit(PortRef from, std::vector<uint8_t> frame) {
    const auto it = links_.find({from.node, from.port});
    if (it == links_.end()) return;
    const Faults& f = cfg_.faults;
    if (uni(f.loss)) return;
    const uint64_t delay = 1000 + (uni(f.reorder) ? rng_() % 30000 : 0);
    if (uni(f.duplicate)) queue_.push({now_ + delay + rng_() % 8000, seq_++, it->second, frame});
    queue_.push({now_ + delay, seq_++, it->second, std::move(frame)});
  }

  bool uni(double p) { return p > 0 && std::uniform_real_distribution<>(0, 1)(rng_) < p; }

  struct KeyLess {
    bool operator()(const std::pair<int, int>& a, const std::pair<int, int>& b) const {
      return a < b;
    }
  };

  const HarnessConfig& cfg_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<std::pair<int, int>> rank_leaf_;  // (switch, child index)
  std::map<std::pair<int, int>, PortRef, KeyLess> links_;
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> queue_;
  uint64_t now_ = 0, seq_ = 0;
};

std::vector<uint8_t> reference(const e::CollectiveDescriptor& d,
                               const std::vector<std::vector<uint8_t>>& in) {
  const size_t n = d.count;
  std::vector<uint8_t> acc(n * arith::accum_bytes(d.dtype));
  std::vector<uint8_t> outb(n * arith::wire_bytes(d.dtype));
  if (n == 0) return outb;
  arith::reference::load(d.dtype, acc.data(), in[0].data(), n);
  for (size_t r = 1; r < in.size(); ++r)
    arith::reference::combine(d.dtype, d.op, acc.data(), in[r].data(), n);
  arith::reference::store(d.dtype, outb.data(), acc.data(), n);
  return outb;
}

}  // namespace

std::vector<std::vector<uint8_t>> exact_inputs(const e::CollectiveDescriptor& d, int ranks,
                                               uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> in(static_cast<size_t>(ranks));
  const size_t wb = arith::wire_bytes(d.dtype);
  const size_t elems = size_t{d.count} * (d.type == e::CollectiveType::kReduceScatter ? ranks : 1);
  for (auto& v : in) {
    v.resize(elems * wb);
    for (size_t i = 0; i < elems; ++i) {
      const int x = static_cast<int>(rng() % 17) - 8;  // sums of <= 16 ranks stay exact in bf16
      uint8_t* p = v.data() + i * wb;
      switch (d.dtype) {
        case arith::DType::kInt32: {
          const int32_t y = d.op == arith::ReduceOp::kSum ? static_cast<int32_t>(rng()) : x;
          std::memcpy(p, &y, 4);
          break;
        }
        case arith::DType::kFp32: {
          const float y = static_cast<float>(x);
          std::memcpy(p, &y, 4);
          break;
        }
        case arith::DType::kBf16: {
          const float y = static_cast<float>(x);
          uint32_t b;
          std::memcpy(&b, &y, 4);
          const uint16_t h = static_cast<uint16_t>(b >> 16);  // small integers are exact in bf16
          std::memcpy(p, &h, 2);
          break;
        }
        case arith::DType::kFp16: {
          // small integers: sign, exponent and 10-bit mantissa by hand
          uint16_t h = 0;
          if (x != 0) {
            const int a = x < 0 ? -x : x;
            int e = 0;
            while ((a >> (e + 1)) != 0) ++e;
            const uint16_t mant = static_cast<uint16_t>(((a << (10 - e)) & 0x3FF));
            h = static_cast<uint16_t>((x < 0 ? 0x8000 : 0) | ((e + 15) << 10) | mant);
          }
          std::memcpy(p, &h, 2);
          break;
        }
      }
    }
  }
  return in;
}

RunResult run(const HarnessConfig& cfg, const std::vector<e::CollectiveDescriptor>& plan,
              const std::vector<std::vector<std::vector<uint8_t>>>& inputs) {
  RunResult res;
  Network net(cfg);
  net.build(0, -1, 0);
  net.install();
  const size_t R = net.ranks_.size();
  res.ranks_count = R;
  std::string& why = res.failure;

  // Sends rank r's data messages of its current collective.
  auto send_data = [&](size_t r) {
    Rank& rk = *net.ranks_[r];
    const e::CollectiveDescriptor& d = plan[rk.k];
    const e::CollectiveShape sh = e::shape_of(d, static_cast<uint16_t>(R), cfg.pmtu);
    const uint32_t chunk = sh.chunk_bytes;
    const std::vector<uint8_t>& in = inputs[rk.k][r];
    const uint32_t nsend =
        sh.n_data == 0 ? 0 : sh.send_count(static_cast<uint16_t>(r)) / sh.chunk_packets;
    bool ok = true;
    for (uint32_t m = 0; m < nsend; ++m) {
      const uint8_t* src =
          in.data() + (d.type == e::CollectiveType::kReduceScatter ? size_t{m} * chunk : 0);
      ok &= rk.qp->post_send({(uint64_t{rk.k} << 16) + 1 + m, s::SendOp::kSend, src, chunk});
    }
    return ok;
  };
  auto maybe_send_deferred = [&](size_t r) {
    Rank& rk = *net.ranks_[r];
    if (!rk.deferred || !rk.ctrl_done) return;
    const e::CollectiveDescriptor& d = plan[rk.k];
    if (d.type == e::CollectiveType::kAllGather && rk.data_done < r) return;
    rk.deferred = false;
    if (!send_data(r) && why.empty()) why = "rank " + std::to_string(r) + ": post refused";
  };
  auto drive = [&](size_t r) {
    Rank& rk = *net.ranks_[r];
    if (rk.posted || rk.k >= plan.size()) return;
    const e::CollectiveDescriptor& d = plan[rk.k];
    const e::CollectiveShape sh = e::shape_of(d, static_cast<uint16_t>(R), cfg.pmtu);
    const auto rank = static_cast<uint16_t>(r);
    const uint32_t chunk = sh.chunk_bytes;
    const uint64_t base = uint64_t{rk.k} << 16;
    // Result messages this rank receives, in its receive order.
    rk.data_in.clear();
    const uint32_t nrecv = sh.n_data == 0 ? 0 : sh.recv_count(rank) / sh.chunk_packets;
    for (uint32_t m = 0; m < nrecv; ++m) rk.data_in.emplace_back(chunk, 0xEE);
    rk.ctrl_in.assign(e::kControlPayloadBytes, 0);
    rk.ctrl_out.resize(plan.size());
    e::encode_control(d, rk.ctrl_out[rk.k].data());
    rk.pending = 1 + static_cast<int>(nrecv);
    bool ok = rk.qp->post_recv({base, rk.ctrl_in.data(), e::kControlPayloadBytes});
    for (uint32_t m = 0; m < nrecv; ++m)
      ok &= rk.qp->post_recv({base + 1 + m, rk.data_in[m].data(), chunk});
    ok &= rk.qp->post_send({base, s::SendOp::kSendWithImm, rk.ctrl_out[rk.k].data(),
                            e::kControlPayloadBytes, e::kControlImm});
    // Data messages it sends: one per chunk it is a source of. A one-source packet (Broadcast,
    // AllGather) is sent only once the receivers are ready for it, or they would drop it as
    // out of sequence: after the control result (every rank has finished the previous
    // collective), and for AllGather after the chunks before its own.
    rk.ctrl_done = false;
    rk.data_done = 0;
    rk.deferred = !sh.multi_source() && sh.send_count(rank) > 0;
    if (!rk.deferred) ok &= send_data(r);
    if (!ok && why.empty()) why = "rank " + std::to_string(r) + ": post refused";
    rk.posted = true;
  };
  auto done = [&] {
    for (auto& rk : net.ranks_) {
      if (rk->k < plan.size() || rk->qp->outstanding_sends() > 0) return false;
    }
    return true;
  };

  std::vector<std::vector<e::RxFrame>> bursts(net.switches_.size());
  std::vector<std::vector<std::vector<uint8_t>>> burst_frames(net.switches_.size());
  e::TxBatch tx;
  for (int iter = 0; iter < 50'000'000 && why.empty(); ++iter) {
    for (size_t r = 0; r < R; ++r) {
      Rank& rk = *net.ranks_[r];
      drive(r);
      while (auto f = rk.qp->pop_tx(net.now_)) net.transmit({net.rank_node(r), 0}, std::move(*f));
      while (auto c = rk.qp->poll_cq()) {
        if (c->status != s::WcStatus::kSuccess) {
          why = "rank " + std::to_string(r) + ": completion " +
                std::string(s::to_string(c->status)) + " for wr " + std::to_string(c->wr_id);
          break;
        }
        if (c->opcode != s::WcOpcode::kRecv) continue;
        const size_t k = c->wr_id >> 16;
        const size_t m = c->wr_id & 0xFFFF;
        if (k != rk.k) {
          why = "rank " + std::to_string(r) + ": receive for collective " + std::to_string(k) +
                " while in " + std::to_string(rk.k);
          break;
        }
        if (m == 0) {
          uint8_t want[e::kControlPayloadBytes];
          e::encode_control(plan[k], want);
          if (!c->with_imm || c->imm_data != e::kControlImm ||
              c->byte_len != e::kControlPayloadBytes ||
              std::memcmp(want, rk.ctrl_in.data(), e::kControlPayloadBytes) != 0) {
            why = "rank " + std::to_string(r) + ": wrong control result for collective " +
                  std::to_string(k);
          }
        } else if (c->byte_len != rk.data_in[m - 1].size()) {
          why = "rank " + std::to_string(r) + ": result length " + std::to_string(c->byte_len);
        }
        if (m == 0) {
          rk.ctrl_done = true;
        } else {
          ++rk.data_done;
        }
        maybe_send_deferred(r);
        if (--rk.pending == 0) {
          std::vector<uint8_t> all;
          for (const auto& b : rk.data_in) all.insert(all.end(), b.begin(), b.end());
          rk.results.push_back(std::move(all));
          ++rk.k;
          rk.posted = false;
          drive(r);
        }
      }
    }
    if (!why.empty() || done()) break;
    uint64_t next = UINT64_MAX;
    if (!net.queue_.empty()) next = net.queue_.top().t;
    for (auto& rk : net.ranks_) {
      if (auto d = rk->qp->next_deadline()) next = std::min(next, *d);
    }
    if (next == UINT64_MAX || next > cfg.time_limit_ns) break;
    net.now_ = std::max(net.now_, next);
    while (!net.queue_.empty() && net.queue_.top().t <= net.now_) {
      InFlight f = net.queue_.top();
      net.queue_.pop();
      const int node = f.to.node;
      if (node >= static_cast<int>(net.switches_.size())) {
        const auto r = w::parse(f.frame.data(), f.frame.size());
        if (!r.ok()) {
          why = "a switch emitted a malformed frame: " + std::string(w::to_string(r.error));
          break;
        }
        net.ranks_[static_cast<size_t>(node) - net.switches_.size()]->qp->receive(r.view, net.now_);
      } else {
        burst_frames[static_cast<size_t>(node)].push_back(std::move(f.frame));
        bursts[static_cast<size_t>(node)].push_back({nullptr, 0, static_cast<uint16_t>(f.to.port)});
      }
    }
    for (size_t sw = 0; sw < net.switches_.size(); ++sw) {
      if (bursts[sw].empty()) continue;
      for (size_t i = 0; i < bursts[sw].size(); ++i) {
        bursts[sw][i].data = burst_frames[sw][i].data();
        bursts[sw][i].length = static_cast<uint16_t>(burst_frames[sw][i].size());
      }
      tx.clear();
      net.switches_[sw]->engine.process(bursts[sw].data(), bursts[sw].size(), tx);
      bursts[sw].clear();
      burst_frames[sw].clear();
      for (size_t i = 0; i < tx.size(); ++i) {
        net.transmit({static_cast<int>(sw), tx.frame(i).port},
                     std::vector<uint8_t>(tx.data(i), tx.data(i) + tx.frame(i).length));
      }
    }
    for (auto& rk : net.ranks_) rk->qp->on_timer(net.now_);
  }
  res.virtual_ns = net.now_;
  if (!why.empty() || !done()) {
    std::ostringstream o;
    o << (why.empty() ? "hang" : why) << " at virtual t=" << net.now_ << " ns:";
    for (size_t r = 0; r < R; ++r) {
      const Rank& rk = *net.ranks_[r];
      o << "\n  rank " << r << ": collective " << rk.k << "/" << plan.size() << std::hex
        << " next_send_psn=" << rk.qp->next_send_psn() << " expected_psn=" << rk.qp->expected_psn()
        << std::dec << " outstanding_sends=" << rk.qp->outstanding_sends()
        << " posted_recvs=" << rk.qp->posted_recvs()
        << " state=" << (rk.qp->state() == s::QpState::kRts ? "RTS" : "ERROR")
        << " timeouts=" << rk.qp->counters().timeouts << " rnr_rx=" << rk.qp->counters().rx_rnr_nak
        << " retx=" << rk.qp->counters().tx_retransmits;
    }
    why = o.str();
  }
  // Results bit for bit.
  for (size_t k = 0; k < plan.size() && why.empty(); ++k) {
    const e::CollectiveDescriptor& d = plan[k];
    const e::CollectiveShape sh = e::shape_of(d, static_cast<uint16_t>(R), cfg.pmtu);
    for (size_t r = 0; r < R && why.empty(); ++r) {
      std::vector<uint8_t> want;
      const size_t chunk = sh.chunk_bytes;
      switch (d.type) {
        case e::CollectiveType::kAllReduce:
          want = reference(d, inputs[k]);
          break;
        case e::CollectiveType::kReduce:
          if (r == d.root) want = reference(d, inputs[k]);
          break;
        case e::CollectiveType::kBroadcast:
          if (r != d.root) want = inputs[k][d.root];
          break;
        case e::CollectiveType::kReduceScatter: {
          std::vector<std::vector<uint8_t>> chunks;
          for (size_t p = 0; p < R; ++p) {
            chunks.emplace_back(inputs[k][p].begin() + static_cast<long>(r * chunk),
                                inputs[k][p].begin() + static_cast<long>((r + 1) * chunk));
          }
          want = reference(d, chunks);
          break;
        }
        case e::CollectiveType::kAllGather:
          for (size_t p = 0; p < R; ++p) {
            if (p != r) want.insert(want.end(), inputs[k][p].begin(), inputs[k][p].end());
          }
          break;
        case e::CollectiveType::kBarrier:
          break;
      }
      if (net.ranks_[r]->results[k] != want) {
        why = "rank " + std::to_string(r) + ": result of collective " + std::to_string(k) + " (" +
              std::string(e::to_string(d.type)) + ") differs from the reference";
      }
    }
  }
  for (auto& S : net.switches_) {
    const e::EngineCounters& c = S->engine.counters();
    res.per_switch.push_back(c);
    if (c.rx_accounted() != c.rx_frames && why.empty()) why = "switch counters do not add up";
    res.switches.rx_frames += c.rx_frames;
    res.switches.upward_accepted += c.upward_accepted;
    res.switches.upward_duplicate += c.upward_duplicate;
    res.switches.aggregations_completed += c.aggregations_completed;
    res.switches.results_replicated += c.results_replicated;
    res.switches.results_resent += c.results_resent;
    res.switches.acks_reflected += c.acks_reflected;
    res.switches.slots_recycled += c.slots_recycled;
    res.switches.drop_data_before_control += c.drop_data_before_control;
    res.switches.upward_stale += c.upward_stale;
    res.switches.upward_slot_busy += c.upward_slot_busy;
  }
  for (auto& rk : net.ranks_) {
    const s::QpCounters& c = rk->qp->counters();
    res.ranks.tx_retransmits += c.tx_retransmits;
    res.ranks.tx_acks += c.tx_acks;
    res.ranks.timeouts += c.timeouts;
    res.ranks.rx_packets += c.rx_packets;
  }
  res.ok = why.empty();
  return res;
}

}  // namespace epic::harness
