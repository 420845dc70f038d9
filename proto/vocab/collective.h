// The collective a group runs next, as announced by the ranks' control
// message: an RC SEND-with-Immediate whose immediate is kControlImm and whose
// 16-byte payload is the CollectiveDescriptor below (little-endian). Every
// rank of the group sends the same descriptor at the same group PSN; the
// switch aggregates the control messages like an AllReduce (all must agree)
// and returns the descriptor to every rank, so a Barrier is a control message
// with no data after it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "proto/vocab/dtype.h"

namespace epic::vocab {

enum class CollectiveType : uint8_t {
  kAllReduce = 1,
  kReduce = 2,
  kBroadcast = 3,
  kBarrier = 4,
  kReduceScatter = 5,
  kAllGather = 6,
};
std::string_view to_string(CollectiveType t);

inline constexpr uint32_t kControlImm = 0x45504943;  // "EPIC"
inline constexpr size_t kControlPayloadBytes = 16;
inline constexpr uint32_t kControlMagic = 0x31435045;  // "EPC1" little-endian

struct CollectiveDescriptor {
  CollectiveType type = CollectiveType::kAllReduce;
  DType dtype = DType::kInt32;
  ReduceOp op = ReduceOp::kSum;
  uint16_t root = 0;   // rank index (Reduce, Broadcast)
  uint32_t count = 0;  // elements per rank (AllReduce, Reduce, Broadcast)
  friend bool operator==(const CollectiveDescriptor&, const CollectiveDescriptor&) = default;
};

void encode_control(const CollectiveDescriptor& d, uint8_t out[kControlPayloadBytes]);
std::optional<CollectiveDescriptor> decode_control(const uint8_t* payload, size_t len);

}  // namespace epic::vocab
