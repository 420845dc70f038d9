#include "daemon/metrics.h"

#include <netdb.h>
#include <prometheus/exposer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <span>
#include <stdexcept>
#include <thread>

#include "daemon/group_status.h"
#include "proto/vocab/straggler.h"

namespace epic::incd {

namespace p = prometheus;

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Families {
 public:
  void add(const std::string& name, const std::string& help, p::MetricType type,
           const Labels& labels, double value) {
    auto it = index_.find(name);
    if (it == index_.end()) {
      it = index_.emplace(name, families_.size()).first;
      families_.push_back({name, help, type, {}});
    }
    p::ClientMetric m;
    for (const auto& [k, v] : labels) m.label.push_back({k, v});
    if (type == p::MetricType::Counter) {
      m.counter.value = value;
    } else {
      m.gauge.value = value;
    }
    families_[it->second].metric.push_back(std::move(m));
  }
  void counter(const std::string& name, const std::string& help, const Labels& l, double v) {
    add(name, help, p::MetricType::Counter, l, v);
  }
  void gauge(const std::string& name, const std::string& help, const Labels& l, double v) {
    add(name, help, p::MetricType::Gauge, l, v);
  }
  std::vector<p::MetricFamily> take() { return std::move(families_); }

 private:
  std::map<std::string, size_t> index_;
  std::vector<p::MetricFamily> families_;
};

void fault_metrics(Families& f, const Labels& base, const char* dir,
                   const switching::FaultCounters& c) {
  const std::pair<const char*, uint64_t> rows[] = {
      {"dropped", c.dropped},     {"duplicated", c.duplicated}, {"reordered", c.reordered},
      {"ce_marked", c.ce_marked}, {"delayed", c.delayed},       {"overflow", c.overflow}};
  for (const auto& [name, v] : rows) {
    Labels l = base;
    l.push_back({"direction", dir});
    l.push_back({"fault", name});
    f.counter(
        "incd_port_faults_injected_total",
        "Frames the fault-injection stage dropped, duplicated, marked CE, reordered or delayed", l,
        static_cast<double>(v));
  }
}

void engine_metrics(Families& f, const Labels& w, const engine::EngineCounters& c) {
  // One series per counter of EPIC_ENGINE_COUNTERS (datapath/engine/counters.h), by kind.
  const auto series = [&](engine::CounterKind kind, const char* label, uint64_t v) {
    Labels l = w;
    switch (kind) {
      case engine::CounterKind::kDisposition:
        l.push_back({"disposition", label});
        f.counter("incd_engine_frames_total", "Frames the Mode-II engine took, by disposition", l,
                  static_cast<double>(v));
        break;
      case engine::CounterKind::kDrop:
        l.push_back({"reason", label});
        f.counter("incd_engine_drops_total",
                  "Frames to an INC address the engine dropped, by reason (parse includes bad "
                  "ICRC)",
                  l, static_cast<double>(v));
        break;
      case engine::CounterKind::kEvent:
        l.push_back({"event", label});
        f.counter("incd_engine_events_total", "Mode-II engine events", l, static_cast<double>(v));
        break;
      case engine::CounterKind::kTotal:
        break;  // rx_frames: the sum of the dispositions and drops
    }
  };
#define EPIC_SERIES(field, kind, label, help) series(engine::CounterKind::kind, label, c.field);
  EPIC_ENGINE_COUNTERS(EPIC_SERIES)
#undef EPIC_SERIES
}

void switch_metrics(Families& f, const Labels& w, const switching::PipelineCounters& c) {
  const std::pair<const char*, uint64_t> disp[] = {
      {"forwarded", c.forwarded},     {"flooded", c.flooded},
      {"to_engine", c.to_engine},     {"handed_off", c.handed_off},
      {"arp_replies", c.arp_replies}, {"icmp_replies", c.icmp_replies},
      {"non_ip", c.non_ip},           {"transit_roce", c.transit_roce}};
  for (const auto& [name, v] : disp) {
    Labels l = w;
    l.push_back({"disposition", name});
    f.counter("incd_switch_frames_total", "Frames the switch pipeline classified, by disposition",
              l, static_cast<double>(v));
  }
  for (size_t r = 0; r < switching::kDropReasonCount; ++r) {
    Labels l = w;
    l.push_back(
        {"reason", std::string(switching::to_string(static_cast<switching::DropReason>(r)))});
    f.counter("incd_switch_drops_total", "Frames the switch pipeline dropped, by reason", l,
              static_cast<double>(c.drops[r]));
  }
  Labels bad = w;
  bad.push_back({"kind", "bad_icrc"});
  f.counter("incd_switch_transit_roce_invalid_total",
            "Transit RoCEv2 frames (between hosts) that failed the ICRC or did not parse", bad,
            static_cast<double>(c.transit_bad_icrc));
  Labels mal = w;
  mal.push_back({"kind", "malformed"});
  f.counter("incd_switch_transit_roce_invalid_total",
            "Transit RoCEv2 frames (between hosts) that failed the ICRC or did not parse", mal,
            static_cast<double>(c.transit_malformed));
}

}  // namespace

DatapathCollector::DatapathCollector(const dpdk::Datapath& dp, uint64_t stall_after_ns)
    : dp_(dp), stall_after_ns_(stall_after_ns), groups_(dp.config().groups) {}

void DatapathCollector::set_groups(std::vector<engine::GroupConfig> groups) {
  std::lock_guard<std::mutex> lock(mu_);
  groups_ = std::move(groups);
}

void DatapathCollector::set_class_names(std::vector<std::string> names) {
  std::lock_guard<std::mutex> lock(mu_);
  class_names_ = std::move(names);
}

void DatapathCollector::close() {
  std::lock_guard<std::mutex> lock(scrape_mu_);
  closed_ = true;
}

std::vector<p::MetricFamily> DatapathCollector::Collect() const {
  std::lock_guard<std::mutex> scrape(scrape_mu_);
  if (closed_) return {};
  Families f;
  std::vector<engine::GroupConfig> groups;
  std::vector<std::string> class_names;
  {
    std::lock_guard<std::mutex> lock(mu_);
    groups = groups_;
    class_names = class_names_;
  }
  const auto& ports = dp_.ports();
  std::vector<dpdk::PortTelemetry> port_sum(ports.size());
  auto t = std::make_unique<dpdk::WorkerTelemetry>();  // large: keep it off the stack
  for (unsigned w = 0; w < dp_.workers(); ++w) {
    if (!dp_.telemetry(w, *t)) continue;
    const Labels wl{{"worker", std::to_string(w)}};
    f.counter("incd_worker_loops_total", "Poll-loop iterations", wl, static_cast<double>(t->loops));
    f.counter("incd_worker_busy_loops_total", "Poll-loop iterations that found frames", wl,
              static_cast<double>(t->busy_loops));
    f.counter("incd_worker_handoff_in_total", "Frames handed over by other workers", wl,
              static_cast<double>(t->handoff_in));
    f.counter("incd_worker_handoff_dropped_total", "Frames lost because a hand-off ring was full",
              wl, static_cast<double>(t->handoff_dropped));
    f.counter("incd_worker_mbuf_alloc_failed_total", "Frames not sent for want of an mbuf", wl,
              static_cast<double>(t->mbuf_alloc_failed));
    f.counter("incd_worker_multi_segment_dropped_total", "Chained mbufs dropped (unsupported)", wl,
              static_cast<double>(t->multi_segment_dropped));
    f.counter("incd_worker_contexts_refused_total",
              "Published group contexts the worker's engine would not attach (should stay 0)", wl,
              static_cast<double>(t->contexts_refused));
    f.gauge("incd_worker_snapshot_version", "Configuration snapshot the worker runs", wl,
            static_cast<double>(t->snapshot_version));
    f.gauge("incd_l2_entries", "Live MAC addresses in the worker's L2 table", wl,
            static_cast<double>(t->l2_entries));
    const std::pair<const char*, uint64_t> l2[] = {{"learned", t->l2.learned},
                                                   {"moved", t->l2.moved},
                                                   {"aged_out", t->l2.aged_out},
                                                   {"table_full", t->l2.table_full}};
    for (const auto& [name, v] : l2) {
      Labels l = wl;
      l.push_back({"event", name});
      f.counter("incd_l2_events_total", "MAC learning events", l, static_cast<double>(v));
    }
    switch_metrics(f, wl, t->pipeline);
    engine_metrics(f, wl, t->engine);
    for (size_t p = 0; p < ports.size() && p < dpdk::kMaxPorts; ++p) {
      dpdk::PortTelemetry& s = port_sum[p];
      const dpdk::PortTelemetry& x = t->ports[p];
      s.rx_frames += x.rx_frames;
      s.rx_bytes += x.rx_bytes;
      s.tx_frames += x.tx_frames;
      s.tx_bytes += x.tx_bytes;
      s.tx_dropped += x.tx_dropped;
      s.edge_binding_drops += x.edge_binding_drops;
      s.nclasses = std::max(s.nclasses, x.nclasses);
      for (size_t c = 0; c < x.nclasses && c < x.classes.size(); ++c) {
        switching::EgressClassCounters& a = s.classes[c];
        const switching::EgressClassCounters& b = x.classes[c];
        a.sent += b.sent;
        a.sent_bytes += b.sent_bytes;
        a.dropped += b.dropped;
        a.ce_marked += b.ce_marked;
        a.queue_bytes += b.queue_bytes;
        a.peak_queue_bytes = std::max(a.peak_queue_bytes, b.peak_queue_bytes);
      }
      for (auto [a, b] : {std::pair{&s.rx_faults, &x.rx_faults}, {&s.tx_faults, &x.tx_faults}}) {
        a->dropped += b->dropped;
        a->duplicated += b->duplicated;
        a->reordered += b->reordered;
        a->ce_marked += b->ce_marked;
        a->delayed += b->delayed;
        a->overflow += b->overflow;
      }
    }
    for (uint32_t i = 0; i < t->ngroups; ++i) {
      const dpdk::GroupTelemetry& g = t->groups[i];
      const engine::GroupConfig* cfg = nullptr;
      for (const auto& c : groups) {
        if (c.group_id == g.group_id) cfg = &c;
      }
      const GroupStatus st = group_status(g, w, t->now_ns, stall_after_ns_, cfg);
      const Labels gl{{"group", std::to_string(g.group_id)}};
#define EPIC_GROUP_SERIES(name, help) \
  f.counter("incd_group_" #name "_total", help, gl, static_cast<double>(g.stats.name));
      EPIC_GROUP_COUNTERS(EPIC_GROUP_SERIES)
#undef EPIC_GROUP_SERIES
      if (cfg) {
        f.gauge("incd_group_mode", "The group's EPIC mode: 2 (Mode-II) or 3 (Mode-III)", gl,
                static_cast<double>(static_cast<unsigned>(cfg->mode)));
      }
      f.gauge("incd_group_busy_slots", "Slots aggregating or waiting for the parent", gl,
              g.health.busy_slots);
      f.gauge("incd_group_oldest_busy_psn", "Group PSN of the oldest busy slot", gl,
              g.health.oldest_psn);
      f.gauge("incd_group_waiting_for_parent", "1 if the oldest busy slot waits for the parent", gl,
              g.health.waiting_for_parent ? 1 : 0);
      f.gauge("incd_group_seconds_since_progress", "Seconds since the group last made progress", gl,
              st.seconds_since_progress);
      f.gauge("incd_group_stalled",
              "1 if the group has busy slots and made no progress for metrics.stall_after_ms", gl,
              st.stalled ? 1 : 0);
      const std::span<const vocab::ChildTiming> timing(
          g.child_timing.data(), std::min<size_t>(g.children, g.child_timing.size()));
      for (const vocab::ChildTiming& c : timing) {
        Labels l = gl;
        l.push_back({"child", std::to_string(c.child)});
        l.push_back({"who", vocab::child_name(c)});
        f.counter("incd_group_child_last_total",
                  "Slots whose aggregation this child's contribution completed (it arrived last)",
                  l, static_cast<double>(c.last));
        for (const auto& [q, v] : {std::pair{"0.5", c.lag_p50_ns}, {"0.99", c.lag_p99_ns}}) {
          Labels lq = l;
          lq.push_back({"quantile", q});
          f.gauge("incd_group_child_lag_seconds",
                  "Time from a slot's first contribution to this child's (recent contributions; "
                  "upper bound of a log2 bucket)",
                  lq, static_cast<double>(v) / 1e9);
        }
      }
      if (const vocab::SlowestChild slow = vocab::slowest_child(timing); slow.child >= 0) {
        Labels l = gl;
        l.push_back({"child", std::to_string(slow.child)});
        l.push_back({"who", vocab::child_name(timing[static_cast<size_t>(slow.child)])});
        f.gauge("incd_group_slowest_child_share",
                "Share of the timed slots that the slowest child completed (pinned near 1: a "
                "straggler or a bad path; near 1/fan-in: noise). Local to this switch",
                l, slow.share);
      }
      for (size_t k = 0; k < st.missing_children.size(); ++k) {
        Labels l = gl;
        l.push_back({"child", std::to_string(st.missing_children[k])});
        l.push_back({"who", st.missing[k]});
        f.gauge("incd_group_missing_contribution",
                "1 for each child the oldest busy slot still waits for", l, 1);
      }
    }
  }
  for (size_t p = 0; p < ports.size(); ++p) {
    const Labels pl{{"port", ports[p].name}};
    const dpdk::PortTelemetry& s = port_sum[p];
    f.counter("incd_port_rx_frames_total", "Frames received", pl, static_cast<double>(s.rx_frames));
    f.counter("incd_port_rx_bytes_total", "Bytes received", pl, static_cast<double>(s.rx_bytes));
    f.counter("incd_port_tx_frames_total", "Frames sent", pl, static_cast<double>(s.tx_frames));
    f.counter("incd_port_tx_bytes_total", "Bytes sent", pl, static_cast<double>(s.tx_bytes));
    f.counter("incd_port_tx_dropped_total", "Frames the port did not accept after retries", pl,
              static_cast<double>(s.tx_dropped));
    fault_metrics(f, pl, "rx", s.rx_faults);
    fault_metrics(f, pl, "tx", s.tx_faults);
    f.counter("incd_port_edge_binding_drops_total",
              "Frames to a group endpoint that came in on this port but not from the edge's "
              "member (port, MAC, IPv4 or UDP source port; reasons: incd_engine_drops_total)",
              pl, static_cast<double>(s.edge_binding_drops));
    for (size_t c = 0; c < s.nclasses && c < s.classes.size(); ++c) {
      const switching::EgressClassCounters& k = s.classes[c];
      Labels l = pl;
      l.push_back({"class", c < class_names.size() ? class_names[c] : std::to_string(c)});
      f.counter("incd_port_class_tx_frames_total", "Frames the traffic class sent on the port", l,
                static_cast<double>(k.sent));
      f.counter("incd_port_class_tx_bytes_total", "Bytes the traffic class sent on the port", l,
                static_cast<double>(k.sent_bytes));
      f.counter("incd_port_class_dropped_total",
                "Frames dropped because the class queue was full (queue_kb)", l,
                static_cast<double>(k.dropped));
      f.counter("incd_port_class_ce_marked_total",
                "ECN-capable frames marked CE on arrival at a class queue past ecn_threshold_kb", l,
                static_cast<double>(k.ce_marked));
      f.gauge("incd_port_class_queue_bytes", "Bytes waiting in the class queue (all workers)", l,
              static_cast<double>(k.queue_bytes));
      f.gauge("incd_port_class_queue_peak_bytes",
              "The most one worker's class queue held since incd started", l,
              static_cast<double>(k.peak_queue_bytes));
    }
  }
  if (const agent::AgentCounters* a = agent_.load()) {
    f.gauge("incd_agent_connected", "1 while the agent is registered with inc-manager", {},
            a->connected.load(std::memory_order_relaxed));
    f.counter("incd_agent_actions_total", "inc-manager actions the agent applied or refused",
              {{"result", "applied"}}, static_cast<double>(a->actions_applied.load()));
    f.counter("incd_agent_actions_total", "inc-manager actions the agent applied or refused",
              {{"result", "failed"}}, static_cast<double>(a->actions_failed.load()));
    f.counter("incd_agent_reconnects_total", "Connection attempts to inc-manager after the first",
              {}, static_cast<double>(a->reconnects.load()));
    f.counter("incd_agent_registrations_total", "Registrations inc-manager accepted", {},
              static_cast<double>(a->registrations.load()));
    f.counter("incd_agent_heartbeats_total", "Heartbeats sent to inc-manager", {},
              static_cast<double>(a->heartbeats_sent.load()));
  }
  return f.take();
}

MetricsServer::MetricsServer(const std::string& listen,
                             std::shared_ptr<DatapathCollector> collector)
    : listen_(listen), collector_(std::move(collector)) {
  try {
    exposer_ = std::make_unique<p::Exposer>(listen, 1);
  } catch (const std::exception& e) {
    throw std::runtime_error("metrics endpoint " + listen + ": " + e.what());
  }
  exposer_->RegisterCollectable(collector_);
}

namespace {

// One TCP connection attempt to `listen` ("host:port"; a wildcard host means this host),
// closed at once. Errors do not matter: it only wakes a poll.
void poke(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return;
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return;
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    (void)connect(fd, res->ai_addr, res->ai_addrlen);
    close(fd);
  }
  freeaddrinfo(res);
}

}  // namespace

void MetricsServer::stop() {
  if (!exposer_) return;
  std::atomic<bool> done{false};
  std::thread stopper([this, &done] {
    exposer_.reset();
    done.store(true);
  });
  // Bounded: 200 pokes, 10 ms apart; the server's own 2 s poll ends the wait in any case.
  for (int i = 0; i < 200 && !done.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!done.load()) poke(listen_);
  }
  stopper.join();
}

MetricsServer::~MetricsServer() { stop(); }

}  // namespace epic::incd
