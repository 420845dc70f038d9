#include "host/collective/expected.h"

#include <algorithm>

#include "datapath/arith/accumulate.h"
#include "datapath/arith/kulisch.h"
#include "host/collective/layout.h"

namespace epic::host {

std::vector<uint8_t> reduce_reference(const vocab::CollectiveDescriptor& d,
                                      const std::vector<std::vector<uint8_t>>& inputs,
                                      size_t offset, size_t n, const vocab::GroupArith& arith) {
  std::vector<uint8_t> out(n * vocab::wire_bytes(d.dtype));
  if (n == 0 || inputs.empty()) return out;
  if (vocab::uses_kulisch(arith.profile, d.dtype, d.op)) {
    // Exact: the sum rounded once, whatever the order (datapath/arith/kulisch.h).
    const auto R = static_cast<uint32_t>(inputs.size());
    std::vector<uint8_t> acc(arith::kulisch::accum_bytes(d.dtype, R, n));
    arith::kulisch::load(d.dtype, R, acc.data(), inputs[0].data() + offset, n);
    for (size_t r = 1; r < inputs.size(); ++r) {
      arith::kulisch::deposit(d.dtype, R, acc.data(), inputs[r].data() + offset, n);
    }
    arith::kulisch::store(d.dtype, R, out.data(), acc.data(), n);
    return out;
  }
  std::vector<uint8_t> acc(n * arith::accum_bytes(d.dtype));
  arith::reference::load(d.dtype, acc.data(), inputs[0].data() + offset, n);
  for (size_t r = 1; r < inputs.size(); ++r) {
    arith::reference::combine(d.dtype, d.op, acc.data(), inputs[r].data() + offset, n);
  }
  arith::reference::store(d.dtype, out.data(), acc.data(), n);
  return out;
}

std::vector<uint8_t> expected_result(const vocab::CollectiveDescriptor& d, uint16_t rank,
                                     const std::vector<std::vector<uint8_t>>& inputs,
                                     const vocab::GroupArith& arith) {
  const auto ranks = static_cast<uint16_t>(inputs.size());
  const size_t chunk = size_t{d.count} * vocab::wire_bytes(d.dtype);
  switch (d.type) {
    case vocab::CollectiveType::kAllReduce:
      return reduce_reference(d, inputs, 0, d.count, arith);
    case vocab::CollectiveType::kReduce:
      return rank == d.root ? reduce_reference(d, inputs, 0, d.count, arith)
                            : std::vector<uint8_t>{};
    case vocab::CollectiveType::kBroadcast:
      return inputs[d.root];
    case vocab::CollectiveType::kReduceScatter:
      return reduce_reference(d, inputs, rank * chunk, d.count, arith);
    case vocab::CollectiveType::kAllGather: {
      std::vector<uint8_t> all;
      all.reserve(recv_bytes(d, rank, ranks));
      for (const auto& in : inputs) all.insert(all.end(), in.begin(), in.end());
      return all;
    }
    case vocab::CollectiveType::kBarrier:
      break;
  }
  return {};
}

std::optional<size_t> first_difference(std::span<const uint8_t> got,
                                       std::span<const uint8_t> want) {
  const auto [g, w] = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
  if (g == got.end() && w == want.end()) return std::nullopt;
  return static_cast<size_t>(g - got.begin());
}

}  // namespace epic::host
