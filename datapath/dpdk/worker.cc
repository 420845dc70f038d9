#include "datapath/dpdk/worker.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "datapath/wire/ecn_mark.h"

namespace epic::dpdk {

namespace e = epic::engine;
namespace sw = epic::switching;

bool MbufOps::clone(rte_mbuf* in, rte_mbuf** out) const {
  *out = rte_pktmbuf_copy(in, pool, 0, UINT32_MAX);
  return *out != nullptr;
}
void MbufOps::free(rte_mbuf* m) const { rte_pktmbuf_free(m); }
bool MbufOps::mark_ce(rte_mbuf* m) const {
  // A flooded frame is one mbuf queued on several ports: marking it would mark every copy.
  if (rte_mbuf_refcnt_read(m) != 1) return false;
  return wire::mark_ce(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_data_len(m));
}

uint32_t EgressOps::length(rte_mbuf* m) const { return m->pkt_len; }
uint8_t EgressOps::tos(rte_mbuf* m) const {
  return wire::traffic_class(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
}
bool EgressOps::mark_ce(rte_mbuf* m) const {
  if (rte_mbuf_refcnt_read(m) != 1) return false;
  return wire::mark_ce(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_data_len(m));
}
void EgressOps::free(rte_mbuf* m) const { rte_pktmbuf_free(m); }

// The engine's FrameSink: each frame is built in a fresh mbuf and queued for TX on commit, so
// an engine frame is written once, where it leaves. Fresh mbufs are cold (a pool cycles through
// more memory than the caches hold): they are taken kStash at a time and the next one's data
// is prefetched for writing while this one is built, so its lines are on their way before the
// first store. When no mbuf can be had the frame is built in a scratch buffer and dropped
// (mbuf_alloc_failed).
class Worker::EngineSink final : public e::FrameSink {
 public:
  explicit EngineSink(Worker& w) : w_(w), scratch_(std::make_unique<uint8_t[]>(kScratch)) {}
  ~EngineSink() { release(); }
  EngineSink(const EngineSink&) = delete;
  EngineSink& operator=(const EngineSink&) = delete;

  uint8_t* reserve(size_t max_len) override {
    if (next_ == have_) refill(max_len);
    m_ = next_ < have_ ? stash_[next_++] : nullptr;
    // The next frame's mbuf, assumed of the same size (the copies of a result are).
    if (next_ < have_) prefetch_for_write(stash_[next_], max_len);
    if (m_ != nullptr && rte_pktmbuf_tailroom(m_) >= max_len) return rte_pktmbuf_mtod(m_, uint8_t*);
    if (m_ != nullptr) rte_pktmbuf_free(m_);
    m_ = nullptr;
    return scratch_.get();  // an engine frame is far below kScratch
  }
  void commit(uint16_t port, size_t len) override {
    if (m_ == nullptr) {
      ++w_.t_.mbuf_alloc_failed;
      return;
    }
    if (port >= w_.s_.ports.size() || len == 0) {  // no such port; a frame that did not fit
      cancel();
      return;
    }
    m_->data_len = static_cast<uint16_t>(len);
    m_->pkt_len = static_cast<uint32_t>(len);
    ++w_.t_.engine_frames_out;
    w_.queue_tx(port, m_);
    m_ = nullptr;
  }
  void cancel() override {
    if (m_ != nullptr) rte_pktmbuf_free(m_);
    m_ = nullptr;
  }
  // Gives the stashed mbufs back to the pool (shutdown).
  void release() {
    for (; next_ < have_; ++next_) rte_pktmbuf_free(stash_[next_]);
  }

 private:
  static constexpr size_t kScratch = size_t{1} << 17;  // above any frame (16-bit payload length)
  static constexpr unsigned kStash = 16;

  void refill(size_t max_len) {
    next_ = have_ = 0;
    if (rte_pktmbuf_alloc_bulk(w_.s_.pool, stash_, kStash) == 0) {
      have_ = kStash;
    } else if ((stash_[0] = rte_pktmbuf_alloc(w_.s_.pool)) != nullptr) {
      have_ = 1;  // the pool is nearly empty: one at a time
    }
    if (have_ > 0) prefetch_for_write(stash_[0], max_len);
  }
  static void prefetch_for_write(const rte_mbuf* m, size_t len) {
    const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
    for (size_t off = 0; off < len; off += RTE_CACHE_LINE_SIZE) __builtin_prefetch(p + off, 1, 3);
  }

  Worker& w_;
  rte_mbuf* m_ = nullptr;
  rte_mbuf* stash_[kStash] = {};
  unsigned next_ = 0, have_ = 0;
  std::unique_ptr<uint8_t[]> scratch_;
};

Worker::Worker(WorkerSetup setup) : s_(std::move(setup)) {
  ns_per_tsc_ = 1e9 / static_cast<double>(rte_get_tsc_hz());
  tsc0_ = rte_get_tsc_cycles();
  engine_ = std::make_unique<e::Mode2Engine>();
  engine_out_ = std::make_unique<EngineSink>(*this);
  engine_->set_udp_source_ports(s_.udp_source_ports);
  held_.reserve(e::Mode2Engine::kDefaultMaxGroups);
  pipeline_ = std::make_unique<sw::SwitchPipeline>(static_cast<uint16_t>(s_.index),
                                                   s_.l2_table_size, s_.l2_aging_ns);
  pipeline_->set_config(&empty_config_);
  const size_t np = s_.ports.size();
  rx_.resize(s_.burst);
  rx_faulted_.resize(4 * size_t{s_.burst} + 8192);
  tx_faulted_.resize(2 * 8192 + 8192);
  engine_in_.reserve(4 * size_t{s_.burst} + 1024);
  engine_mbufs_.reserve(4 * size_t{s_.burst} + 1024);
  tx_.resize(np);
  for (auto& q : tx_) q.reserve(8192);
  egress_out_.resize(kEgressFramesPerFlush);
  MbufOps ops{s_.pool};
  for (size_t p = 0; p < np; ++p) {
    sw::FaultSpec rx = p < s_.rx_faults.size() ? s_.rx_faults[p] : sw::FaultSpec{};
    sw::FaultSpec tx = p < s_.tx_faults.size() ? s_.tx_faults[p] : sw::FaultSpec{};
    rx.seed ^= 0x9E3779B97F4A7C15ULL * (s_.index + 1);  // workers draw different streams
    tx.seed ^= 0xC2B2AE3D27D4EB4FULL * (s_.index + 1);
    rx_fault_.push_back(std::make_unique<MbufFaultStage>(rx, ops));
    tx_fault_.push_back(std::make_unique<MbufFaultStage>(tx, ops));
    egress_.push_back(std::make_unique<MbufEgress>(
        p < s_.egress.size() ? s_.egress[p] : sw::EgressSpec{}, EgressOps{}));
  }
}

Worker::~Worker() = default;

uint64_t Worker::now_ns() const {
  return static_cast<uint64_t>(static_cast<double>(rte_get_tsc_cycles() - tsc0_) * ns_per_tsc_);
}

void Worker::apply(const Snapshot& s) {
  // A group stays attached while the snapshot still gives this worker the same instance;
  // anything else is detached, then what is new is attached. The control side prepared and
  // checked every instance (Datapath::build_snapshot): nothing here allocates or throws —
  // held_ has room for every group an engine can hold.
  auto in_snapshot = [&](const e::GroupState* g) {
    return std::any_of(s.groups.begin(), s.groups.end(), [&](const GroupEntry& e) {
      return e.owner == s_.index && &e.instance->state == g;
    });
  };
  for (size_t i = engine_->groups().size(); i-- > 0;) {
    const e::GroupState* g = engine_->groups()[i];
    if (!in_snapshot(g)) engine_->detach(g->config->group_id);
  }
  std::erase_if(held_, [&](const Held& h) {
    return std::none_of(engine_->groups().begin(), engine_->groups().end(),
                        [&](const e::GroupState* g) { return g == &h.instance->state; });
  });
  for (const GroupEntry& e : s.groups) {
    if (e.owner != s_.index) continue;
    const bool have = std::any_of(engine_->groups().begin(), engine_->groups().end(),
                                  [&](const e::GroupState* g) { return g == &e.instance->state; });
    if (have) continue;
    if (engine_->attach(*e.instance) == e::AttachResult::kOk && held_.size() < held_.capacity()) {
      held_.push_back({e.slots, e.instance});
    } else {
      ++t_.contexts_refused;
    }
  }
  pipeline_->set_config(&s.pipeline);
  applied_version_ = s.version;
}

void Worker::queue_tx(size_t port, rte_mbuf* m) {
  if (MbufEgress& eg = *egress_[port]; eg.enabled()) {
    eg.enqueue(m);
    return;
  }
  auto& q = tx_[port];
  if (q.size() == q.capacity()) flush_tx(port, now_ns());
  q.push_back(m);
}

void Worker::flush_tx(size_t port, uint64_t now) {
  auto& q = tx_[port];
  PortTelemetry& pt = t_.ports[std::min(port, kMaxPorts - 1)];
  MbufFaultStage& f = *tx_fault_[port];
  size_t n = q.size();
  rte_mbuf** frames = q.data();
  if (MbufEgress& eg = *egress_[port]; eg.enabled()) {
    // What the classes and the line rate let leave now (queue_tx put nothing in q). A frame
    // the port then refuses is dropped and counted, as without classes.
    n = eg.dequeue(now, egress_out_.data(), egress_out_.size());
    frames = egress_out_.data();
  }
  if (f.spec().enabled() || f.held() > 0) {
    n = f.process(frames, n, tx_faulted_.data(), tx_faulted_.size(), now);
    n += f.release(now, tx_faulted_.data() + n, tx_faulted_.size() - n);
    frames = tx_faulted_.data();
  }
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; ++i) bytes += frames[i]->pkt_len;
  size_t sent = 0;
  for (int tries = 0; sent < n && tries < 8; ++tries) {
    sent += rte_eth_tx_burst(s_.ports[port], static_cast<uint16_t>(s_.index), frames + sent,
                             static_cast<uint16_t>(std::min<size_t>(n - sent, UINT16_MAX)));
  }
  pt.tx_frames += sent;
  for (size_t i = sent; i < n; ++i) {
    ++pt.tx_dropped;
    bytes -= frames[i]->pkt_len;
    rte_pktmbuf_free(frames[i]);
  }
  pt.tx_bytes += bytes;
  q.clear();
}

void Worker::dispatch(rte_mbuf* m, uint16_t port, uint64_t now) {
  if (m->nb_segs != 1) {
    ++t_.multi_segment_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
  const sw::Decision d = pipeline_->classify(data, m->data_len, port, now, replies_);
  switch (d.verdict) {
    case sw::Verdict::kForward:
      queue_tx(d.port, m);
      return;
    case sw::Verdict::kFlood: {
      const size_t np = s_.ports.size();
      if (np <= 1) {
        rte_pktmbuf_free(m);
        return;
      }
      rte_mbuf_refcnt_update(m, static_cast<int16_t>(np - 2));
      for (size_t p = 0; p < np; ++p) {
        if (p != port) queue_tx(p, m);
      }
      return;
    }
    case sw::Verdict::kEngine:
      engine_in_.push_back({data, m->data_len, port});
      engine_mbufs_.push_back(m);
      return;
    case sw::Verdict::kHandoff:
      m->port = port;  // the receiving worker needs the input port
      if (rte_ring_enqueue(s_.handoff[d.worker], m) != 0) {
        ++t_.handoff_dropped;
        rte_pktmbuf_free(m);
      }
      return;
    case sw::Verdict::kReplied:
    case sw::Verdict::kDrop:
      rte_pktmbuf_free(m);
      return;
  }
}

void Worker::rx_port(size_t p, uint64_t now) {
  const uint16_t n = rte_eth_rx_burst(s_.ports[p], static_cast<uint16_t>(s_.index), rx_.data(),
                                      static_cast<uint16_t>(s_.burst));
  MbufFaultStage& f = *rx_fault_[p];
  PortTelemetry& pt = t_.ports[std::min(p, kMaxPorts - 1)];
  for (uint16_t i = 0; i < n; ++i) pt.rx_bytes += rx_[i]->pkt_len;
  pt.rx_frames += n;
  rte_mbuf** frames = rx_.data();
  size_t count = n;
  if (f.spec().enabled() || f.held() > 0) {
    count = f.process(rx_.data(), n, rx_faulted_.data(), rx_faulted_.size(), now);
    count += f.release(now, rx_faulted_.data() + count, rx_faulted_.size() - count);
    frames = rx_faulted_.data();
  }
  for (size_t i = 0; i < count; ++i) dispatch(frames[i], static_cast<uint16_t>(p), now);
}

void Worker::run_engine(uint64_t now) {
  // Frames handed over by other workers for groups this worker owns.
  rte_mbuf* in[64];
  unsigned n;
  while ((n = rte_ring_dequeue_burst(s_.handoff[s_.index], reinterpret_cast<void**>(in), 64,
                                     nullptr)) > 0) {
    t_.handoff_in += n;
    for (unsigned i = 0; i < n; ++i) {
      engine_in_.push_back({rte_pktmbuf_mtod(in[i], const uint8_t*), in[i]->data_len, in[i]->port});
      engine_mbufs_.push_back(in[i]);
    }
    if (n < 64) break;
  }
  if (!engine_in_.empty()) {
    engine_->process(engine_in_.data(), engine_in_.size(), *engine_out_, now);
    for (rte_mbuf* m : engine_mbufs_) rte_pktmbuf_free(m);
    engine_in_.clear();
    engine_mbufs_.clear();
  }
  if (engine_->poll_wanted()) engine_->poll(now, *engine_out_);  // Mode-III's timers and Pipes
}

void Worker::publish(uint64_t now) {
  t_.now_ns = now;
  t_.snapshot_version = applied_version_;
  t_.pipeline = pipeline_->counters();
  t_.engine = engine_->counters();
  t_.l2 = pipeline_->l2().counters();
  t_.l2_entries = pipeline_->l2().size(now);
  for (size_t p = 0; p < s_.ports.size() && p < kMaxPorts; ++p) {
    t_.ports[p].rx_faults = rx_fault_[p]->counters();
    t_.ports[p].tx_faults = tx_fault_[p]->counters();
    t_.ports[p].edge_binding_drops = engine_->binding_drops()[std::min(p, e::kMaxIngressPorts - 1)];
    const MbufEgress& eg = *egress_[p];
    t_.ports[p].nclasses = static_cast<uint32_t>(eg.classes());
    for (size_t c = 0; c < eg.classes(); ++c) t_.ports[p].classes[c] = eg.counters(c);
  }
  const auto& groups = engine_->groups();
  t_.ngroups = static_cast<uint32_t>(std::min(groups.size(), kMaxGroupsPerWorker));
  for (size_t i = 0; i < t_.ngroups; ++i) {
    const e::GroupState& g = *groups[i];
    GroupTelemetry& gt = t_.groups[i];
    gt.group_id = g.config->group_id;
    gt.children = static_cast<uint16_t>(g.config->children.size());
    gt.stats = g.stats;
    gt.health = e::group_health(g);
    e::child_timings(g, gt.child_timing);
    auto it = std::find_if(progress_.begin(), progress_.end(),
                           [&](const Progress& p) { return p.group_id == gt.group_id; });
    if (it == progress_.end()) {
      progress_.push_back({gt.group_id, g.stats.progress(), now});
      it = progress_.end() - 1;
    } else if (it->value != g.stats.progress()) {
      it->value = g.stats.progress();
      it->since_ns = now;
    }
    gt.last_progress_ns = it->since_ns;
  }
  s_.telemetry->publish(t_);
}

int Worker::run() {
  // An idle worker sleeps idle_sleep_us between polls, and the next frame waits for it: the
  // kernel's default timer slack (50 us) would add up to 50 us to every such sleep.
  if (s_.idle_sleep_us > 0) ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  s_.snapshots->online(s_.index);
  uint32_t idle = 0;
  while (!s_.stop->load(std::memory_order_relaxed)) {
    const Snapshot* snap = s_.snapshots->current();
    if (snap != nullptr && snap->version != applied_version_) apply(*snap);
    const uint64_t now = now_ns();
    const uint64_t before = pipeline_->counters().frames + t_.handoff_in;
    replies_.clear();
    for (size_t p = 0; p < s_.ports.size(); ++p) rx_port(p, now);
    run_engine(now);
    for (size_t i = 0; i < replies_.size(); ++i) {
      const auto& f = replies_.frame(i);
      rte_mbuf* m = rte_pktmbuf_alloc(s_.pool);
      if (m == nullptr) {
        ++t_.mbuf_alloc_failed;
        continue;
      }
      std::memcpy(rte_pktmbuf_append(m, f.length), replies_.data(i), f.length);
      queue_tx(f.port, m);
    }
    uint64_t queued = 0;
    for (size_t p = 0; p < s_.ports.size(); ++p) {
      if (!tx_[p].empty() || tx_fault_[p]->held() > 0 || egress_[p]->queued_frames() > 0)
        flush_tx(p, now);
      queued += egress_[p]->queued_frames();
    }
    s_.snapshots->quiescent(s_.index);
    ++t_.loops;
    if (pipeline_->counters().frames + t_.handoff_in != before || queued > 0) {
      ++t_.busy_loops;
      idle = 0;
    } else if (s_.idle_sleep_us > 0 && ++idle > 64) {
      ::usleep(s_.idle_sleep_us);
    }
    if (now >= next_publish_) {
      publish(now);
      next_publish_ = now + s_.publish_period_ns;
    }
  }
  // Shutdown: whatever the fault stages hold, and what is queued or stashed, is freed.
  engine_out_->release();
  for (size_t p = 0; p < s_.ports.size(); ++p) {
    rx_fault_[p]->drain();
    tx_fault_[p]->drain();
    egress_[p]->drain();
    for (rte_mbuf* m : tx_[p]) rte_pktmbuf_free(m);
    tx_[p].clear();
  }
  publish(now_ns());
  s_.snapshots->offline(s_.index);
  return 0;
}

}  // namespace epic::dpdk
