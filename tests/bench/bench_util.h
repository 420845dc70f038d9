// Helpers shared by EPIC's benchmark programs: timing, repetitions with
// median/min/max, and JSON-line output (tests/bench/README.md). Benchmarks
// report ratios against baselines measured in the same run, interleaved.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace epic::bench {

struct Stats {
  double median = 0, min = 0, max = 0;
};

inline Stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

// Seconds taken by fn().
template <typename Fn>
double time_s(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Keeps a value alive so the optimizer cannot drop the work producing it.
template <typename T>
inline void keep(const T& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

// {"bench":"wire","metric":"...", <extra>, "median":..,"min":..,"max":..,"unit":".."}
inline void emit(const std::string& bench, const std::string& metric, const std::string& extra,
                 const Stats& s, const std::string& unit, int reps) {
  std::printf(
      "{\"bench\":\"%s\",\"metric\":\"%s\",%s\"median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
      "\"unit\":\"%s\",\"reps\":%d}\n",
      bench.c_str(), metric.c_str(), extra.c_str(), s.median, s.min, s.max, unit.c_str(), reps);
}

}  // namespace epic::bench
