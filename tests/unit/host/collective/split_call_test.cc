// split_call (host/collective/split_call.h): the pieces of a call cover its elements once, in
// order, each a collective of the same primitive; a ReduceScatter piece reads the range of
// every rank's chunk; an AllGather's pieces land, after finish(), where rank q's element j
// belongs (q x count + j) — checked by the meaning of the layout, element by element.
#include "host/collective/split_call.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace epic::host {
namespace {

using vocab::CollectiveDescriptor;
using vocab::CollectiveType;
using vocab::DType;
using vocab::ReduceOp;

constexpr uint16_t kRanks = 3;

CollectiveDescriptor call(CollectiveType t, uint32_t count, uint16_t root = 0) {
  return {t, DType::kInt32, ReduceOp::kSum, root, count};
}

TEST(SplitCall, ContiguousPrimitivesCoverTheCallOnceInOrder) {
  for (CollectiveType t :
       {CollectiveType::kAllReduce, CollectiveType::kReduce, CollectiveType::kBroadcast}) {
    for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, size_t{10}, size_t{64}}) {
      std::vector<uint8_t> send(10 * 4), recv(10 * 4);
      const SplitCall s = split_call(call(t, 10, 1), 1, kRanks, send.data(), recv.data(), piece);
      size_t next = 0;
      for (const CollectivePiece& p : s.pieces) {
        EXPECT_EQ(p.first, next);
        EXPECT_EQ(p.desc.count, p.n);
        EXPECT_EQ(p.desc.type, t);
        EXPECT_EQ(p.desc.root, 1);
        EXPECT_LE(p.n, piece);
        EXPECT_EQ(p.send, send.data() + 4 * p.first);  // rank 1 is the root: it sends
        EXPECT_EQ(p.recv, recv.data() + 4 * p.first);
        EXPECT_EQ(p.send_len, 4 * p.n);
        next += p.n;
      }
      EXPECT_EQ(next, 10u) << "piece " << piece;
      EXPECT_TRUE(s.send_staging.empty() && s.recv_staging.empty());
    }
  }
  // Not the root: a Reduce piece receives nothing, a Broadcast piece sends nothing.
  std::vector<uint8_t> send(40), recv(40);
  for (const auto& p :
       split_call(call(CollectiveType::kReduce, 10, 1), 0, kRanks, send.data(), recv.data(), 4)
           .pieces) {
    EXPECT_EQ(p.recv_len, 0u);
  }
  for (const auto& p :
       split_call(call(CollectiveType::kBroadcast, 10, 1), 0, kRanks, send.data(), recv.data(), 4)
           .pieces) {
    EXPECT_EQ(p.send_len, 0u);
    EXPECT_EQ(p.recv_len, 4 * p.n);
  }
}

TEST(SplitCall, AReduceScatterPieceReadsTheRangeOfEveryRanksChunk) {
  const uint32_t count = 5;  // elements of each rank's chunk
  std::vector<int32_t> send(kRanks * count);
  for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<int32_t>(100 + i);
  std::vector<int32_t> recv(count);
  const SplitCall s = split_call(call(CollectiveType::kReduceScatter, count), 0, kRanks,
                                 reinterpret_cast<const uint8_t*>(send.data()),
                                 reinterpret_cast<uint8_t*>(recv.data()), 2);
  ASSERT_EQ(s.pieces.size(), 3u);  // 2 + 2 + 1
  for (const CollectivePiece& p : s.pieces) {
    ASSERT_EQ(p.send_len, kRanks * p.n * 4);
    std::vector<int32_t> in(kRanks * p.n);
    std::memcpy(in.data(), p.send, p.send_len);
    for (size_t q = 0; q < kRanks; ++q) {
      for (size_t j = 0; j < p.n; ++j) {
        EXPECT_EQ(in[q * p.n + j], send[q * count + p.first + j]) << "rank chunk " << q;
      }
    }
    EXPECT_EQ(p.recv, reinterpret_cast<uint8_t*>(recv.data() + p.first));
  }
}

TEST(SplitCall, AnAllGathersPiecesLandWhereEachRanksElementsBelong) {
  const uint32_t count = 7;
  std::vector<int32_t> send(count), result(kRanks * count, -1);
  const SplitCall s = split_call(call(CollectiveType::kAllGather, count), 2, kRanks,
                                 reinterpret_cast<const uint8_t*>(send.data()),
                                 reinterpret_cast<uint8_t*>(result.data()), 3);
  ASSERT_EQ(s.pieces.size(), 3u);
  // What each piece's AllGather returns: every rank's elements [first, first + n), rank-major.
  for (const CollectivePiece& p : s.pieces) {
    ASSERT_EQ(p.recv_len, kRanks * p.n * 4);
    std::vector<int32_t> out(kRanks * p.n);
    for (size_t q = 0; q < kRanks; ++q) {
      for (size_t j = 0; j < p.n; ++j)
        out[q * p.n + j] = static_cast<int32_t>(1000 * q + p.first + j);
    }
    std::memcpy(p.recv, out.data(), p.recv_len);
  }
  s.finish();
  for (size_t q = 0; q < kRanks; ++q) {
    for (size_t j = 0; j < count; ++j) EXPECT_EQ(result[q * count + j], 1000 * q + j);
  }
}

TEST(SplitCall, UnsplitCallsAndBarriersAreOnePieceOnTheCallersBuffers) {
  std::vector<uint8_t> send(kRanks * 16 * 4), recv(kRanks * 16 * 4);
  const SplitCall ag =
      split_call(call(CollectiveType::kAllGather, 16), 0, kRanks, send.data(), recv.data(), 16);
  ASSERT_EQ(ag.pieces.size(), 1u);
  EXPECT_EQ(ag.pieces[0].recv, recv.data());
  EXPECT_EQ(ag.gather_to, nullptr);
  const SplitCall b = split_call(call(CollectiveType::kBarrier, 0), 0, kRanks, nullptr, nullptr, 1);
  ASSERT_EQ(b.pieces.size(), 1u);
  EXPECT_EQ(b.pieces[0].send_len + b.pieces[0].recv_len, 0u);
}

}  // namespace
}  // namespace epic::host
