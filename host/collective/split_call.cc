#include "host/collective/split_call.h"

#include <algorithm>
#include <cstring>

namespace epic::host {

using vocab::CollectiveType;

void SplitCall::finish() const {
  if (gather_to == nullptr || pieces.empty()) return;
  const size_t esz = vocab::wire_bytes(pieces.front().desc.dtype);
  for (const CollectivePiece& p : pieces) {
    const uint8_t* block = recv_staging.data() + size_t{ranks} * p.first * esz;
    for (uint16_t q = 0; q < ranks; ++q) {
      std::memcpy(gather_to + q * gather_count_bytes + p.first * esz, block + q * p.n * esz,
                  p.n * esz);
    }
  }
}

SplitCall split_call(const vocab::CollectiveDescriptor& call, uint16_t rank, uint16_t ranks,
                     const uint8_t* send, uint8_t* recv, size_t piece) {
  SplitCall out;
  out.ranks = ranks;
  const CollectiveType type = call.type;
  if (type == CollectiveType::kBarrier) {
    out.pieces.push_back({call, nullptr, 0, nullptr, 0, 0, 0});
    return out;
  }
  const size_t count = call.count;
  const size_t esz = vocab::wire_bytes(call.dtype);
  const size_t R = ranks;
  piece = std::max<size_t>(piece, 1);
  const bool split = count > piece;
  const bool rooted = type == CollectiveType::kReduce || type == CollectiveType::kBroadcast;
  const bool root = rooted && rank == call.root;
  if (split && type == CollectiveType::kReduceScatter) out.send_staging.resize(R * count * esz);
  if (split && type == CollectiveType::kAllGather) {
    out.recv_staging.resize(R * count * esz);
    out.gather_to = recv;
    out.gather_count_bytes = count * esz;
  }
  size_t a = 0;
  do {  // a call of 0 elements is one piece of 0
    const size_t n = std::min(piece, count - a);
    CollectivePiece p;
    p.desc = call;
    p.desc.count = static_cast<uint32_t>(n);
    p.first = a;
    p.n = n;
    const size_t off = a * esz, len = n * esz;
    switch (type) {
      case CollectiveType::kAllReduce:
        p.send = send + off, p.send_len = len, p.recv = recv + off, p.recv_len = len;
        break;
      case CollectiveType::kReduce:
        p.send = send + off, p.send_len = len;
        if (root) p.recv = recv + off, p.recv_len = len;
        break;
      case CollectiveType::kBroadcast:
        if (root) p.send = send + off, p.send_len = len;  // libinc passes its buffer as both
        p.recv = recv + off, p.recv_len = len;
        break;
      case CollectiveType::kReduceScatter:
        if (split) {
          uint8_t* block = out.send_staging.data() + R * off;
          for (size_t q = 0; q < R; ++q)
            std::memcpy(block + q * len, send + q * count * esz + off, len);
          p.send = block;
        } else {
          p.send = send;
        }
        p.send_len = R * len, p.recv = recv + off, p.recv_len = len;
        break;
      case CollectiveType::kAllGather:
        p.send = send + off, p.send_len = len;
        p.recv = split ? out.recv_staging.data() + R * off : recv, p.recv_len = R * len;
        break;
      case CollectiveType::kBarrier:
        break;
    }
    out.pieces.push_back(p);
    a += piece;
  } while (a < count);
  return out;
}

}  // namespace epic::host
