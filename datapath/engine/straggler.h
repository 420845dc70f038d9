// Straggler: which child holds a group back at this switch (docs/telemetry.md). For every
// multi-source slot the engine notes the burst time of its first contribution; each later
// contribution adds its lag (time since that first one) to its child's log2 histogram, and the
// contribution that completes the slot counts for its child as "last" — unless it came in the
// same burst as the contribution before it, which ties them (GroupStats::slots_tied). Per
// contribution: a table write, two increments and a bucket index — no allocation, no clock read
// (the burst's time comes in Actions::now_ns / mode3::Loop::now_ns). Read by the owning worker when
// it publishes telemetry, never by another thread. Threading: owned by the worker that owns the
// group.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/vocab/limits.h"
#include "proto/vocab/straggler.h"

namespace epic::engine {

// Lag buckets: bucket 0 holds lags below 2^10 ns, bucket b >= 1 lags in [2^(b+9), 2^(b+10)) ns,
// the last one every lag from 2^(kLagBuckets+8) ns (about 4.3 s) on.
inline constexpr size_t kLagBuckets = 24;
// A child's histogram is halved when it holds this many samples, so its quantiles follow the
// recent contributions (between 2^15 and 2^16 of them) rather than the whole life of the group.
inline constexpr uint32_t kLagDecayAt = 1u << 16;

uint32_t lag_bucket(uint64_t lag_ns);
// The upper bound of bucket b, in ns (2^(b+10)).
uint64_t lag_bucket_bound_ns(uint32_t b);

using LagHistogram = std::array<uint32_t, kLagBuckets>;

// The q-quantile (0 < q <= 1) of `h` holding `samples` samples, as its bucket's upper bound;
// 0 when empty.
uint64_t lag_quantile(const LagHistogram& h, uint64_t samples, double q);

struct StragglerState {
  struct SlotFirst {
    uint32_t psn = UINT32_MAX;  // the group PSN timed (never a 24-bit PSN until the first)
    uint64_t ns = 0;            // its first contribution's burst time
    uint64_t latest_ns = 0;     // its latest contribution's burst time
  };
  // Indexed by group PSN mod size() (a power of two: the group's 2·MW slots, so one entry per
  // slot in Mode-II and per Pipe entry in Mode-III). Empty: the group is not timed.
  std::vector<SlotFirst> first;
  std::array<uint64_t, vocab::kMaxChildren> last{};
  std::array<LagHistogram, vocab::kMaxChildren> lag{};
  std::array<uint32_t, vocab::kMaxChildren> samples{};
};

enum class Timed : uint8_t {
  kNot,    // fan-in 1, or the group is not timed
  kAdded,  // a contribution that did not complete its slot: its lag is counted
  kLast,   // it completed the slot in a later burst than the contribution before: "last"
  kTied,   // it completed the slot in the same burst as the one before: nobody was last (the
           // order inside a burst is the order of the ports polled, not of arrival)
};

// A fresh contribution of `child` to the slot of group PSN `gpsn` at `now_ns`; `completed`: it
// completed the slot's aggregation. Slots of fan-in 1 are not timed (nobody to be behind).
Timed time_contribution(StragglerState& s, uint32_t gpsn, int child, bool completed,
                        uint16_t fan_in, uint64_t now_ns);

// What `s` says of child `c` (its counts and lag quantiles; the caller fills in who it is).
vocab::ChildTiming child_timing(const StragglerState& s, size_t c);

}  // namespace epic::engine
