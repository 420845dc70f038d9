#include <gtest/gtest.h>

#include <cstdlib>

#include "datapath/arith/kernels.h"

namespace epic::arith {
namespace {

TEST(Isa, NamesRoundTrip) {
  for (Isa isa : {Isa::kReference, Isa::kPortable, Isa::kAvx2, Isa::kAvx512})
    EXPECT_EQ(parse_isa(to_string(isa)), isa);
  EXPECT_EQ(parse_isa("sse2"), std::nullopt);
}

TEST(Isa, ReferenceAndPortableAlwaysExist) {
  ASSERT_NE(kernels_for(Isa::kReference), nullptr);
  ASSERT_NE(kernels_for(Isa::kPortable), nullptr);
}

TEST(Isa, TablesAreCompleteAndLabelled) {
  for (Isa isa : {Isa::kReference, Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    const Kernels* k = kernels_for(isa);
    if (k == nullptr) continue;
    EXPECT_EQ(k->isa, isa);
    for (size_t t = 0; t < kNumDTypes; ++t) {
      EXPECT_NE(k->load[t], nullptr);
      EXPECT_NE(k->store[t], nullptr);
      for (size_t op = 0; op < kNumReduceOps; ++op) EXPECT_NE(k->combine[t][op], nullptr);
    }
  }
}

TEST(Isa, SelectionPicksTheBestSupportedUnderTheCap) {
  const Isa best = select_isa(std::nullopt);
  EXPECT_NE(kernels_for(best), nullptr);
  for (auto i = static_cast<int>(best) + 1; i < static_cast<int>(kNumIsas); ++i)
    EXPECT_EQ(kernels_for(static_cast<Isa>(i)), nullptr);
  EXPECT_EQ(select_isa(Isa::kReference), Isa::kReference);
  EXPECT_EQ(select_isa(Isa::kPortable), Isa::kPortable);
  EXPECT_GE(best, Isa::kPortable);  // the reference only when asked for
  EXPECT_LE(select_isa(Isa::kAvx2), Isa::kAvx2);
  EXPECT_EQ(select_isa(Isa::kAvx512), best);
}

TEST(Isa, ActiveKernelsFollowTheEnvironmentCap) {
  const char* env = std::getenv("EPIC_ARITH_ISA");
  const auto cap = env != nullptr ? parse_isa(env) : std::nullopt;
  EXPECT_EQ(active_kernels().isa, select_isa(cap));
}

}  // namespace
}  // namespace epic::arith
