#include "proto/vocab/collective_map.h"

#include <gtest/gtest.h>

namespace epic::vocab {
namespace {

// For every primitive and rank: the k-th packet a rank sends/receives maps to a group
// packet it sends/receives, back and forth, in increasing group order; and every group
// packet has the senders and receivers the primitive defines.
TEST(CollectiveMap, SendAndReceiveSequencesAreConsistentForEveryPrimitive) {
  for (int t = 1; t <= 6; ++t) {
    for (uint16_t ranks : {1, 2, 5}) {
      CollectiveDescriptor d{static_cast<CollectiveType>(t), vocab::DType::kFp32,
                             vocab::ReduceOp::kSum, static_cast<uint16_t>(ranks - 1), 300};
      const CollectiveShape s = shape_of(d, ranks, 256);
      SCOPED_TRACE(std::string(to_string(d.type)) + " ranks " + std::to_string(ranks));
      for (uint16_t r = 0; r < ranks; ++r) {
        uint32_t sends = 0, recvs = 0;
        for (uint32_t j = 0; j < s.n_data; ++j) {
          if (s.sends(j, r)) {
            EXPECT_EQ(s.send_item(r, s.send_index(r, j)), j);
            EXPECT_EQ(s.send_index(r, j), sends);  // increasing, no gaps
            ++sends;
          }
          if (s.receives(j, r)) {
            EXPECT_EQ(s.recv_item(r, s.recv_index(r, j)), j);
            EXPECT_EQ(s.recv_index(r, j), recvs);
            ++recvs;
          }
          EXPECT_EQ(s.sends_any(r, 1, j), s.sends(j, r));
          EXPECT_EQ(s.receives_any(r, 1, j), s.receives(j, r));
        }
        EXPECT_EQ(s.send_count(r), sends);
        EXPECT_EQ(s.recv_count(r), recvs);
      }
      // A subtree sends/receives j iff one of its ranks does.
      for (uint32_t j = 0; j < s.n_data; ++j) {
        bool any_send = false, any_recv = false;
        for (uint16_t r = 0; r < ranks; ++r) {
          any_send |= s.sends(j, r);
          any_recv |= s.receives(j, r);
        }
        EXPECT_EQ(s.sends_any(0, ranks, j), any_send);
        EXPECT_EQ(s.receives_any(0, ranks, j), any_recv);
      }
    }
  }
}

TEST(CollectiveMap, PacketCountsAndLengths) {
  const CollectiveDescriptor rs{CollectiveType::kReduceScatter, vocab::DType::kBf16,
                                vocab::ReduceOp::kMax, 0,
                                300};  // 600 bytes per chunk: 3 packets of 256, 256, 88
  const CollectiveShape s = shape_of(rs, 4, 256);
  EXPECT_EQ(s.chunk_packets, 3u);
  EXPECT_EQ(s.n_data, 12u);
  EXPECT_EQ(s.payload_len(0), 256);
  EXPECT_EQ(s.payload_len(2), 88);
  EXPECT_EQ(s.payload_len(5), 88);
  EXPECT_TRUE(s.multi_source());
  EXPECT_EQ(shape_of({CollectiveType::kBarrier}, 4, 256).n_data, 0u);
  const CollectiveShape ag = shape_of(
      {CollectiveType::kAllGather, vocab::DType::kInt32, vocab::ReduceOp::kSum, 0, 64}, 3, 256);
  EXPECT_FALSE(ag.multi_source());
  EXPECT_EQ(ag.recv_count(1), 2u);  // chunks 0 and 2
  EXPECT_EQ(ag.recv_item(1, 1), 2u);
}

TEST(CollectiveMap, ControlMessageRoundTripsAndRejectsGarbage) {
  const CollectiveDescriptor d{CollectiveType::kReduce, vocab::DType::kFp16, vocab::ReduceOp::kMin,
                               7, 123456};
  uint8_t buf[kControlPayloadBytes];
  encode_control(d, buf);
  EXPECT_EQ(*decode_control(buf, sizeof buf), d);
  EXPECT_FALSE(decode_control(buf, sizeof buf - 1));
  buf[0] ^= 1;
  EXPECT_FALSE(decode_control(buf, sizeof buf));
  buf[0] ^= 1;
  buf[4] = 9;  // no such collective
  EXPECT_FALSE(decode_control(buf, sizeof buf));
}

}  // namespace
}  // namespace epic::vocab
