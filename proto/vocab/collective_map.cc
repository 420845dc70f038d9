#include "proto/vocab/collective_map.h"

#include "proto/vocab/limits.h"

namespace epic::vocab {

CollectiveShape shape_of(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu) {
  CollectiveShape s;
  s.desc = d;
  s.ranks = ranks;
  s.pmtu = pmtu;
  if (d.type == CollectiveType::kBarrier) return s;
  s.chunk_bytes = static_cast<uint32_t>(uint64_t{d.count} * wire_bytes(d.dtype));
  s.chunk_packets = (s.chunk_bytes + pmtu - 1) / pmtu;
  s.n_data = s.chunked() ? s.chunk_packets * ranks : s.chunk_packets;
  return s;
}

namespace {

CollectiveFault check(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu,
                      const GroupArith* arith) {
  if (d.type == CollectiveType::kBarrier) return CollectiveFault::kNone;
  if (d.count == 0 && d.type != CollectiveType::kAllReduce) return CollectiveFault::kNoElements;
  if ((d.type == CollectiveType::kReduce || d.type == CollectiveType::kBroadcast) &&
      d.root >= ranks) {
    return CollectiveFault::kRootNotARank;
  }
  // In 64 bits: shape_of's 32-bit fields are only meaningful for a collective that fits.
  const uint64_t chunk_bytes = uint64_t{d.count} * wire_bytes(d.dtype);
  const uint64_t unit = pmtu == 0 ? 1 : pmtu;  // a path MTU of 0 is no MTU: the worst case
  const uint64_t chunk_packets = (chunk_bytes + unit - 1) / unit;
  const bool chunked =
      d.type == CollectiveType::kReduceScatter || d.type == CollectiveType::kAllGather;
  const uint64_t n_data = chunked ? chunk_packets * ranks : chunk_packets;
  if (chunk_bytes > UINT32_MAX || n_data > kMaxCollectivePackets) return CollectiveFault::kTooLarge;
  // Only reductions accumulate (Broadcast and AllGather copy; an empty AllReduce has no data).
  const bool reduces = d.type == CollectiveType::kReduce ||
                       d.type == CollectiveType::kReduceScatter ||
                       (d.type == CollectiveType::kAllReduce && d.count > 0);
  if (arith && reduces && pmtu != 0 && !collective_fits(pmtu, *arith, ranks, d.dtype, d.op)) {
    return CollectiveFault::kArithmetic;
  }
  return CollectiveFault::kNone;
}

}  // namespace

CollectiveFault check_collective(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu) {
  return check(d, ranks, pmtu, nullptr);
}

CollectiveFault check_collective(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu,
                                 const GroupArith& arith) {
  return check(d, ranks, pmtu, &arith);
}

std::string_view to_string(CollectiveFault f) {
  switch (f) {
    case CollectiveFault::kNone:
      return "runnable";
    case CollectiveFault::kNoElements:
      return "no elements (only an AllReduce or a Barrier may be empty)";
    case CollectiveFault::kRootNotARank:
      return "the root is not a rank of the group";
    case CollectiveFault::kTooLarge:
      return "more data packets than a collective may have (vocab::kMaxCollectivePackets = 2^22)";
    case CollectiveFault::kArithmetic:
      return "its accumulator does not fit the slots of the group's arithmetic (accumulator "
             "profile and dtype, docs/arithmetic.md)";
  }
  return "invalid";
}

bool CollectiveShape::sends(uint32_t j, uint16_t rank) const {
  switch (desc.type) {
    case CollectiveType::kBroadcast:
      return rank == desc.root;
    case CollectiveType::kAllGather:
      return j / chunk_packets == rank;
    case CollectiveType::kBarrier:
      return false;
    default:
      return true;
  }
}

bool CollectiveShape::receives(uint32_t j, uint16_t rank) const {
  switch (desc.type) {
    case CollectiveType::kAllReduce:
      return true;
    case CollectiveType::kReduce:
      return rank == desc.root;
    case CollectiveType::kBroadcast:
      return rank != desc.root;
    case CollectiveType::kReduceScatter:
      return j / chunk_packets == rank;
    case CollectiveType::kAllGather:
      return j / chunk_packets != rank;
    case CollectiveType::kBarrier:
      return false;
  }
  return false;
}

bool CollectiveShape::sends_any(uint16_t first, uint16_t count, uint32_t j) const {
  const auto in = [&](uint32_t r) { return r >= first && r < uint32_t{first} + count; };
  switch (desc.type) {
    case CollectiveType::kBroadcast:
      return in(desc.root);
    case CollectiveType::kAllGather:
      return in(j / chunk_packets);
    case CollectiveType::kBarrier:
      return false;
    default:
      return count > 0;
  }
}

bool CollectiveShape::receives_any(uint16_t first, uint16_t count, uint32_t j) const {
  const auto in = [&](uint32_t r) { return r >= first && r < uint32_t{first} + count; };
  switch (desc.type) {
    case CollectiveType::kAllReduce:
      return count > 0;
    case CollectiveType::kReduce:
      return in(desc.root);
    case CollectiveType::kBroadcast:
      return count > 1 || (count == 1 && first != desc.root);
    case CollectiveType::kReduceScatter:
      return in(j / chunk_packets);
    case CollectiveType::kAllGather:
      return count > 1 || (count == 1 && first != j / chunk_packets);
    case CollectiveType::kBarrier:
      return false;
  }
  return false;
}

PacketSet CollectiveShape::send_set(uint16_t first, uint16_t count) const {
  const uint32_t end = uint32_t{first} + count;
  const bool has_root = desc.root >= first && desc.root < end;
  PacketSet set{n_data, 0, 0, false};
  if (count == 0) return set;
  switch (desc.type) {
    case CollectiveType::kBarrier:
      return set;
    case CollectiveType::kBroadcast:
      set.hi = has_root ? n_data : 0;
      return set;
    case CollectiveType::kAllGather:
      set.lo = first * chunk_packets;
      set.hi = end * chunk_packets;
      return set;
    default:
      set.hi = n_data;
      return set;
  }
}

PacketSet CollectiveShape::recv_set(uint16_t first, uint16_t count) const {
  const uint32_t end = uint32_t{first} + count;
  const bool has_root = desc.root >= first && desc.root < end;
  PacketSet set{n_data, 0, 0, false};
  if (count == 0) return set;
  switch (desc.type) {
    case CollectiveType::kAllReduce:
      set.hi = n_data;
      return set;
    case CollectiveType::kReduce:
      set.hi = has_root ? n_data : 0;
      return set;
    case CollectiveType::kBroadcast:
      set.hi = count > 1 || first != desc.root ? n_data : 0;
      return set;
    case CollectiveType::kReduceScatter:
      set.lo = first * chunk_packets;
      set.hi = end * chunk_packets;
      return set;
    case CollectiveType::kAllGather:
      if (count > 1) {
        set.hi = n_data;
      } else {
        set.lo = first * chunk_packets;
        set.hi = end * chunk_packets;
        set.except = true;
      }
      return set;
    case CollectiveType::kBarrier:
      return set;
  }
  return set;
}

uint32_t CollectiveShape::send_count(uint16_t rank) const {
  switch (desc.type) {
    case CollectiveType::kBroadcast:
      return rank == desc.root ? n_data : 0;
    case CollectiveType::kAllGather:
      return chunk_packets;
    default:
      return n_data;
  }
}

uint32_t CollectiveShape::recv_count(uint16_t rank) const {
  switch (desc.type) {
    case CollectiveType::kAllReduce:
      return n_data;
    case CollectiveType::kReduce:
      return rank == desc.root ? n_data : 0;
    case CollectiveType::kBroadcast:
      return rank == desc.root ? 0 : n_data;
    case CollectiveType::kReduceScatter:
      return chunk_packets;
    case CollectiveType::kAllGather:
      return n_data - chunk_packets;
    case CollectiveType::kBarrier:
      return 0;
  }
  return 0;
}

uint32_t CollectiveShape::send_item(uint16_t rank, uint32_t k) const {
  return desc.type == CollectiveType::kAllGather ? rank * chunk_packets + k : k;
}

uint32_t CollectiveShape::recv_item(uint16_t rank, uint32_t k) const {
  switch (desc.type) {
    case CollectiveType::kReduceScatter:
      return rank * chunk_packets + k;
    case CollectiveType::kAllGather:
      return k < rank * chunk_packets ? k : k + chunk_packets;
    default:
      return k;
  }
}

uint32_t CollectiveShape::send_index(uint16_t rank, uint32_t j) const {
  return desc.type == CollectiveType::kAllGather ? j - rank * chunk_packets : j;
}

uint32_t CollectiveShape::recv_index(uint16_t rank, uint32_t j) const {
  switch (desc.type) {
    case CollectiveType::kReduceScatter:
      return j - rank * chunk_packets;
    case CollectiveType::kAllGather:
      return j < rank * chunk_packets ? j : j - chunk_packets;
    default:
      return j;
  }
}

uint16_t CollectiveShape::payload_len(uint32_t j) const {
  const uint32_t k = chunked() ? j % chunk_packets : j;
  const uint32_t rest = chunk_bytes - k * pmtu;
  return static_cast<uint16_t>(rest < pmtu ? rest : pmtu);
}

}  // namespace epic::vocab
