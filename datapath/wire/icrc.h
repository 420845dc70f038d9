// RoCEv2 Invariant CRC (IBA Annex A17.3.3).
//
// CRC-32 over: 8 bytes of 0xFF (standing in for the LRH), the IP header with
// its variant fields set to all ones (IPv4: TOS, TTL, header checksum; IPv6:
// traffic class, flow label, hop limit), the UDP header with its checksum set
// to ones, the BTH with byte 4 (FECN, BECN, reserved) set to ones, and every
// byte after the BTH up to the ICRC. Stored little-endian in the last 4 bytes.
//
// Cost: one CRC-32 pass over the packet plus a 68-byte masked header copy
// (see tests/bench/wire_bench.cc for the measured ratio to plain CRC-32).
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/wire/packet_view.h"

namespace epic::wire {

// The pseudo-header the ICRC covers first: 8 bytes standing for the LRH (all ones), then the
// IP, UDP and BTH headers with their variant fields set to ones.
inline constexpr size_t kIcrcLrhLen = 8;
inline constexpr size_t kIcrcMaskLen = 96;  // covers the longest pseudo-header (IPv6: 88)
// OR-mask over [LRH | IP | UDP | BTH], kIcrcMaskLen bytes: ones where the ICRC treats a bit as
// variant (icrc_delta.h uses it to compare headers as the ICRC sees them).
const uint8_t* icrc_variant_mask(IpVersion ip);

// `l3_off`: start of the IP header; `icrc_off`: first byte of the ICRC. The IP,
// UDP and BTH headers must be contiguous (no IPv4 options / IPv6 extensions).
uint32_t compute_icrc(const uint8_t* frame, IpVersion ip, uint16_t l3_off, uint16_t icrc_off);

// The same, piecewise: the CRC after the pseudo-header (the IP, UDP and BTH headers of
// `frame`, masked). Continued with crc32_update() over every byte after the BTH, in order, up to
// the ICRC, it gives compute_icrc(); those bytes may come from elsewhere (a frame's payload
// before it is copied in). Reads `frame` only up to the end of the BTH.
uint32_t icrc_after_headers(const uint8_t* frame, IpVersion ip, uint16_t l3_off);

inline uint32_t compute_icrc(const PacketView& v) {
  return compute_icrc(v.data, v.ip_version, v.l3_off, v.icrc_off);
}
inline bool icrc_ok(const PacketView& v) { return compute_icrc(v) == v.icrc(); }

// Recomputes and stores the ICRC in a frame the caller owns.
inline void store_icrc(uint8_t* frame, IpVersion ip, uint16_t l3_off, uint16_t icrc_off) {
  store_le32(frame + icrc_off, compute_icrc(frame, ip, l3_off, icrc_off));
}

}  // namespace epic::wire
