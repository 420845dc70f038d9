// piece_elements (host/collective/piece_size.h): libinc's split of a call into collectives keeps
// the whole collective within its byte bound and, for a verbs NIC, every RC message within the
// window: an 80 KB fp32 AllReduce at window 64 and path MTU 1024 (79 packets, the message
// rdma_rxe ranks stalled on under loss) becomes two collectives of at most 64 packets.
#include "host/collective/piece_size.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "proto/vocab/collective_map.h"
#include "proto/vocab/limits.h"

namespace epic::host {
namespace {

using vocab::CollectiveType;

constexpr size_t kNoMessageBound = SIZE_MAX;

TEST(PieceSize, WithoutAMessageBoundTheCollectiveBoundDecides) {
  EXPECT_EQ(piece_elements(CollectiveType::kAllReduce, 4, 8, 64 << 20, kNoMessageBound),
            (64u << 20) / 4);
  // ReduceScatter and AllGather move ranks x piece.
  EXPECT_EQ(piece_elements(CollectiveType::kAllGather, 4, 8, 64 << 20, kNoMessageBound),
            (64u << 20) / 4 / 8);
  // Never above what the switch accepts.
  EXPECT_EQ(piece_elements(CollectiveType::kAllReduce, 1, 2, SIZE_MAX, kNoMessageBound),
            vocab::kMaxCollectiveBytes);
  EXPECT_EQ(piece_elements(CollectiveType::kAllReduce, 4, 2, 1, kNoMessageBound), 1u);
}

TEST(PieceSize, AVerbsMessageStaysWithinTheWindow) {
  const uint32_t window = 64, pmtu = 1024;
  const size_t bound = size_t{window} * pmtu;
  for (const auto type :
       {CollectiveType::kAllReduce, CollectiveType::kReduce, CollectiveType::kBroadcast,
        CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
    for (const size_t esz : {size_t{1}, size_t{2}, size_t{4}}) {
      const size_t piece = piece_elements(type, esz, 4, 64 << 20, bound);
      vocab::CollectiveDescriptor d{type,
                                    esz == 4   ? vocab::DType::kFp32
                                    : esz == 2 ? vocab::DType::kBf16
                                               : vocab::DType::kInt8,
                                    vocab::ReduceOp::kSum, 0, static_cast<uint32_t>(piece)};
      // Every message of the collective (a chunk, or the whole buffer) is <= MW packets.
      const vocab::CollectiveShape s = vocab::shape_of(d, 4, pmtu);
      EXPECT_LE(s.chunk_packets, window) << vocab::to_string(type) << " esz " << esz;
      EXPECT_EQ(piece * esz, bound) << vocab::to_string(type);
    }
  }
  // The 80 KB AllReduce: 20,000 fp32 = 79 packets in one message; split at 16,384 elements.
  EXPECT_EQ(piece_elements(CollectiveType::kAllReduce, 4, 4, 64 << 20, bound), 16384u);
}

}  // namespace
}  // namespace epic::host
