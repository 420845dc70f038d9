// FaultStage: seeded fault injection (drop, duplicate, reorder, delay) as a
// pipeline stage, standing in for netem, which the lab kernel lacks. It sits
// between RX and the pipeline (or before TX) and is driven in bursts.
//
// Generic over an opaque packet handle so that the DPDK layer runs it on
// rte_mbuf* and tests and fuzzers on ints. `Ops` provides
//   bool clone(Packet in, Packet* out);  // false: could not copy (no duplicate)
//   void free(Packet p);
// as static or instance members; FaultStage keeps a copy of `ops`.
//
// Each packet, independently: with probability `drop` it is freed; otherwise,
// with probability `duplicate`, a clone leaves beside it (same hold time);
// with probability `mark_ce` an ECN-capable one is marked CE (Ops::mark_ce, optional);
// with probability `reorder` it is held an extra uniform [1 µs, 50 µs] so that
// later packets overtake it; every surviving packet is held `delay_ns`.
// Held packets leave through release() in release-time order (ties: arrival
// order). Same seed + same inputs + same times -> same outputs.
//
// No packet is ever lost silently: a full hold queue passes the packet at
// once (`overflow`); a full `out` holds the packet until the next release()
// (`deferred`); only when both are full is it freed and counted (`lost`).
// The destructor drains (frees) whatever is still held.
//
// Threading: not thread-safe; one instance per worker queue. No allocation
// after construction (HoldQueue: a FIFO ring for the constant delay plus a
// binary min-heap for reorder holds, both sized at construction).
// Cost (int handles, gcc 12 -O2, bursts of 32, shared 2-core dev VM): disabled
// 0.1 ns/packet; 1% drop + 1% duplicate + 1% reorder ~4.5 ns/packet; delay
// 100 us at 32 packets/us (3200 held) ~5 ns/packet including release().
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace epic::switching {

struct FaultSpec {
  double drop = 0, duplicate = 0, reorder = 0;  // probabilities in [0, 1]
  // Probability in [0, 1] that a surviving ECN-capable packet is marked CE (as a congested
  // queue's AQM would), when Ops can mark (Ops::mark_ce); others pass unmarked.
  double mark_ce = 0;
  uint64_t delay_ns = 0;
  uint64_t seed = 1;
  bool enabled() const {
    return drop > 0 || duplicate > 0 || reorder > 0 || mark_ce > 0 || delay_ns > 0;
  }
};

struct FaultCounters {
  uint64_t passed = 0;        // input packets not dropped (they leave now or later)
  uint64_t dropped = 0;       // input packets freed by the drop fault
  uint64_t duplicated = 0;    // clones emitted
  uint64_t ce_marked = 0;     // packets marked CE (ECN-capable ones the draw chose)
  uint64_t reordered = 0;     // packets (clones included) held for a reorder delay
  uint64_t delayed = 0;       // packets (clones included) held for delay_ns
  uint64_t overflow = 0;      // hold queue full: passed at once instead of held
  uint64_t clone_failed = 0;  // duplicate chosen but Ops::clone failed
  uint64_t deferred = 0;      // `out` full: held until release() although due now
  uint64_t lost = 0;          // `out` and hold queue both full: freed
  uint64_t drained = 0;       // freed by drain() (or the destructor)
};

// splitmix64 (Steele, Lea, Flood 2014): one add and two multiplies per draw.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

namespace detail {

// Packets waiting for their release time. Packets held for the constant delay
// arrive in release-time order and go to a ring (O(1)); the rest (reorder
// holds, out-full deferrals, a clock that went backwards) go to a min-heap.
// pop_due() merges the two by (release time, arrival order).
template <class Packet>
class HoldQueue {
 public:
  explicit HoldQueue(size_t capacity)
      : capacity_(capacity),
        ring_mask_(std::bit_ceil(std::max<size_t>(capacity, 1)) - 1),
        ring_(std::make_unique<Held[]>(ring_mask_ + 1)) {
    heap_.reserve(capacity);
  }

  size_t size() const { return static_cast<size_t>(tail_ - head_) + heap_.size(); }
  bool full() const { return size() >= capacity_; }
  size_t capacity() const { return capacity_; }

  // Precondition: !full(). `in_order`: `at` is not earlier than any earlier
  // in-order push (the constant-delay case); others may be anything.
  void push(uint64_t at, Packet p, bool in_order) {
    const Held h{at, seq_++, p};
    if (in_order && (tail_ == head_ || ring_[(tail_ - 1) & ring_mask_].at <= at)) {
      ring_[tail_++ & ring_mask_] = h;
      return;
    }
    heap_.push_back(h);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }

  std::optional<uint64_t> next_release() const {
    const Held* e = earliest();
    if (!e) return std::nullopt;
    return e->at;
  }

  // The earliest held packet if its release time is <= now_ns.
  bool pop_due(uint64_t now_ns, Packet* p) {
    const Held* e = earliest();
    if (!e || e->at > now_ns) return false;
    *p = e->pkt;
    if (tail_ != head_ && e == &ring_[head_ & ring_mask_]) {
      ++head_;
    } else {
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      heap_.pop_back();
    }
    return true;
  }

  // Calls f(packet) on everything held, then empties the queue.
  template <class F>
  void clear(F&& f) {
    for (; head_ != tail_; ++head_) f(ring_[head_ & ring_mask_].pkt);
    for (Held& h : heap_) f(h.pkt);
    heap_.clear();
  }

 private:
  struct Held {
    uint64_t at = 0;   // release time
    uint64_t seq = 0;  // arrival order: equal release times leave FIFO
    Packet pkt{};
  };
  struct Later {  // std heap functions build a max-heap; "larger" = leaves later
    bool operator()(const Held& a, const Held& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  const Held* earliest() const {
    const Held* r = tail_ != head_ ? &ring_[head_ & ring_mask_] : nullptr;
    const Held* h = heap_.empty() ? nullptr : &heap_.front();
    if (!r) return h;
    if (!h) return r;
    return Later{}(*r, *h) ? h : r;
  }

  size_t capacity_;
  size_t ring_mask_;
  std::unique_ptr<Held[]> ring_;
  uint64_t head_ = 0, tail_ = 0;  // ring_[head_ .. tail_) (indices masked)
  std::vector<Held> heap_;
  uint64_t seq_ = 0;
};

}  // namespace detail

template <class Packet, class Ops>
class FaultStage {
 public:
  static constexpr uint64_t kReorderMinNs = 1'000, kReorderMaxNs = 50'000;

  FaultStage(const FaultSpec& spec, Ops ops, size_t hold_capacity = 4096)
      : spec_(spec),
        ops_(std::move(ops)),
        rng_(spec.seed),
        enabled_(spec.enabled()),
        drop_(threshold(spec.drop)),
        duplicate_(threshold(spec.duplicate)),
        reorder_(threshold(spec.reorder)),
        mark_ce_(threshold(spec.mark_ce)),
        held_(hold_capacity) {}
  ~FaultStage() { drain(); }
  FaultStage(const FaultStage&) = delete;
  FaultStage& operator=(const FaultStage&) = delete;

  // A burst in; what leaves now is written to out[0..out_cap). Returns the
  // number written. Held packets that fall due are not emitted here: call
  // release() too.
  size_t process(Packet* in, size_t n, Packet* out, size_t out_cap, uint64_t now_ns) {
    size_t w = 0;
    if (!enabled_) {
      const size_t m = std::min(n, out_cap);
      std::copy(in, in + m, out);
      w = m;
      for (size_t i = m; i < n; ++i) hold(in[i], now_ns, Why::kDeferred, out, out_cap, &w);
      counters_.passed += n;
      return w;
    }
    for (size_t i = 0; i < n; ++i) {
      Packet p = in[i];
      if (chance(drop_)) {
        ops_.free(p);
        ++counters_.dropped;
        continue;
      }
      ++counters_.passed;
      if constexpr (requires(Ops o, Packet q) { o.mark_ce(q); }) {
        if (chance(mark_ce_) && ops_.mark_ce(p)) ++counters_.ce_marked;
      }
      uint64_t extra = 0;
      if (chance(reorder_)) {
        extra = kReorderMinNs + rng_.next() % (kReorderMaxNs - kReorderMinNs + 1);
      }
      Packet copy{};
      bool dup = false;
      if (chance(duplicate_)) {
        dup = ops_.clone(p, &copy);
        ++(dup ? counters_.duplicated : counters_.clone_failed);
      }
      emit(p, now_ns, extra, out, out_cap, &w);
      if (dup) emit(copy, now_ns, extra, out, out_cap, &w);
    }
    return w;
  }

  // Held packets whose time has come (release time <= now_ns), in
  // release-time order, at most out_cap of them. Returns the number written.
  size_t release(uint64_t now_ns, Packet* out, size_t out_cap) {
    size_t w = 0;
    while (w < out_cap && held_.pop_due(now_ns, &out[w])) ++w;
    return w;
  }

  size_t held() const { return held_.size(); }
  size_t hold_capacity() const { return held_.capacity(); }
  std::optional<uint64_t> next_release() const { return held_.next_release(); }

  // Frees everything held via Ops::free (shutdown, or a spec change).
  void drain() {
    counters_.drained += held_.size();
    held_.clear([this](Packet p) { ops_.free(p); });
  }

  const FaultCounters& counters() const { return counters_; }
  const FaultSpec& spec() const { return spec_; }

 private:
  enum class Why { kDelay, kReorder, kDeferred };
  static constexpr uint64_t kAlways = ~uint64_t{0};

  // P(draw < threshold) == p; 0 never draws, kAlways never draws either.
  static uint64_t threshold(double p) {
    if (!(p > 0)) return 0;
    if (p >= 1) return kAlways;
    return static_cast<uint64_t>(p * 18446744073709551616.0);  // p * 2^64 < 2^64
  }
  bool chance(uint64_t threshold) {
    if (threshold == 0) return false;
    return threshold == kAlways || rng_.next() < threshold;
  }

  // A surviving packet (or clone): out now, or held for delay_ns + extra_ns.
  void emit(Packet p, uint64_t now_ns, uint64_t extra_ns, Packet* out, size_t out_cap, size_t* w) {
    const uint64_t hold_ns = spec_.delay_ns + extra_ns;
    if (hold_ns == 0) {
      if (*w < out_cap) {
        out[(*w)++] = p;
      } else {
        hold(p, now_ns, Why::kDeferred, out, out_cap, w);
      }
      return;
    }
    hold(p, now_ns + hold_ns, extra_ns ? Why::kReorder : Why::kDelay, out, out_cap, w);
  }

  void hold(Packet p, uint64_t at, Why why, Packet* out, size_t out_cap, size_t* w) {
    if (!held_.full()) {
      held_.push(at, p, why == Why::kDelay);
      if (why == Why::kDeferred) ++counters_.deferred;
      if (why == Why::kReorder) ++counters_.reordered;
      if (why != Why::kDeferred && spec_.delay_ns > 0) ++counters_.delayed;
      return;
    }
    if (why == Why::kDeferred || *w >= out_cap) {
      ops_.free(p);
      ++counters_.lost;
      return;
    }
    ++counters_.overflow;
    out[(*w)++] = p;
  }

  FaultSpec spec_;
  Ops ops_;
  SplitMix64 rng_;
  bool enabled_;
  uint64_t drop_, duplicate_, reorder_, mark_ce_;  // thresholds, see threshold()
  detail::HoldQueue<Packet> held_;
  FaultCounters counters_;
};

}  // namespace epic::switching
