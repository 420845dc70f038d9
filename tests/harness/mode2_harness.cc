#include "tests/harness/mode2_harness.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <sstream>

#include "datapath/engine/group_health.h"
#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/parser.h"
#include "host/collective/collective_runner.h"
#include "host/collective/expected.h"
#include "host/collective/layout.h"
#include "host/collective/plan.h"
#include "host/transport/soft/rc_qp.h"
#include "host/transport/soft/soft_endpoint.h"
#include "proto/vocab/psn.h"

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

vocab::MacAddr mac(uint8_t kind, int i) {
  return {2, kind, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
}

struct Switch {
  e::Mode2Engine engine;
  e::GroupConfig config;
  std::unique_ptr<e::SlotRegion> slots;
  e::Endpoint self;
};

// A rank is its RC QP to the leaf switch and the rank library's logic driving it.
struct Rank {
  std::unique_ptr<s::RcQp> qp;
  std::unique_ptr<s::SoftQpEndpoint> endpoint;  // the runner's view of qp
  std::unique_ptr<host::CollectiveRunner> runner;
  std::vector<std::vector<uint8_t>> results;  // per collective: the receive buffer
  std::optional<uint64_t> start_at;           // a late rank: when it starts its next collective
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
    S.config.mode = cfg_.mode;
    S.config.hop_timeout_us = cfg_.hop_timeout_us;
    S.config.pkey = cfg_.group_pkey;
    S.config.arith = cfg_.arith;
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
        q.max_outstanding = cfg_.rank_window != 0 ? cfg_.rank_window : cfg_.window;
        q.retransmit_timeout_ns = cfg_.rank_timeout_ns;
        q.retry_count = 7;
        q.probe_on_timeout = true;  // as libinc's soft transport
        q.pkey = cfg_.rank_pkey;
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
      S->slots = std::make_unique<e::SlotRegion>(cfg_.window, cfg_.pmtu, S->config.arith,
                                                 S->config.num_ranks);
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
    uint64_t leaves = now_;  // when its last bit is on the wire
    if (cfg_.link_gbps > 0) {
      uint64_t& busy = busy_until_[{from.node, from.port}];
      leaves = std::max(now_, busy) + static_cast<uint64_t>(frame.size() * 8 / cfg_.link_gbps);
      busy = leaves;
    }
    if (now_ >= f.outage_at_ns && now_ - f.outage_at_ns < f.outage_ns) return;
    if (uni(f.loss)) return;
    const uint64_t delay =
        leaves - now_ + cfg_.link_delay_ns + (uni(f.reorder) ? rng_() % 30000 : 0);
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
  std::map<std::pair<int, int>, uint64_t, KeyLess> busy_until_;  // per sending port
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> queue_;
  uint64_t now_ = 0, seq_ = 0;
};

}  // namespace

namespace {

RunResult run_checked(const HarnessConfig& cfg,
                      const std::vector<vocab::CollectiveDescriptor>& plan,
                      const std::vector<std::vector<std::vector<uint8_t>>>& inputs,
                      const std::vector<std::vector<std::vector<uint8_t>>>* expected) {
  RunResult res;
  Network net(cfg);
  net.build(0, -1, 0);
  net.install();
  const size_t R = net.ranks_.size();
  res.ranks_count = R;
  std::string& why = res.failure;

  for (size_t r = 0; r < R; ++r) {
    Rank& rk = *net.ranks_[r];
    rk.endpoint = std::make_unique<s::SoftQpEndpoint>(*rk.qp);
    rk.runner = std::make_unique<host::CollectiveRunner>(*rk.endpoint, static_cast<uint16_t>(r),
                                                         static_cast<uint16_t>(R));
    rk.results.resize(plan.size());
  }
  // Rank r's library: start the next collective once the previous one has its results.
  auto start_next = [&](size_t r) {
    Rank& rk = *net.ranks_[r];
    host::CollectiveRunner& runner = *rk.runner;
    const uint64_t k = runner.started();
    if (runner.error().empty() && runner.done() && k < plan.size()) {
      if (static_cast<int>(r) == cfg.late_rank) {
        if (!rk.start_at) rk.start_at = net.now_ + cfg.late_ns;
        if (net.now_ < *rk.start_at) return;
        rk.start_at.reset();
      }
      rk.results[k].assign(
          host::recv_bytes(plan[k], static_cast<uint16_t>(r), static_cast<uint16_t>(R)), 0xEE);
      runner.start(plan[k], inputs[k][r], rk.results[k]);
    }
  };
  // One step of rank r: transmit what its QP queued, consume its completions (which may post
  // deferred data or start the next collective; those frames leave at the next step).
  auto step = [&](size_t r) {
    Rank& rk = *net.ranks_[r];
    start_next(r);
    while (auto f = rk.qp->pop_tx(net.now_)) net.transmit({net.rank_node(r), 0}, std::move(*f));
    rk.runner->poll();
    start_next(r);
    if (!rk.runner->error().empty() && why.empty()) {
      why = "rank " + std::to_string(r) + ": " + rk.runner->error();
    }
  };
  const bool mode3 = cfg.mode == vocab::GroupMode::kMode3;
  // Mode-III: nothing in flight and no switch with a timer or a Pipe to continue.
  auto drained = [&] {
    if (!mode3) return true;
    if (!net.queue_.empty()) return false;
    for (auto& S : net.switches_) {
      if (S->engine.next_poll_ns()) return false;
    }
    return true;
  };
  auto done = [&] {
    for (auto& rk : net.ranks_) {
      if (rk->runner->started() < plan.size() || !rk->runner->done() ||
          rk->qp->outstanding_sends() > 0) {
        return false;
      }
    }
    return true;
  };

  std::vector<std::vector<e::RxFrame>> bursts(net.switches_.size());
  std::vector<std::vector<std::vector<uint8_t>>> burst_frames(net.switches_.size());
  e::TxBatch tx;
  for (int iter = 0; iter < 50'000'000 && why.empty(); ++iter) {
    for (size_t r = 0; r < R && why.empty(); ++r) step(r);
    if (res.done_ns == 0 && why.empty() && done()) res.done_ns = net.now_;
    if (!why.empty() || (done() && drained())) break;
    uint64_t next = UINT64_MAX;
    if (!net.queue_.empty()) next = net.queue_.top().t;
    for (auto& S : net.switches_) {
      if (const auto t = S->engine.next_poll_ns()) next = std::min(next, std::max(*t, net.now_));
    }
    for (auto& rk : net.ranks_) {
      if (auto d = rk->qp->next_deadline()) next = std::min(next, *d);
      if (rk->start_at) next = std::min(next, *rk->start_at);
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
      tx.clear();
      net.switches_[sw]->engine.poll(net.now_, tx);
      for (size_t i = 0; i < tx.size(); ++i) {
        net.transmit({static_cast<int>(sw), tx.frame(i).port},
                     std::vector<uint8_t>(tx.data(i), tx.data(i) + tx.frame(i).length));
      }
      if (bursts[sw].empty()) continue;
      for (size_t i = 0; i < bursts[sw].size(); ++i) {
        bursts[sw][i].data = burst_frames[sw][i].data();
        bursts[sw][i].length = static_cast<uint16_t>(burst_frames[sw][i].size());
      }
      tx.clear();
      net.switches_[sw]->engine.process(bursts[sw].data(), bursts[sw].size(), tx, net.now_);
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
  if (why.empty() && done() && !drained())
    why = "the network did not drain (timers or frames left)";
  if (!why.empty() || !done()) {
    std::ostringstream o;
    o << (why.empty() ? "hang" : why) << " at virtual t=" << net.now_ << " ns:";
    for (size_t r = 0; r < R; ++r) o << "\n  " << net.ranks_[r]->runner->dump();
    why = o.str();
  }
  // Results bit for bit.
  for (size_t k = 0; k < plan.size() && why.empty() && cfg.check_results; ++k) {
    for (size_t r = 0; r < R && why.empty(); ++r) {
      const std::vector<uint8_t> want =
          expected ? (*expected)[k][r]
                   : host::expected_result(plan[k], static_cast<uint16_t>(r), inputs[k], cfg.arith);
      if (const auto at = host::first_difference(net.ranks_[r]->results[k], want)) {
        why = "rank " + std::to_string(r) + ": result of collective " + std::to_string(k) + " (" +
              host::format_collective(plan[k]) + ") differs from the reference at byte " +
              std::to_string(*at);
      }
    }
  }
  // Mode-III: every Pipe sent every PSN announced and every out-endpoint acknowledged it.
  for (size_t sw = 0; sw < net.switches_.size() && why.empty() && mode3; ++sw) {
    for (const e::GroupState* g : net.switches_[sw]->engine.groups()) {
      const e::Mode3State& m = *g->mode3;
      const bool root = !g->config->parent;
      for (const e::PipeState* p : {&m.up, &m.down}) {
        if (p == &m.down && root) continue;
        if (p->psn_start != g->next_g_ctrl ||
            p->max_psn_sent != vocab::psn_add(g->next_g_ctrl, -1)) {
          why = "switch " + std::to_string(sw) + ": a Pipe kept entries at the end (psnStart " +
                std::to_string(p->psn_start) + ", maxPsnSent " + std::to_string(p->max_psn_sent) +
                ", announced up to " + std::to_string(g->next_g_ctrl) + ")";
        }
      }
      if (m.failed) why = "switch " + std::to_string(sw) + ": a hop failed";
    }
  }
  for (auto& S : net.switches_) {
    const e::EngineCounters& c = S->engine.counters();
    res.per_switch.push_back(c);
    for (const e::GroupState* g : S->engine.groups()) {
      res.group_stats.push_back(g->stats);
      std::vector<vocab::ChildTiming> t(g->config->children.size());
      e::child_timings(*g, t);
      res.child_timing.push_back(std::move(t));
    }
    if (c.rx_accounted() != c.rx_frames && why.empty()) why = "switch counters do not add up";
    res.switches += c;
  }
  for (auto& rk : net.ranks_) {
    const s::QpCounters& c = rk->qp->counters();
    res.ranks.tx_retransmits += c.tx_retransmits;
    res.ranks.tx_acks += c.tx_acks;
    res.ranks.timeouts += c.timeouts;
    res.ranks.rx_packets += c.rx_packets;
  }
  res.results.resize(plan.size());
  for (size_t k = 0; k < plan.size(); ++k) {
    for (auto& rk : net.ranks_) res.results[k].push_back(rk->results[k]);
  }
  res.ok = why.empty();
  return res;
}

}  // namespace

RunResult run(const HarnessConfig& cfg, const std::vector<vocab::CollectiveDescriptor>& plan,
              const std::vector<std::vector<std::vector<uint8_t>>>& inputs) {
  return run_checked(cfg, plan, inputs, nullptr);
}

RunResult run(const HarnessConfig& cfg, const std::vector<vocab::CollectiveDescriptor>& plan,
              const std::vector<std::vector<std::vector<uint8_t>>>& inputs,
              const std::vector<std::vector<std::vector<uint8_t>>>& expected) {
  return run_checked(cfg, plan, inputs, &expected);
}

}  // namespace epic::harness
