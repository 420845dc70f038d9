#include "host/fallback/ring_math.h"

#include <gtest/gtest.h>

namespace epic::host::fallback {
namespace {

TEST(RingMath, OddCountGivesTheFirstChunksOneElementMore) {
  EXPECT_EQ(chunk_of(10, 3, 0), (ChunkSpan{0, 4}));
  EXPECT_EQ(chunk_of(10, 3, 1), (ChunkSpan{4, 3}));
  EXPECT_EQ(chunk_of(10, 3, 2), (ChunkSpan{7, 3}));
}

TEST(RingMath, CountBelowRanksLeavesTheLastChunksEmpty) {
  EXPECT_EQ(chunk_of(2, 4, 0), (ChunkSpan{0, 1}));
  EXPECT_EQ(chunk_of(2, 4, 1), (ChunkSpan{1, 1}));
  EXPECT_EQ(chunk_of(2, 4, 2), (ChunkSpan{2, 0}));
  EXPECT_EQ(chunk_of(2, 4, 3), (ChunkSpan{2, 0}));
  EXPECT_EQ(chunk_of(0, 3, 1), (ChunkSpan{0, 0}));
}

TEST(RingMath, ChunksTileTheBufferForEveryCountAndRankCount) {
  for (uint16_t ranks = 1; ranks <= 9; ++ranks) {
    for (size_t count = 0; count <= 40; ++count) {
      size_t next = 0;
      for (uint16_t q = 0; q < ranks; ++q) {
        const ChunkSpan c = chunk_of(count, ranks, q);
        EXPECT_EQ(c.offset, next) << count << "/" << ranks << " chunk " << q;
        EXPECT_LE(c.n, count / ranks + 1);
        next += c.n;
      }
      EXPECT_EQ(next, count) << count << "/" << ranks;
    }
  }
}

TEST(RingMath, SingleRankOwnsTheWholeBuffer) {
  EXPECT_EQ(chunk_of(7, 1, 0), (ChunkSpan{0, 7}));
  EXPECT_EQ(ring_order(1, 0), (std::vector<uint16_t>{0}));
}

TEST(RingMath, EachStepReceivesWhatTheLeftNeighbourSends) {
  for (uint16_t ranks = 2; ranks <= 7; ++ranks) {
    for (uint16_t r = 0; r < ranks; ++r) {
      const auto left = static_cast<uint16_t>((r + ranks - 1) % ranks);
      for (uint32_t s = 0; s + 1 < ranks; ++s) {
        EXPECT_EQ(rs_recv_chunk(r, ranks, s), rs_send_chunk(left, ranks, s));
        EXPECT_EQ(ag_recv_chunk(r, ranks, s), ag_send_chunk(left, ranks, s));
        // what a rank sends at step s + 1 is what it received (and combined) at step s
        if (s + 2 < ranks) {
          EXPECT_EQ(rs_send_chunk(r, ranks, s + 1), rs_recv_chunk(r, ranks, s));
        }
      }
      EXPECT_EQ(rs_recv_chunk(r, ranks, ranks - 2u), r) << "rank r ends with chunk r";
      EXPECT_EQ(ag_send_chunk(r, ranks, 0), r) << "allgather starts from the own chunk";
    }
  }
}

TEST(RingMath, ReductionOrderStartsRightOfTheOwnerAndEndsAtIt) {
  EXPECT_EQ(ring_order(4, 1), (std::vector<uint16_t>{2, 3, 0, 1}));
  EXPECT_EQ(ring_order(3, 2), (std::vector<uint16_t>{0, 1, 2}));
  EXPECT_EQ(ring_order(2, 0), (std::vector<uint16_t>{1, 0}));
  // the order follows the reduce-scatter: q+1 loads chunk q at step 0
  for (uint16_t ranks = 2; ranks <= 6; ++ranks) {
    for (uint16_t q = 0; q < ranks; ++q) {
      const auto order = ring_order(ranks, q);
      EXPECT_EQ(rs_send_chunk(order[0], ranks, 0), q);
      for (uint32_t s = 0; s + 1 < ranks; ++s) EXPECT_EQ(rs_recv_chunk(order[s + 1], ranks, s), q);
    }
  }
}

TEST(RingMath, PiecesCoverTheCountInBoundedSteps) {
  const auto p = pieces_of(10, 4);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], (ChunkSpan{0, 4}));
  EXPECT_EQ(p[2], (ChunkSpan{8, 2}));
  EXPECT_TRUE(pieces_of(0, 4).empty());
}

}  // namespace
}  // namespace epic::host::fallback
