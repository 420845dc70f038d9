#include "proto/vocab/collective_map.h"

#include <gtest/gtest.h>

#include "proto/vocab/limits.h"

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

// A subtree's packet sets (its own sequences on a Mode-III hop) hold exactly the packets one
// of its ranks sends/receives (sends_any/receives_any, checked against the ranks above), in
// group order; for one rank they are that rank's sequences.
TEST(CollectiveMap, SubtreePacketSetsAreTheirRanksPacketsInOrder) {
  for (int t = 1; t <= 6; ++t) {
    for (uint16_t ranks : {1, 2, 3, 5}) {
      for (uint16_t root = 0; root < ranks; ++root) {
        CollectiveDescriptor d{static_cast<CollectiveType>(t), vocab::DType::kFp32,
                               vocab::ReduceOp::kSum, root, 150};
        const CollectiveShape s = shape_of(d, ranks, 256);
        for (uint16_t first = 0; first <= ranks; ++first) {
          for (uint16_t count = 0; first + count <= ranks; ++count) {
            SCOPED_TRACE(std::string(to_string(d.type)) + " ranks " + std::to_string(ranks) +
                         " root " + std::to_string(root) + " subtree " + std::to_string(first) +
                         "+" + std::to_string(count));
            const PacketSet send = s.send_set(first, count);
            const PacketSet recv = s.recv_set(first, count);
            uint32_t sends = 0, recvs = 0;
            for (uint32_t j = 0; j < s.n_data; ++j) {
              ASSERT_EQ(send.contains(j), s.sends_any(first, count, j)) << "j " << j;
              ASSERT_EQ(recv.contains(j), s.receives_any(first, count, j)) << "j " << j;
              if (send.contains(j)) {
                EXPECT_EQ(send.index(j), sends);
                EXPECT_EQ(send.item(sends), j);
                if (count == 1) {
                  EXPECT_EQ(s.send_index(first, j), sends);
                }
                ++sends;
              }
              if (recv.contains(j)) {
                EXPECT_EQ(recv.index(j), recvs);
                EXPECT_EQ(recv.item(recvs), j);
                if (count == 1) {
                  EXPECT_EQ(s.recv_index(first, j), recvs);
                }
                ++recvs;
              }
            }
            EXPECT_FALSE(send.contains(s.n_data));
            EXPECT_EQ(send.count(), sends);
            EXPECT_EQ(recv.count(), recvs);
            if (count == 1) {
              EXPECT_EQ(s.send_count(first), sends);
              EXPECT_EQ(s.recv_count(first), recvs);
            }
          }
        }
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

// What a group may run: the numbers below are worked by hand from the limit (2^22 data packets)
// and the element sizes (fp32 4 bytes, bf16 2), not from the functions under test.
TEST(CollectiveMap, CheckCollectiveRefusesWhatCannotRun) {
  using F = CollectiveFault;
  const auto d = [](CollectiveType t, DType dt, uint32_t count, uint16_t root = 0) {
    return CollectiveDescriptor{t, dt, ReduceOp::kSum, root, count};
  };
  // 2^22 packets of 256 bytes = 2^28 fp32 elements: the largest AllReduce at MTU 256.
  EXPECT_EQ(check_collective(d(CollectiveType::kAllReduce, DType::kFp32, 1u << 28), 8, 256),
            F::kNone);
  EXPECT_EQ(check_collective(d(CollectiveType::kAllReduce, DType::kFp32, (1u << 28) + 1), 8, 256),
            F::kTooLarge);  // one element more is one packet more
  // At MTU 4096 the same 2^28 elements are 2^18 packets; 2^30 fp32 would be 2^20 packets, but
  // 2^32 bytes do not fit a chunk's 32-bit length.
  EXPECT_EQ(check_collective(d(CollectiveType::kReduce, DType::kFp32, 1u << 28), 8, 4096),
            F::kNone);
  EXPECT_EQ(check_collective(d(CollectiveType::kReduce, DType::kFp32, 1u << 30), 8, 4096),
            F::kTooLarge);
  // ReduceScatter/AllGather: ranks x packets per chunk. 1024 ranks x 4096 packets = 2^22.
  const uint32_t per_chunk = 4096 * 1024 / 2;  // bf16 elements in 4096 packets of 1024 bytes
  EXPECT_EQ(check_collective(d(CollectiveType::kAllGather, DType::kBf16, per_chunk), 1024, 1024),
            F::kNone);
  EXPECT_EQ(check_collective(d(CollectiveType::kAllGather, DType::kBf16, per_chunk), 1025, 1024),
            F::kTooLarge);
  EXPECT_EQ(
      check_collective(d(CollectiveType::kReduceScatter, DType::kBf16, per_chunk + 1), 1024, 1024),
      F::kTooLarge);  // a chunk rounds up to 4097 packets
  // Empty collectives: only AllReduce and Barrier.
  EXPECT_EQ(check_collective(d(CollectiveType::kAllReduce, DType::kFp32, 0), 4, 1024), F::kNone);
  EXPECT_EQ(check_collective(d(CollectiveType::kBarrier, DType::kFp32, 0), 4, 1024), F::kNone);
  for (CollectiveType t : {CollectiveType::kReduce, CollectiveType::kBroadcast,
                           CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
    EXPECT_EQ(check_collective(d(t, DType::kFp32, 0), 4, 1024), F::kNoElements) << to_string(t);
  }
  // Roots: Reduce and Broadcast only, and below the group's size.
  EXPECT_EQ(check_collective(d(CollectiveType::kBroadcast, DType::kFp32, 1, 3), 4, 1024), F::kNone);
  EXPECT_EQ(check_collective(d(CollectiveType::kBroadcast, DType::kFp32, 1, 4), 4, 1024),
            F::kRootNotARank);
  EXPECT_EQ(check_collective(d(CollectiveType::kReduce, DType::kFp32, 1, 65535), 4, 1024),
            F::kRootNotARank);
  EXPECT_EQ(check_collective(d(CollectiveType::kAllReduce, DType::kFp32, 1, 9), 4, 1024), F::kNone);
  EXPECT_NE(to_string(F::kTooLarge).find("2^22"), std::string_view::npos);
}

// libinc's split size keeps every collective within the packet limit at any MTU and group size.
TEST(CollectiveMap, TheLargestBufferLibincMovesFitsAtAnyMtu) {
  for (uint16_t pmtu : {256, 4096}) {
    for (uint16_t ranks : {uint16_t{1}, uint16_t{1000}, uint16_t{65535}}) {
      const auto all = static_cast<uint32_t>(kMaxCollectiveBytes / 2);  // bf16 elements
      EXPECT_EQ(check_collective({CollectiveType::kAllReduce, DType::kBf16, ReduceOp::kSum, 0, all},
                                 ranks, pmtu),
                CollectiveFault::kNone);
      // ReduceScatter: the whole input is ranks chunks, each rounded up to whole packets.
      const uint32_t chunk = all / ranks;
      EXPECT_EQ(
          check_collective({CollectiveType::kReduceScatter, DType::kBf16, ReduceOp::kSum, 0, chunk},
                           ranks, pmtu),
          CollectiveFault::kNone)
          << pmtu << " " << ranks;
    }
  }
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
