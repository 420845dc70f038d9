#include "manager/core/rendezvous.h"

#include <gtest/gtest.h>

#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::rank_ip;

RankJoin join_of(uint32_t rank, uint32_t size = 3) {
  return RankJoin{.tenant = "t",
                  .group = "job/dp",
                  .size = size,
                  .rank = {rank, rank_ip(0, static_cast<int>(rank)), 0x11 + rank, std::nullopt},
                  .window = 16,
                  .pmtu = 1024,
                  .queue_timeout = Millis{0}};
}

class RendezvousTest : public ::testing::Test {
 protected:
  Rendezvous rv{Millis{30'000}};
};

TEST_F(RendezvousTest, TheLastRankCompletesTheGroupRequest) {
  auto r = rv.offer(join_of(2), Millis{0});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().has_value());
  EXPECT_FALSE(rv.offer(join_of(0), Millis{10}).value().has_value());
  auto done = rv.offer(join_of(1), Millis{20});
  ASSERT_TRUE(done.ok());
  ASSERT_TRUE(done.value().has_value());
  const GroupRequest& req = *done.value();
  EXPECT_EQ(req.tenant, "t");
  EXPECT_EQ(req.name, "job/dp");
  EXPECT_EQ(req.window, 16u);
  ASSERT_EQ(req.ranks.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(req.ranks[i].rank, i);
    EXPECT_EQ(req.ranks[i].qpn, 0x11 + i);
  }
  EXPECT_EQ(rv.waiting(), 0u);
}

TEST_F(RendezvousTest, ARetriedJoinIsAcceptedOnce) {
  ASSERT_TRUE(rv.offer(join_of(0), Millis{0}).ok());
  auto again = rv.offer(join_of(0), Millis{5});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again.value().has_value());
  EXPECT_FALSE(rv.offer(join_of(1), Millis{6}).value().has_value());
  EXPECT_TRUE(rv.offer(join_of(2), Millis{7}).value().has_value());
}

TEST_F(RendezvousTest, RanksMustAgreeOnTheGroup) {
  ASSERT_TRUE(rv.offer(join_of(0), Millis{0}).ok());
  RankJoin j = join_of(1, 4);
  EXPECT_EQ(
      rv.offer(j, Millis{1}).error().message,
      "rank 1 of group 'job/dp' of tenant 't' asks for a group size of 4; rank 0 asked for 3");
  j = join_of(1);
  j.window = 32;
  EXPECT_EQ(rv.offer(j, Millis{1}).error().message,
            "rank 1 of group 'job/dp' of tenant 't' asks for window 32; rank 0 asked for 16");
  j = join_of(1);
  j.pmtu = 4096;
  auto r = rv.offer(j, Millis{1});
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message,
            "rank 1 of group 'job/dp' of tenant 't' asks for pmtu 4096; rank 0 asked for 1024");
  j = join_of(1);
  j.mode = vocab::GroupMode::kMode3;
  EXPECT_EQ(rv.offer(j, Millis{1}).error().message,
            "rank 1 of group 'job/dp' of tenant 't' asks for Mode-III; rank 0 asked for the "
            "fabric's default mode");
  j.mode = vocab::GroupMode::kMode2;  // the default may be Mode-III: "unset" is not Mode-II
  EXPECT_EQ(rv.offer(j, Millis{1}).error().message,
            "rank 1 of group 'job/dp' of tenant 't' asks for Mode-II; rank 0 asked for the "
            "fabric's default mode");
}

TEST_F(RendezvousTest, TheAgreedModeReachesTheGroupRequest) {
  for (uint32_t rank = 0; rank < 3; ++rank) {
    RankJoin j = join_of(rank);
    j.mode = vocab::GroupMode::kMode3;
    auto r = rv.offer(j, Millis{rank});
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (rank == 2) {
      ASSERT_TRUE(r.value().has_value());
      EXPECT_EQ(r.value()->mode, vocab::GroupMode::kMode3);
    }
  }
  const RankJoin unset = join_of(0, 1);
  auto r = rv.offer(unset, Millis{9});
  ASSERT_TRUE(r.ok() && r.value().has_value());
  EXPECT_EQ(r.value()->mode, std::nullopt);  // IncManager::join applies the fabric's default
}

TEST_F(RendezvousTest, DuplicateRanksAndEndpointsAreRefused) {
  ASSERT_TRUE(rv.offer(join_of(0), Millis{0}).ok());
  RankJoin j = join_of(0);
  j.rank.qpn = 0x99;
  auto r = rv.offer(j, Millis{1});
  EXPECT_EQ(r.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(r.error().message,
            "rank 0 of group 'job/dp' of tenant 't' has already joined with endpoint 10.77.0.1 "
            "qpn 0x000011");
  j = join_of(1);
  j.rank.ipv4 = rank_ip(0, 0);
  j.rank.qpn = 0x11;
  r = rv.offer(j, Millis{1});
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message,
            "rank 1 of group 'job/dp' of tenant 't' uses endpoint 10.77.0.1 qpn 0x000011, "
            "already rank 0's");
  r = rv.offer(join_of(3), Millis{1});
  EXPECT_EQ(r.error().message,
            "rank 3 of group 'job/dp' of tenant 't' is out of range: the group has 3 ranks (0..2)");
  r = rv.offer(join_of(0, 0), Millis{1});
  EXPECT_EQ(r.error().message,
            "rank 0 of group 'job/dp' of tenant 't': a group has 1..65535 ranks, not 0");
}

TEST_F(RendezvousTest, AnIncompleteRendezvousExpiresNamingTheMissingRanks) {
  ASSERT_TRUE(rv.offer(join_of(1), Millis{1000}).ok());
  EXPECT_TRUE(rv.expire(Millis{30'999}).empty());
  auto gone = rv.expire(Millis{31'000});
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].tenant, "t");
  EXPECT_EQ(gone[0].group, "job/dp");
  EXPECT_EQ(gone[0].joined, (std::vector<uint32_t>{1}));
  EXPECT_EQ(gone[0].error.code, ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(gone[0].error.message,
            "group 'job/dp' of tenant 't': 1 of 3 ranks joined within 30000 ms; missing rank(s) "
            "0, 2");
  EXPECT_EQ(rv.waiting(), 0u);
}

TEST_F(RendezvousTest, ACompletedRendezvousFeedsAdmission) {
  IncManager m;
  testing::build_fabric(m, {.leaves = 1, .spines = 0, .ranks_per_leaf = 3});
  std::optional<GroupRequest> req;
  for (uint32_t r : {2u, 0u, 1u}) req = rv.offer(join_of(r), Millis{0}).value();
  ASSERT_TRUE(req.has_value());
  auto j = m.join(*req, Millis{0});
  ASSERT_TRUE(j.ok()) << j.error().to_string();
  EXPECT_EQ(m.find_group("t", "job/dp")->request.ranks.size(), 3u);
}

}  // namespace
}  // namespace epic::manager
