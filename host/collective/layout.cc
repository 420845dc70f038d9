#include "host/collective/layout.h"

#include "datapath/arith/dtype.h"

namespace epic::host {

namespace {

size_t chunk(const engine::CollectiveDescriptor& d) {
  return size_t{d.count} * arith::wire_bytes(d.dtype);
}

}  // namespace

size_t send_bytes(const engine::CollectiveDescriptor& d, uint16_t ranks) {
  switch (d.type) {
    case engine::CollectiveType::kReduceScatter:
      return chunk(d) * ranks;
    case engine::CollectiveType::kBarrier:
      return 0;
    default:
      return chunk(d);
  }
}

size_t recv_bytes(const engine::CollectiveDescriptor& d, uint16_t rank, uint16_t ranks) {
  switch (d.type) {
    case engine::CollectiveType::kReduce:
      return rank == d.root ? chunk(d) : 0;
    case engine::CollectiveType::kAllGather:
      return chunk(d) * ranks;
    case engine::CollectiveType::kBarrier:
      return 0;
    default:
      return chunk(d);
  }
}

}  // namespace epic::host
