// Who sends and who receives each data packet of a collective, and where each
// packet sits in a rank's own send and receive PSN sequences: the facts that
// per-endpoint PSN translation is made of (the "PSN drift" of asymmetric
// primitives is handled here, not assumed away).
//
// Data packets of a collective are numbered j = 0..n-1 in the group PSN space
// (right after its control message). For R ranks, chunk = count elements:
//   AllReduce       every rank sends every j; every rank receives every j
//   Reduce(root)    every rank sends every j; only root receives
//   Broadcast(root) only root sends; every rank but root receives
//   ReduceScatter   R chunks of ppc packets; every rank sends every j; rank q receives chunk q
//   AllGather       R chunks; rank q sends chunk q; every rank but q receives chunk q
//   Barrier         no data
// (ppc = packets per chunk.) Each chunk travels as its own RC message.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "proto/vocab/arith.h"
#include "proto/vocab/collective.h"

namespace epic::vocab {

// The data packets a subtree (a range of ranks) sends or receives in one collective, as an
// interval [lo, hi) of j, or all of 0..n-1 but that interval (`except`). In order: the k-th
// packet of the set is item(k); index(j) is j's position (j must be in the set). A subtree's
// own PSN sequence on a Mode-III hop numbers these (docs/mode3.md).
struct PacketSet {
  uint32_t n = 0;  // data packets of the collective
  uint32_t lo = 0;
  uint32_t hi = 0;
  bool except = false;

  uint32_t count() const { return except ? n - (hi - lo) : hi - lo; }
  bool contains(uint32_t j) const { return j < n && ((j >= lo && j < hi) != except); }
  uint32_t item(uint32_t k) const { return except ? (k < lo ? k : k + (hi - lo)) : lo + k; }
  uint32_t index(uint32_t j) const { return except ? (j < lo ? j : j - (hi - lo)) : j - lo; }
};

struct CollectiveShape {
  CollectiveDescriptor desc;
  uint16_t ranks = 0;
  uint16_t pmtu = 0;
  uint32_t chunk_packets = 0;  // ppc: packets of one chunk (or of the whole buffer)
  uint32_t chunk_bytes = 0;
  uint32_t n_data = 0;  // data packets in the group PSN space

  bool chunked() const {
    return desc.type == CollectiveType::kReduceScatter || desc.type == CollectiveType::kAllGather;
  }
  // More than one rank contributes to packet j (it needs an aggregation slot).
  bool multi_source() const {
    return desc.type == CollectiveType::kAllReduce || desc.type == CollectiveType::kReduce ||
           desc.type == CollectiveType::kReduceScatter;
  }
  bool sends(uint32_t j, uint16_t rank) const;
  bool receives(uint32_t j, uint16_t rank) const;
  // Packets rank sends / receives in this collective (data only).
  uint32_t send_count(uint16_t rank) const;
  uint32_t recv_count(uint16_t rank) const;
  // k-th packet rank sends / receives -> j.
  uint32_t send_item(uint16_t rank, uint32_t k) const;
  uint32_t recv_item(uint16_t rank, uint32_t k) const;
  // j -> position in rank's send / receive sequence (j must be one it sends / receives).
  uint32_t send_index(uint16_t rank, uint32_t j) const;
  uint32_t recv_index(uint16_t rank, uint32_t j) const;
  // Some rank of [first, first+count) sends / receives packet j (a subtree of a switch).
  bool sends_any(uint16_t first, uint16_t count, uint32_t j) const;
  bool receives_any(uint16_t first, uint16_t count, uint32_t j) const;
  // What ranks [first, first+count) send / receive, in order (send_set(r, 1) is rank r's).
  PacketSet send_set(uint16_t first, uint16_t count) const;
  PacketSet recv_set(uint16_t first, uint16_t count) const;
  // Payload bytes of packet j.
  uint16_t payload_len(uint32_t j) const;
};

CollectiveShape shape_of(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu);

// Why a descriptor cannot run in a group of `ranks` at path MTU `pmtu` (kNone: it can): no
// elements where it needs some (only an AllReduce and a Barrier may be empty), a root that is
// not a rank, or more than kMaxCollectivePackets data packets (limits.h; a chunk of 2^32 bytes
// or more is too large at any MTU). The switch checks every collective it is announced (a
// refused one is drop_bad_control); the rank library before it announces one.
// kArithmetic: a reduction whose accumulator does not fit the slots of the group's arithmetic
// (arith.h collective_fits; e.g. fp8 in a group sized for the default types, or an exact fp32
// sum in a group granted exact fp16).
enum class CollectiveFault : uint8_t { kNone, kNoElements, kRootNotARank, kTooLarge, kArithmetic };
// Without `arith`: the shape only (a rank's runner); with it, also whether a reduction's
// accumulator fits the group's slots (the switch, libinc).
CollectiveFault check_collective(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu);
CollectiveFault check_collective(const CollectiveDescriptor& d, uint16_t ranks, uint16_t pmtu,
                                 const GroupArith& arith);
std::string_view to_string(CollectiveFault f);

}  // namespace epic::vocab
