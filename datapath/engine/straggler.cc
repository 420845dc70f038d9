#include "datapath/engine/straggler.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace epic::engine {

uint32_t lag_bucket(uint64_t lag_ns) {
  const uint64_t units = lag_ns >> 10;
  if (units == 0) return 0;
  return std::min<uint32_t>(kLagBuckets - 1, static_cast<uint32_t>(std::bit_width(units)));
}

uint64_t lag_bucket_bound_ns(uint32_t b) { return uint64_t{1} << (b + 10); }

uint64_t lag_quantile(const LagHistogram& h, uint64_t samples, double q) {
  if (samples == 0) return 0;
  const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * samples)));
  uint64_t seen = 0;
  for (uint32_t b = 0; b < kLagBuckets; ++b) {
    seen += h[b];
    if (seen >= rank) return lag_bucket_bound_ns(b);
  }
  return lag_bucket_bound_ns(kLagBuckets - 1);
}

Timed time_contribution(StragglerState& s, uint32_t gpsn, int child, bool completed,
                        uint16_t fan_in, uint64_t now_ns) {
  if (fan_in < 2 || s.first.empty() || child < 0 ||
      static_cast<size_t>(child) >= vocab::kMaxChildren) {
    return Timed::kNot;
  }
  StragglerState::SlotFirst& f = s.first[gpsn & (s.first.size() - 1)];
  if (f.psn != gpsn) {
    f.psn = gpsn;
    f.ns = f.latest_ns = now_ns;
  }
  const auto c = static_cast<size_t>(child);
  LagHistogram& h = s.lag[c];
  ++h[lag_bucket(now_ns > f.ns ? now_ns - f.ns : 0)];
  if (++s.samples[c] >= kLagDecayAt) {
    uint32_t kept = 0;
    for (uint32_t& n : h) kept += (n /= 2);
    s.samples[c] = kept;
  }
  const bool later = now_ns > f.latest_ns;
  f.latest_ns = now_ns;
  if (!completed) return Timed::kAdded;
  if (!later) return Timed::kTied;
  ++s.last[c];
  return Timed::kLast;
}

vocab::ChildTiming child_timing(const StragglerState& s, size_t c) {
  vocab::ChildTiming t;
  t.child = static_cast<uint16_t>(c);
  t.last = s.last[c];
  t.lag_samples = s.samples[c];
  t.lag_p50_ns = lag_quantile(s.lag[c], s.samples[c], 0.50);
  t.lag_p99_ns = lag_quantile(s.lag[c], s.samples[c], 0.99);
  return t;
}

}  // namespace epic::engine
