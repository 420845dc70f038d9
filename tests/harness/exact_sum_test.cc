// KULISCH_FIXED through the deterministic harness: soft RC ranks and Mode-II switches, one
// switch and trees of switches (whose partials travel in the AUTO wire form), lossless and
// with seeded loss, duplication and reordering. Every result is compared bit for bit with
// tests/harness/exact_reference.py — Python's Fraction over values decoded from the format
// definitions, rounded once — on adversarial inputs built here from bit fields (never through
// EPIC's codecs); and the same inputs under 1,000 seeded arrival orders, loss patterns and tree
// shapes give one bit pattern per element, where FP32_ARRIVAL gives several.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "host/collective/adversarial.h"
#include "host/collective/layout.h"
#include "proto/vocab/arith.h"
#include "tests/harness/mode2_harness.h"

#ifndef EPIC_SOURCE_DIR
#error "EPIC_SOURCE_DIR must name the source tree (for exact_reference.py)"
#endif

namespace epic::harness {
namespace {

using vocab::AccumProfile;
using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;
using Bytes = std::vector<uint8_t>;

std::string hex(const Bytes& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

Bytes unhex(const std::string& s) {
  Bytes b;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    b.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return b;
}

// The exact reference of each case (dtype, contributions): exact_reference.py, run once.
std::vector<Bytes> python_reference(
    const std::vector<std::pair<DType, std::vector<Bytes>>>& cases) {
  char in_path[] = "/tmp/epic_exact_in_XXXXXX";
  char out_path[] = "/tmp/epic_exact_out_XXXXXX";
  const int in_fd = mkstemp(in_path);
  const int out_fd = mkstemp(out_path);
  EXPECT_GE(in_fd, 0);
  EXPECT_GE(out_fd, 0);
  close(in_fd);
  close(out_fd);
  {
    std::ofstream in(in_path);
    for (const auto& [t, contributions] : cases) {
      in << vocab::to_string(t) << ' ' << contributions[0].size() / vocab::wire_bytes(t);
      for (const Bytes& c : contributions) in << ' ' << hex(c);
      in << '\n';
    }
  }
  const std::string cmd = std::string("python3 ") + EPIC_SOURCE_DIR +
                          "/tests/harness/exact_reference.py " + in_path + " " + out_path;
  const int rc = std::system(cmd.c_str());
  std::vector<Bytes> out;
  std::ifstream o(out_path);
  for (std::string line; std::getline(o, line);) out.push_back(unhex(line));
  std::remove(in_path);
  std::remove(out_path);
  EXPECT_EQ(rc, 0) << cmd;
  EXPECT_EQ(out.size(), cases.size());
  return out;
}

CollectiveDescriptor allreduce(DType t, uint32_t count) {
  return {CollectiveType::kAllReduce, t, ReduceOp::kSum, 0, count};
}

HarnessConfig exact_config(DType t, std::vector<int> shape) {
  HarnessConfig cfg;
  cfg.shape = std::move(shape);
  cfg.arith = {AccumProfile::kKulischFixed, t};
  return cfg;
}

// Every rank's expected result of an AllReduce: the reference, R times.
std::vector<std::vector<Bytes>> everyone(const Bytes& want, int R) {
  return {std::vector<Bytes>(static_cast<size_t>(R), want)};
}

const DType kFloatTypes[] = {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E5M2,
                             DType::kFp8E4M3};

TEST(ExactSum, MatchesAnExactReferenceForEveryFloatTypeOnOneSwitchAndOnTrees) {
  struct Tree {
    std::vector<int> shape;
    Faults faults;
  };
  const std::vector<Tree> trees = {
      {{4}, {}},
      {{2, 2}, {}},
      {{3, 2}, {0.02, 0.02, 0.2}},
      {{2, 2, 2}, {0.02, 0.0, 0.3}},
  };
  std::vector<std::pair<DType, std::vector<Bytes>>> cases;
  for (DType t : kFloatTypes) {
    for (const Tree& tree : trees) {
      const int R = rank_count(tree.shape);
      // Three packets and a ragged tail at pmtu 256, whatever the width.
      const auto n = static_cast<uint32_t>(2 * 256 / vocab::wire_bytes(t) + 37);
      cases.push_back({t, host::adversarial_inputs(allreduce(t, n), static_cast<uint16_t>(R), 1000,
                                                   cases.size())});
    }
  }
  const std::vector<Bytes> want = python_reference(cases);
  ASSERT_EQ(want.size(), cases.size());
  size_t k = 0;
  for (DType t : kFloatTypes) {
    for (const Tree& tree : trees) {
      SCOPED_TRACE(std::string(vocab::to_string(t)) + " tree of " +
                   std::to_string(tree.shape.size()) + " levels, case " + std::to_string(k));
      HarnessConfig cfg = exact_config(t, tree.shape);
      cfg.faults = tree.faults;
      cfg.seed = 7 + k;
      const std::vector<Bytes>& in = cases[k].second;
      const int R = rank_count(tree.shape);
      const auto count = static_cast<uint32_t>(in[0].size() / vocab::wire_bytes(t));
      const RunResult r = run(cfg, {allreduce(t, count)}, {in}, everyone(want[k], R));
      EXPECT_TRUE(r.ok) << r.failure;
      EXPECT_EQ(r.switches.drop_inconsistent, 0u);
      if (tree.shape.size() > 1) {
        EXPECT_GT(r.switches.partials_sent_up, 0u);
      }
      ++k;
    }
  }
}

// Reduce (to one root) and ReduceScatter (chunk q to rank q) sum exactly too, under loss.
TEST(ExactSum, ReduceAndReduceScatterMatchTheExactReference) {
  const uint16_t R = 4;
  std::vector<CollectiveDescriptor> plan;
  for (DType t : {DType::kFp32, DType::kFp16, DType::kFp8E4M3}) {
    const auto n = static_cast<uint32_t>(256 / vocab::wire_bytes(t) + 5);
    plan.push_back({CollectiveType::kReduce, t, ReduceOp::kSum, 2, n});
    plan.push_back({CollectiveType::kReduceScatter, t, ReduceOp::kSum, 0, n});
  }
  std::vector<std::vector<Bytes>> inputs;
  std::vector<std::pair<DType, std::vector<Bytes>>> cases;
  for (size_t k = 0; k < plan.size(); ++k) {
    inputs.push_back(host::adversarial_inputs(plan[k], R, 31, k));
    cases.push_back({plan[k].dtype, inputs.back()});
  }
  const std::vector<Bytes> full = python_reference(cases);
  ASSERT_EQ(full.size(), plan.size());
  std::vector<std::vector<Bytes>> expected(plan.size());
  for (size_t k = 0; k < plan.size(); ++k) {
    const size_t chunk = plan[k].count * vocab::wire_bytes(plan[k].dtype);
    for (uint16_t r = 0; r < R; ++r) {
      if (plan[k].type == CollectiveType::kReduce) {
        expected[k].push_back(r == plan[k].root ? full[k] : Bytes{});
      } else {
        expected[k].emplace_back(full[k].begin() + r * chunk, full[k].begin() + (r + 1) * chunk);
      }
      ASSERT_EQ(expected[k][r].size(), host::recv_bytes(plan[k], r, R));
    }
  }
  for (const std::vector<int>& shape : {std::vector<int>{4}, std::vector<int>{2, 2}}) {
    for (uint64_t seed : {1, 2, 3}) {
      HarnessConfig cfg;
      cfg.shape = shape;
      cfg.arith = {AccumProfile::kKulischFixed, DType::kFp32};
      cfg.seed = seed;
      cfg.faults = {0.02, 0.01, 0.2};
      const RunResult r = run(cfg, plan, inputs, expected);
      EXPECT_TRUE(r.ok) << "shape of " << shape.size() << " levels, seed " << seed << ": "
                        << r.failure;
    }
  }
}

// The same inputs under 1,000 seeded runs — arrival orders (reordering), loss and duplication
// patterns (retransmissions), one switch or a tree — give one bit pattern for every element.
TEST(ExactSum, OneBitPatternUnderAThousandArrivalOrdersLossPatternsAndTrees) {
  const uint16_t R = 4;
  const DType t = DType::kFp32;
  const size_t n = 256 / 4 + 9;
  const std::vector<Bytes> in =
      host::adversarial_inputs(allreduce(t, static_cast<uint32_t>(n)), R, 77, 0);
  const std::vector<Bytes> want = python_reference({{t, in}});
  ASSERT_EQ(want.size(), 1u);
  const std::vector<std::vector<int>> shapes = {{4}, {2, 2}, {1, 4}, {2, 1, 2}};
  std::set<std::string> seen;  // bit patterns (a set of vectors trips gcc 12 -Wstringop-overread)
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    HarnessConfig cfg = exact_config(t, shapes[seed % shapes.size()]);
    cfg.seed = seed;
    cfg.faults = {seed % 3 == 0 ? 0.0 : 0.03, seed % 5 == 0 ? 0.05 : 0.0, 0.4};
    const RunResult r =
        run(cfg, {allreduce(t, static_cast<uint32_t>(n))}, {in}, everyone(want[0], R));
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.failure;
    for (const Bytes& got : r.results[0]) seen.emplace(got.begin(), got.end());
  }
  EXPECT_EQ(seen.size(), 1u) << "KULISCH_FIXED gave " << seen.size() << " different results";
}

// Wide groups: R = 2, 32 and 256 ranks (one switch, 4 leaves of 8, 16 leaves of 16), where the
// largest magnitudes overflow the format unless they cancel, and 1 + tiny terms adds up to 255
// terms below half an ulp; the width W grows with ceil(log2 R) and the E4M3 layout stays int32.
TEST(ExactSum, WideGroupsUpTo256RanksMatchTheExactReference) {
  const std::vector<std::vector<int>> shapes = {{2}, {4, 8}, {16, 16}};
  std::vector<std::pair<DType, std::vector<Bytes>>> cases;
  for (DType t : kFloatTypes) {
    for (const auto& shape : shapes) {
      const int R = rank_count(shape);
      const auto n = static_cast<uint32_t>(256 / vocab::wire_bytes(t) + 11);
      cases.push_back({t, host::adversarial_inputs(allreduce(t, n), static_cast<uint16_t>(R), 31,
                                                   cases.size())});
    }
  }
  const std::vector<Bytes> want = python_reference(cases);
  ASSERT_EQ(want.size(), cases.size());
  size_t k = 0;
  for (DType t : kFloatTypes) {
    for (const auto& shape : shapes) {
      const int R = rank_count(shape);
      SCOPED_TRACE(std::string(vocab::to_string(t)) + " R " + std::to_string(R));
      HarnessConfig cfg = exact_config(t, shape);
      cfg.seed = 100 + k;
      cfg.faults = {0.01, 0.0, 0.2};
      const std::vector<Bytes>& in = cases[k].second;
      const auto count = static_cast<uint32_t>(in[0].size() / vocab::wire_bytes(t));
      const RunResult r = run(cfg, {allreduce(t, count)}, {in}, everyone(want[k], R));
      EXPECT_TRUE(r.ok) << r.failure;
      EXPECT_EQ(r.switches.drop_inconsistent, 0u);
      ++k;
    }
  }
}

// The control: FP32_ARRIVAL on the same inputs and runs gives more than one bit pattern (so
// the test above could fail), and an exact group's results equal none of FP32_ARRIVAL's
// where arrival order lost low bits.
TEST(ExactSum, ArrivalOrderSumsDifferUnderTheSameArrivalOrders) {
  const uint16_t R = 4;
  const DType t = DType::kFp32;
  const size_t n = 256 / 4 + 9;
  const std::vector<Bytes> in =
      host::adversarial_inputs(allreduce(t, static_cast<uint32_t>(n)), R, 77, 0);
  const std::vector<std::vector<int>> shapes = {{4}, {2, 2}};
  std::set<std::string> seen;  // bit patterns (a set of vectors trips gcc 12 -Wstringop-overread)
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    HarnessConfig cfg;
    cfg.shape = shapes[seed % shapes.size()];
    cfg.check_results = false;
    cfg.seed = seed;
    cfg.faults = {0.0, 0.0, 0.4};
    const RunResult r = run(cfg, {allreduce(t, static_cast<uint32_t>(n))}, {in});
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.failure;
    for (const Bytes& got : r.results[0]) seen.emplace(got.begin(), got.end());
  }
  EXPECT_GT(seen.size(), 1u) << "FP32_ARRIVAL was order-independent on these inputs";
}

// A collective whose accumulator does not fit the group's slots is refused by the switch at
// its announcement, counted by reason: bf16's exact sum needs twice fp32's accumulator.
TEST(ExactSum, ACollectiveWhoseAccumulatorDoesNotFitIsRefusedAtItsAnnouncement) {
  HarnessConfig cfg = exact_config(DType::kFp32, {2});
  cfg.check_results = false;
  cfg.time_limit_ns = 50'000'000;
  const std::vector<Bytes> in = host::adversarial_inputs(allreduce(DType::kBf16, 16), 2, 5, 0);
  const RunResult r = run(cfg, {allreduce(DType::kBf16, 16)}, {in});
  EXPECT_FALSE(r.ok);  // the ranks never get an answer
  EXPECT_GT(r.switches.drop_arith_unfit, 0u);
  EXPECT_EQ(r.switches.aggregations_completed, 0u);
}

}  // namespace
}  // namespace epic::harness
