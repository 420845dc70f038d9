// Zero-copy RoCEv2 frame parser.
//
// parse() walks Ethernet [802.1Q] / IPv4|IPv6 / UDP 4791 / BTH / extension
// headers / payload / ICRC, checks every length against the buffer and the
// others, and returns either a PacketView or the first reason the frame is not
// a well-formed RoCEv2 packet. It never reads outside [data, data+len).
// Bytes after the IP datagram (Ethernet minimum-size padding) are ignored.
// Thread-safe: pure function. Cost: ~tens of ns without ICRC; with ICRC, one
// CRC pass (tests/bench/wire_bench.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/wire/packet_view.h"
#include "datapath/wire/parse_error.h"

namespace epic::wire {

struct ParseOptions {
  bool verify_ipv4_checksum = true;
  bool verify_icrc = true;
  uint16_t max_payload = kMaxPayload;  // payload bytes (with pad) above this are rejected
};

struct ParseResult {
  ParseError error = ParseError::kOk;
  PacketView view;  // meaningful only when error == kOk
  bool ok() const { return error == ParseError::kOk; }
};

ParseResult parse(const uint8_t* data, size_t len, const ParseOptions& options = {});

}  // namespace epic::wire
