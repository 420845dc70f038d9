#include "host/collective/layout.h"

#include "proto/vocab/dtype.h"

namespace epic::host {

namespace {

size_t chunk(const vocab::CollectiveDescriptor& d) {
  return size_t{d.count} * vocab::wire_bytes(d.dtype);
}

}  // namespace

size_t send_bytes(const vocab::CollectiveDescriptor& d, uint16_t ranks) {
  switch (d.type) {
    case vocab::CollectiveType::kReduceScatter:
      return chunk(d) * ranks;
    case vocab::CollectiveType::kBarrier:
      return 0;
    default:
      return chunk(d);
  }
}

size_t recv_bytes(const vocab::CollectiveDescriptor& d, uint16_t rank, uint16_t ranks) {
  switch (d.type) {
    case vocab::CollectiveType::kReduce:
      return rank == d.root ? chunk(d) : 0;
    case vocab::CollectiveType::kAllGather:
      return chunk(d) * ranks;
    case vocab::CollectiveType::kBarrier:
      return 0;
    default:
      return chunk(d);
  }
}

}  // namespace epic::host
