// AggregateData in a group that sums exactly (KULISCH_FIXED): a rank's values are deposited
// into the slot's Kulisch accumulator, a switch child's AUTO partial is merged, and the
// completed slot stores the sum rounded once — the same bits whatever the arrival order and
// whichever children arrived as partials. A malformed partial is refused and changes nothing;
// a non-root's up_payload is the slot's exact partial, the same bytes every time it is sent.
// Results worked out by hand: 1e8 + 1 - 1e8 = 1 (arrival order gives 0 or 1), 1 + 3·2^-25
// rounds once to 1 + 2^-23 (one at a time each term is lost), 2^127 + 2^127 - 2^127 = 2^127
// (the partial 2^128 is not an fp32 value: it travels in a wider form).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "datapath/arith/kulisch.h"
#include "datapath/engine/aggregate_data.h"
#include "datapath/wire/opcode.h"
#include "tests/unit/datapath/engine/slots_test_util.h"

namespace epic::engine {
namespace {

namespace op = wire::op;
using arith::DType;
using arith::ReduceOp;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kRanks = 4;
constexpr uint16_t kPmtu = 256;
const vocab::GroupArith kExact{vocab::AccumProfile::kKulischFixed, DType::kFp32};

Bytes f32_bits(std::initializer_list<uint32_t> v) {
  Bytes b(v.size() * 4);
  size_t k = 0;
  for (uint32_t x : v) std::memcpy(b.data() + 4 * k++, &x, 4);
  return b;
}

void claim(SlotRegion& r, uint32_t i, uint16_t len) {
  Slot& s = r.meta[i];
  s = slots_test::slot(true, 40 + i, SlotState::kAggregating);
  s.opcode = op::kSendOnly;
  s.payload_len = len;
  s.dtype = DType::kFp32;
  s.op = ReduceOp::kSum;
}

// Element k of contribution c: {1e8, 1, -1e8, 0} and {1, 2^-25, 2^-25, 2^-25} and
// {2^127, 2^127, -2^127, -0}.
const std::vector<Bytes> kRankValues = {
    f32_bits({0x4CBEBC20, 0x3F800000, 0x7F000000}),
    f32_bits({0x3F800000, 0x33000000, 0x7F000000}),
    f32_bits({0xCCBEBC20, 0x33000000, 0xFF000000}),
    f32_bits({0x00000000, 0x33000000, 0x80000000}),
};
const Bytes kExactSum = f32_bits({0x3F800000, 0x3F800001, 0x7F000000});

Bytes run_slot(const std::vector<int>& order) {
  SlotRegion r(4, kPmtu, kExact, kRanks);
  claim(r, 0, 12);
  for (size_t k = 0; k < order.size(); ++k) {
    const Bytes& v = kRankValues[static_cast<size_t>(order[k])];
    const Contribution got = aggregate_data(r, 0, order[k], Source::kRank, op::kSendOnly, v.data(),
                                            12, static_cast<uint16_t>(order.size()));
    EXPECT_EQ(got, k + 1 < order.size() ? Contribution::kAdded : Contribution::kCompleted);
  }
  return Bytes(r.result_of(0), r.result_of(0) + 12);
}

TEST(AggregateExact, EveryArrivalOrderGivesTheExactSumRoundedOnce) {
  std::vector<int> order = {0, 1, 2, 3};
  do {
    EXPECT_EQ(run_slot(order), kExactSum) << order[0] << order[1] << order[2] << order[3];
  } while (std::next_permutation(order.begin(), order.end()));
}

// A lower switch holding ranks {0, 2} sends its exact partial; the upper merges it with ranks
// 1 and 3 in either order: the same bits as one switch.
TEST(AggregateExact, ASwitchChildsPartialMergesToTheSameBitsAsOneSwitch) {
  SlotRegion lower(4, kPmtu, kExact, kRanks);
  claim(lower, 1, 12);
  aggregate_data(lower, 1, 0, Source::kRank, op::kSendOnly, kRankValues[0].data(), 12, 2);
  ASSERT_EQ(aggregate_data(lower, 1, 1, Source::kRank, op::kSendOnly, kRankValues[2].data(), 12, 2),
            Contribution::kCompleted);
  const UpPayload up = up_payload(lower, 1);
  ASSERT_GT(up.len, 0u);
  const Bytes partial(up.data, up.data + up.len);
  // 2^127 + -2^127 = 0 and 1e8 - 1e8 = 0 and 1 + 2^-25 are not all fp32 values: not kPlain.
  EXPECT_EQ(partial[1], static_cast<uint8_t>(vocab::PartialForm::kFixed64));
  const UpPayload again = up_payload(lower, 1);
  EXPECT_EQ(Bytes(again.data, again.data + again.len), partial) << "a re-send is the same bytes";
  for (bool partial_first : {true, false}) {
    SlotRegion upper(4, kPmtu, kExact, kRanks);
    claim(upper, 2, 12);
    auto add = [&](int child, Source from, const Bytes& b) {
      return aggregate_data(upper, 2, child, from, op::kSendOnly, b.data(),
                            static_cast<uint16_t>(b.size()), 3);
    };
    if (partial_first) add(0, Source::kSwitch, partial);
    add(1, Source::kRank, kRankValues[1]);
    add(2, Source::kRank, kRankValues[3]);
    if (!partial_first) {
      EXPECT_EQ(add(0, Source::kSwitch, partial), Contribution::kCompleted);
    }
    EXPECT_EQ(Bytes(upper.result_of(2), upper.result_of(2) + 12), kExactSum);
  }
}

TEST(AggregateExact, AMalformedPartialIsRefusedAndChangesNothing) {
  SlotRegion lower(4, kPmtu, kExact, kRanks);
  claim(lower, 0, 12);
  aggregate_data(lower, 0, 0, Source::kRank, op::kSendOnly, kRankValues[0].data(), 12, 1);
  const UpPayload up = up_payload(lower, 0);
  const Bytes good(up.data, up.data + up.len);
  std::vector<Bytes> bad = {Bytes(good.begin(), good.end() - 1), kRankValues[1], Bytes{}};
  Bytes wrong_magic = good;
  wrong_magic[0] ^= 1;
  bad.push_back(wrong_magic);
  Bytes wrong_count = good;
  wrong_count[4] = 4;  // four elements, not three
  bad.push_back(wrong_count);
  SlotRegion upper(4, kPmtu, kExact, kRanks);
  claim(upper, 0, 12);
  aggregate_data(upper, 0, 1, Source::kRank, op::kSendOnly, kRankValues[1].data(), 12, 3);
  const Bytes acc(upper.accum_of(0), upper.accum_of(0) + upper.accum_stride);
  for (const Bytes& b : bad) {
    EXPECT_EQ(aggregate_data(upper, 0, 0, Source::kSwitch, op::kSendOnly, b.data(),
                             static_cast<uint16_t>(b.size()), 3),
              Contribution::kInconsistent);
    EXPECT_EQ(upper.meta[0].degree, 1u);
    EXPECT_EQ(upper.meta[0].bitmap, uint64_t{1} << 1);
    EXPECT_EQ(Bytes(upper.accum_of(0), upper.accum_of(0) + upper.accum_stride), acc);
  }
}

// min and max are exact in both profiles: an exact group runs them in the FP32_ARRIVAL
// accumulator, and a switch child's payload is its plain result.
TEST(AggregateExact, MinAndMaxInAnExactGroupArePlain) {
  SlotRegion r(4, kPmtu, kExact, kRanks);
  claim(r, 3, 12);
  r.meta[3].op = ReduceOp::kMax;
  EXPECT_FALSE(r.exact(r.meta[3]));
  aggregate_data(r, 3, 0, Source::kSwitch, op::kSendOnly, kRankValues[0].data(), 12, 2);
  aggregate_data(r, 3, 1, Source::kRank, op::kSendOnly, kRankValues[2].data(), 12, 2);
  EXPECT_EQ(Bytes(r.result_of(3), r.result_of(3) + 12),
            f32_bits({0x4CBEBC20, 0x3F800000, 0x7F000000}));
  const UpPayload up = up_payload(r, 3);
  EXPECT_EQ(up.data, r.result_of(3));
  EXPECT_EQ(up.len, 12u);
}

}  // namespace
}  // namespace epic::engine
