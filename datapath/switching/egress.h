// Egress: traffic classes at one port's transmit side (docs/traffic-classes.md), Slingshot's
// model. Every frame leaving the port is classified by the DSCP of its IPv4 TOS byte (frames
// without IPv4: DSCP 0) into one of up to kMaxClasses classes, each a FIFO with its own byte
// bound. The port is served:
//   - by strict priority between levels (level 0 first): a level is served only while every
//     level above it has nothing it may send;
//   - by deficit round robin inside a level, in proportion to the classes' weights (the
//     guaranteed share of what the levels above leave);
//   - a class with a maximum rate is held back by its own token bucket, the port by the line
//     rate configured for it (a token bucket too: the queue that builds behind it is the
//     switch's transmit queue);
//   - a frame arriving at a class whose queue already holds `ecn_threshold_bytes` or more is
//     marked CE if it is ECN-capable (Ops::mark_ce: false for Not-ECT frames); a frame that
//     would overflow `queue_bytes` is dropped and counted.
//
// Generic over an opaque packet handle so that the DPDK layer runs it on rte_mbuf* and tests on
// ints. `Ops` provides
//   uint32_t length(Packet);     // bytes on the wire (the frame)
//   uint8_t tos(Packet);         // the IPv4 TOS byte; 0 for a frame that is not IPv4
//   bool mark_ce(Packet);        // marks CE on an ECN-capable frame; false if it is not one
//   void free(Packet);
// as instance members; Egress keeps a copy of `ops`.
//
// Every loop is bounded: dequeue() returns at most `cap` frames, and a DRR pick visits each
// class of a level at most kMaxRounds times. No allocation after construction. Threading: one
// instance per port per worker, not thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace epic::switching {

inline constexpr size_t kMaxClasses = 8;
inline constexpr size_t kDscpValues = 64;
inline constexpr uint32_t kMaxPriorityLevels = 8;
// DRR: a class's quantum is weight x kQuantumBytes; a 9,216-byte jumbo frame needs at most
// this many rounds at weight 1.
inline constexpr uint32_t kQuantumBytes = 1536;
inline constexpr uint32_t kMaxRounds = 8;
// Frames one class queue holds at most besides its byte bound: one per 512 bytes of it (an
// average frame of half a KiB), 64..16,384 (egress_frames). The DPDK layer reserves that many
// mbufs per class and port.
inline constexpr size_t kMinClassQueueFrames = 64, kMaxClassQueueFrames = 16384;

struct ClassSpec {
  uint32_t priority = 0;             // strict-priority level, 0 served first, < kMaxPriorityLevels
  uint32_t weight = 1;               // share inside its level, 1..1000
  uint64_t max_rate_bps = 0;         // 0: no cap
  uint64_t queue_bytes = 512 << 10;  // tail drop beyond
  uint64_t ecn_threshold_bytes = 0;  // 0: never marks
};

// The frame bound of a class queue: a power of two.
inline size_t egress_frames(const ClassSpec& c) {
  const uint64_t want =
      std::clamp<uint64_t>(c.queue_bytes / 512, kMinClassQueueFrames, kMaxClassQueueFrames);
  return std::bit_ceil(static_cast<size_t>(want));
}

struct EgressSpec {
  std::vector<ClassSpec> classes;                    // empty: no classes (see enabled())
  std::array<uint8_t, kDscpValues> class_of_dscp{};  // index into classes
  uint64_t port_rate_bps = 0;                        // 0: as fast as the port takes frames
  // Off: frames go straight to the port, as without this stage (the default).
  bool enabled() const { return !classes.empty(); }
};

struct EgressClassCounters {
  uint64_t enqueued = 0, enqueued_bytes = 0;
  uint64_t sent = 0, sent_bytes = 0;  // handed to the port
  uint64_t dropped = 0;               // the class queue was full (tail drop)
  uint64_t ce_marked = 0;             // marked CE at enqueue (queue past ecn_threshold_bytes)
  uint64_t queue_bytes = 0;           // now
  uint64_t queue_frames = 0;          // now
  uint64_t peak_queue_bytes = 0;      // the most it held
};

template <typename Packet, typename Ops>
class Egress {
 public:
  Egress(const EgressSpec& spec, Ops ops) : spec_(spec), ops_(ops) {
    const size_t n = std::min(spec_.classes.size(), kMaxClasses);
    spec_.classes.resize(n);
    for (auto& c : spec_.class_of_dscp) c = c < n ? c : 0;
    queues_.resize(n);
    for (size_t c = 0; c < n; ++c) queues_[c].ring.resize(egress_frames(spec_.classes[c]));
    for (size_t c = 0; c < n; ++c) {
      const uint32_t level = std::min(spec_.classes[c].priority, kMaxPriorityLevels - 1);
      levels_[level].members[levels_[level].n++] = static_cast<uint8_t>(c);
      queues_[c].tokens = bucket_cap(spec_.classes[c].max_rate_bps);
    }
    port_tokens_ = bucket_cap(spec_.port_rate_bps);
  }
  ~Egress() { drain(); }
  Egress(const Egress&) = delete;
  Egress& operator=(const Egress&) = delete;

  const EgressSpec& spec() const { return spec_; }
  bool enabled() const { return spec_.enabled(); }
  size_t classes() const { return queues_.size(); }
  const EgressClassCounters& counters(size_t c) const { return queues_[c].counters; }
  uint64_t queued_frames() const { return queued_; }
  size_t class_of(Packet p) const { return spec_.class_of_dscp[ops_.tos(p) >> 2]; }

  // Classifies `p` and queues it (or drops it, counted). Takes ownership.
  void enqueue(Packet p) {
    Queue& q = queues_[class_of(p)];
    const ClassSpec& cs = spec_.classes[&q - queues_.data()];
    const uint32_t len = ops_.length(p);
    EgressClassCounters& k = q.counters;
    if (q.count == q.ring.size() || k.queue_bytes + len > cs.queue_bytes) {
      ++k.dropped;
      ops_.free(p);
      return;
    }
    if (cs.ecn_threshold_bytes != 0 && k.queue_bytes >= cs.ecn_threshold_bytes && ops_.mark_ce(p)) {
      ++k.ce_marked;
    }
    q.ring[(q.head + q.count) & (q.ring.size() - 1)] = p;
    ++q.count;
    ++queued_;
    ++k.enqueued;
    k.enqueued_bytes += len;
    k.queue_bytes += len;
    k.queue_frames = q.count;
    k.peak_queue_bytes = std::max(k.peak_queue_bytes, k.queue_bytes);
  }

  // Up to `cap` frames the port may send now, in service order; the caller owns them.
  size_t dequeue(uint64_t now_ns, Packet* out, size_t cap) {
    refill(now_ns);
    size_t n = 0;
    while (n < cap && queued_ > 0 && (spec_.port_rate_bps == 0 || port_tokens_ > 0)) {
      const int c = pick();
      if (c < 0) break;
      Queue& q = queues_[static_cast<size_t>(c)];
      const Packet p = q.ring[q.head];
      q.head = (q.head + 1) & (q.ring.size() - 1);
      --q.count;
      --queued_;
      const uint32_t len = ops_.length(p);
      q.deficit -= len;
      if (q.count == 0) q.deficit = 0;  // DRR: an empty class keeps no credit
      if (spec_.classes[static_cast<size_t>(c)].max_rate_bps != 0) q.tokens -= len * kUnitsPerByte;
      if (spec_.port_rate_bps != 0) port_tokens_ -= len * kUnitsPerByte;
      EgressClassCounters& k = q.counters;
      ++k.sent;
      k.sent_bytes += len;
      k.queue_bytes -= len;
      k.queue_frames = q.count;
      out[n++] = p;
    }
    return n;
  }

  // Frees every queued frame (shutdown).
  void drain() {
    for (Queue& q : queues_) {
      for (; q.count > 0; --q.count) {
        ops_.free(q.ring[q.head]);
        q.head = (q.head + 1) & (q.ring.size() - 1);
      }
      q.counters.queue_bytes = 0;
      q.counters.queue_frames = 0;
    }
    queued_ = 0;
  }

 private:
  struct Queue {
    std::vector<Packet> ring;  // egress_frames() of its class: a power of two
    size_t head = 0, count = 0;
    int64_t deficit = 0;  // DRR credit, bytes
    int64_t tokens = 0;   // max-rate bucket (kUnitsPerByte; may go one frame negative)
    EgressClassCounters counters;
  };
  struct Level {
    std::array<uint8_t, kMaxClasses> members{};
    size_t n = 0;
    size_t next = 0;  // DRR position
  };

  // Token buckets count in units of 1e-9 bit, so that a rate in bit/s times a time in ns adds
  // exactly (no byte is lost to rounding at low rates over short loops). A bucket holds 100 us
  // at its rate, and never less than two jumbo frames.
  static constexpr int64_t kUnitsPerByte = 8'000'000'000;
  static int64_t bucket_cap(uint64_t rate_bps) {
    if (rate_bps == 0) return 0;
    const int64_t bytes = std::max<int64_t>(2 * 9216, static_cast<int64_t>(rate_bps / 8 / 10'000));
    return bytes * kUnitsPerByte;  // < 2^63 for rates below 9 Tb/s (limited by the config)
  }
  static void add_tokens(int64_t& tokens, uint64_t rate_bps, uint64_t dt_ns) {
    if (rate_bps == 0) return;
    const int64_t cap = bucket_cap(rate_bps);
    // room < 2^63; rate x dt is computed only when it is at most room, so it cannot overflow.
    const auto room = static_cast<uint64_t>(cap - std::min(tokens, cap));
    const uint64_t add = dt_ns > room / rate_bps ? room : rate_bps * dt_ns;
    tokens += static_cast<int64_t>(add);
  }
  void refill(uint64_t now_ns) {
    if (now_ns > last_ns_) {
      const uint64_t dt = now_ns - last_ns_;
      add_tokens(port_tokens_, spec_.port_rate_bps, dt);
      for (size_t c = 0; c < queues_.size(); ++c) {
        add_tokens(queues_[c].tokens, spec_.classes[c].max_rate_bps, dt);
      }
    }
    last_ns_ = now_ns;
  }
  bool eligible(size_t c) const {
    const Queue& q = queues_[c];
    return q.count > 0 && (spec_.classes[c].max_rate_bps == 0 || q.tokens > 0);
  }
  // The class to serve next: the first level with an eligible class, DRR inside it; -1: none.
  int pick() {
    for (Level& l : levels_) {
      bool any = false;
      for (size_t i = 0; i < l.n; ++i) any |= eligible(l.members[i]);
      if (!any) continue;
      for (uint32_t visit = 0; visit < l.n * (kMaxRounds + 1); ++visit) {
        const size_t c = l.members[l.next];
        Queue& q = queues_[c];
        if (eligible(c)) {
          if (q.deficit >= static_cast<int64_t>(ops_.length(q.ring[q.head])))
            return static_cast<int>(c);
          q.deficit += static_cast<int64_t>(spec_.classes[c].weight) * kQuantumBytes;
        }
        l.next = (l.next + 1) % l.n;
      }
      // Not reached with weight >= 1 and frames <= kMaxRounds x kQuantumBytes; serve anyway.
      for (size_t i = 0; i < l.n; ++i) {
        if (eligible(l.members[i])) return l.members[i];
      }
    }
    return -1;
  }

  EgressSpec spec_;
  Ops ops_;
  std::vector<Queue> queues_;
  std::array<Level, kMaxPriorityLevels> levels_{};
  uint64_t queued_ = 0;
  int64_t port_tokens_ = 0;  // the port's line-rate bucket (kUnitsPerByte)
  uint64_t last_ns_ = 0;
};

}  // namespace epic::switching
