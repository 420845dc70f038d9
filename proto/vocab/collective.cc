#include "proto/vocab/collective.h"

#include <cstring>

namespace epic::vocab {

std::string_view to_string(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
      return "allreduce";
    case CollectiveType::kReduce:
      return "reduce";
    case CollectiveType::kBroadcast:
      return "broadcast";
    case CollectiveType::kBarrier:
      return "barrier";
    case CollectiveType::kReduceScatter:
      return "reduce_scatter";
    case CollectiveType::kAllGather:
      return "allgather";
  }
  return "invalid";
}

void encode_control(const CollectiveDescriptor& d, uint8_t out[kControlPayloadBytes]) {
  std::memset(out, 0, kControlPayloadBytes);
  std::memcpy(out, &kControlMagic, 4);
  out[4] = static_cast<uint8_t>(d.type);
  out[5] = static_cast<uint8_t>(d.dtype);
  out[6] = static_cast<uint8_t>(d.op);
  std::memcpy(out + 8, &d.root, 2);
  std::memcpy(out + 12, &d.count, 4);
}

std::optional<CollectiveDescriptor> decode_control(const uint8_t* p, size_t len) {
  if (len != kControlPayloadBytes) return std::nullopt;
  uint32_t magic;
  std::memcpy(&magic, p, 4);
  if (magic != kControlMagic) return std::nullopt;
  // Codes come from the network: every one is validated before it becomes an enum.
  const auto dtype = dtype_from_code(p[5]);
  const auto op = reduce_op_from_code(p[6]);
  if (p[4] < static_cast<uint8_t>(CollectiveType::kAllReduce) ||
      p[4] > static_cast<uint8_t>(CollectiveType::kAllGather) || !dtype || !op) {
    return std::nullopt;
  }
  CollectiveDescriptor d;
  d.type = static_cast<CollectiveType>(p[4]);
  d.dtype = *dtype;
  d.op = *op;
  std::memcpy(&d.root, p + 8, 2);
  std::memcpy(&d.count, p + 12, 4);
  return d;
}

}  // namespace epic::vocab
