// Sizes, offsets and constants of the headers a RoCEv2 packet is made of:
// Ethernet [802.1Q] / IPv4 | IPv6 / UDP 4791 / BTH / extension headers /
// payload / pad / ICRC. Offsets are relative to the start of their header.
// See docs/wire.md for the field pictures.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proto/vocab/limits.h"

namespace epic::wire {

inline constexpr uint16_t kRoceV2Port = 4791;

namespace eth {
inline constexpr size_t kHeaderLen = 14;
inline constexpr size_t kVlanTagLen = 4;
inline constexpr size_t kDst = 0, kSrc = 6, kType = 12;
inline constexpr uint16_t kTypeIpv4 = 0x0800;
inline constexpr uint16_t kTypeIpv6 = 0x86DD;
inline constexpr uint16_t kTypeVlan = 0x8100;
inline constexpr uint16_t kTypeArp = 0x0806;
}  // namespace eth

namespace ipv4 {
inline constexpr size_t kHeaderLen = 20;  // options are rejected
inline constexpr size_t kVerIhl = 0, kTos = 1, kTotalLen = 2, kId = 4, kFlagsFrag = 6, kTtl = 8,
                        kProto = 9, kChecksum = 10, kSrc = 12, kDst = 16;
inline constexpr uint16_t kFlagDf = 0x4000, kFlagMf = 0x2000, kFragOffsetMask = 0x1FFF;
inline constexpr uint8_t kProtoUdp = 17;
}  // namespace ipv4

namespace ipv6 {
inline constexpr size_t kHeaderLen = 40;  // extension headers are rejected
inline constexpr size_t kVerTcFlow = 0, kPayloadLen = 4, kNextHeader = 6, kHopLimit = 7, kSrc = 8,
                        kDst = 24;
inline constexpr uint8_t kNextHeaderUdp = 17;
}  // namespace ipv6

namespace udp {
inline constexpr size_t kHeaderLen = 8;
inline constexpr size_t kSrcPort = 0, kDstPort = 2, kLength = 4, kChecksum = 6;
}  // namespace udp

// Base Transport Header (IBA 9.2).
namespace bth {
inline constexpr size_t kHeaderLen = 12;
inline constexpr size_t kOpcode = 0;
inline constexpr size_t kFlags = 1;  // SE(7) M(6) PadCnt(5:4) TVer(3:0)
inline constexpr size_t kPkey = 2;
inline constexpr size_t kFecnBecn = 4;  // FECN(7) BECN(6) reserved(5:0)
inline constexpr size_t kDestQp = 5;    // 24 bits
inline constexpr size_t kAckReq = 8;    // A(7) reserved(6:0)
inline constexpr size_t kPsn = 9;       // 24 bits
}  // namespace bth

// Extension headers (IBA 9.3), in the order they follow the BTH.
namespace deth {  // Datagram: Q_Key, source QP
inline constexpr size_t kLen = 8, kQkey = 0, kSrcQp = 5;
}
namespace reth {  // RDMA: virtual address, R_Key, DMA length
inline constexpr size_t kLen = 16, kVa = 0, kRkey = 8, kDmaLen = 12;
}
namespace atomic_eth {  // Atomic: VA, R_Key, swap/add data, compare data
inline constexpr size_t kLen = 28, kVa = 0, kRkey = 8, kSwapAdd = 12, kCompare = 20;
}
namespace aeth {  // ACK: syndrome, MSN
inline constexpr size_t kLen = 4, kSyndrome = 0, kMsn = 1;
}
namespace atomic_ack_eth {  // original remote data
inline constexpr size_t kLen = 8;
}
namespace immdt {
inline constexpr size_t kLen = 4;
}
namespace ieth {  // invalidate R_Key
inline constexpr size_t kLen = 4;
}
namespace cnp {  // RoCEv2 congestion notification: 16 reserved bytes after the BTH
inline constexpr size_t kLen = 16;
}

inline constexpr size_t kIcrcLen = 4;
inline constexpr size_t kMaxPayload = vocab::kMaxPmtu;  // largest IB path MTU

}  // namespace epic::wire
