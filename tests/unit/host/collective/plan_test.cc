// Plans as text (host/collective/plan.h): the syntax inc-rank's --plan takes,
// its canonical form, and the errors a typo must produce.
#include "host/collective/plan.h"

#include <gtest/gtest.h>

namespace epic::host {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;

TEST(Plan, ParsesEveryPrimitiveOfTheExamplePlan) {
  const ParsedPlan p = parse_plan(
      "allreduce:int32:sum:1048576,barrier,broadcast:fp32:root=2:4096,reduce:bf16:max:root=1:100,"
      "reduce_scatter:int32:sum:256,allgather:fp32:1024,allreduce:fp16:min:0");
  ASSERT_EQ(p.error, "");
  const std::vector<CollectiveDescriptor> want = {
      {CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, 1048576},
      {CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0},
      {CollectiveType::kBroadcast, DType::kFp32, ReduceOp::kSum, 2, 4096},
      {CollectiveType::kReduce, DType::kBf16, ReduceOp::kMax, 1, 100},
      {CollectiveType::kReduceScatter, DType::kInt32, ReduceOp::kSum, 0, 256},
      {CollectiveType::kAllGather, DType::kFp32, ReduceOp::kSum, 0, 1024},
      {CollectiveType::kAllReduce, DType::kFp16, ReduceOp::kMin, 0, 0},
  };
  EXPECT_EQ(p.plan, want);
}

TEST(Plan, FieldsMayComeInAnyOrderAndCountMayBeNamed) {
  const ParsedPlan a = parse_plan("reduce:root=1:max:count=100:bf16");
  const ParsedPlan b = parse_plan("reduce:bf16:max:root=1:100");
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.plan, b.plan);
}

TEST(Plan, FormatIsCanonicalAndParsesBack) {
  const std::vector<std::pair<CollectiveDescriptor, std::string>> table = {
      {{CollectiveType::kAllReduce, DType::kInt32, ReduceOp::kSum, 0, 7}, "allreduce:int32:sum:7"},
      {{CollectiveType::kReduce, DType::kBf16, ReduceOp::kMax, 3, 1}, "reduce:bf16:max:root=3:1"},
      {{CollectiveType::kBroadcast, DType::kFp16, ReduceOp::kSum, 2, 9}, "broadcast:fp16:root=2:9"},
      {{CollectiveType::kReduceScatter, DType::kFp32, ReduceOp::kMin, 0, 4},
       "reduce_scatter:fp32:min:4"},
      {{CollectiveType::kAllGather, DType::kFp32, ReduceOp::kSum, 0, 1024}, "allgather:fp32:1024"},
      {{CollectiveType::kBarrier, DType::kInt32, ReduceOp::kSum, 0, 0}, "barrier"},
  };
  for (const auto& [d, text] : table) {
    EXPECT_EQ(format_collective(d), text);
    const ParsedPlan p = parse_plan(text);
    ASSERT_EQ(p.error, "") << text;
    ASSERT_EQ(p.plan.size(), 1u);
    EXPECT_EQ(p.plan[0], d) << text;
  }
}

TEST(Plan, RejectsWhatAPrimitiveDoesNotTakeOrLacks) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"", "the plan is empty"},
      {"allreduce:int32:sum:4,,barrier", "plan item 1: unknown primitive ''"},
      {"alltoall:int32:4", "plan item 0: unknown primitive 'alltoall'"},
      {"allreduce:int32:4", "plan item 0: allreduce needs an op"},
      {"allreduce:sum:4", "plan item 0: allreduce needs a dtype"},
      {"allreduce:int32:sum", "plan item 0: allreduce needs a count"},
      {"reduce:int32:sum:4", "plan item 0: reduce needs root=R"},
      {"broadcast:fp32:sum:root=0:4", "plan item 0: broadcast reduces nothing: drop 'sum'"},
      {"allgather:fp32:root=1:4", "plan item 0: allgather has no root: drop 'root=1'"},
      {"barrier:int32", "plan item 0: barrier takes no fields, got 'int32'"},
      {"allreduce:int32:sum:4:5", "plan item 0: two counts"},
      {"allreduce:int32:fp32:sum:4", "plan item 0: two dtypes"},
      {"allreduce:int32:sum:max:4", "plan item 0: two ops"},
      {"allreduce:int32:sum:4x", "plan item 0: '4x' in 'allreduce:int32:sum:4x' is not a dtype"},
      {"allreduce:int32:sum:-4", "is not a dtype"},
      {"allreduce:int32:sum:4294967296", "count 4294967296 does not fit 32 bits"},
      {"reduce:int32:sum:root=65536:4", "bad root in 'root=65536'"},
  };
  for (const auto& [text, why] : table) {
    const ParsedPlan p = parse_plan(text);
    EXPECT_NE(p.error.find(why), std::string::npos) << "'" << text << "' gave '" << p.error << "'";
    EXPECT_TRUE(p.plan.empty()) << text;
  }
}

TEST(Plan, CheckRejectsARootOutsideTheGroupAndOversizedBuffers) {
  const auto plan = [](std::string_view text) { return parse_plan(text).plan; };
  EXPECT_EQ(check_plan(plan("broadcast:fp32:root=3:4,reduce:int32:sum:root=3:4"), 4), "");
  EXPECT_EQ(check_plan(plan("barrier,broadcast:fp32:root=4:4"), 4),
            "plan item 1 (broadcast:fp32:root=4:4): root 4 is not a rank of a group of 4");
  // 2^28 int32 = 1 GiB is the limit; AllGather's result is ranks x count.
  EXPECT_EQ(check_plan(plan("allreduce:int32:sum:268435456"), 2), "");
  EXPECT_NE(check_plan(plan("allreduce:int32:sum:268435457"), 2).find("above the limit"),
            std::string::npos);
  EXPECT_NE(check_plan(plan("allgather:int32:134217729"), 2).find("1073741832 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace epic::host
