// The out-of-band exchange of rdma-core's ibv_rc_pingpong
// (libibverbs/examples/rc_pingpong.c), reproduced so inc-rc-peer can run a
// pingpong against the real program:
//
//   TCP port 18515 by default. Each side's message is the C string
//   "%04x:%06x:%06x:%s" — LID, QPN, PSN, GID in "wire GID" form (32 hex
//   digits: the GID's bytes in order, as rc_pingpong prints them on
//   little-endian hosts) — sent as exactly 52 bytes, its NUL included.
//   The client connects, sends its message, reads the server's, then sends
//   "done" (5 bytes with the NUL) and closes. The server reads the client's
//   message, moves its QP to RTR/RTS, sends its own message, then reads the
//   5-byte "done".
//
// Also: RoCEv2 GIDs for IPv4 (::ffff:a.b.c.d, rdma_rxe's GID index 1).
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace epic::tools::rc_peer {

using Gid = std::array<uint8_t, 16>;

inline constexpr size_t kPingpongMsgLen = 52;  // sizeof "0000:000000:000000:" + 32 + NUL
inline constexpr std::string_view kPingpongDone{"done\0", 5};
inline constexpr uint16_t kPingpongDefaultPort = 18515;

struct PingpongDest {
  uint16_t lid = 0;
  uint32_t qpn = 0;  // 24 bits
  uint32_t psn = 0;  // 24 bits
  Gid gid{};
  friend bool operator==(const PingpongDest&, const PingpongDest&) = default;
};

std::array<char, kPingpongMsgLen> format_pingpong_dest(const PingpongDest& d);
// Strict: "LLLL:QQQQQQ:PPPPPP:" + 32 hex digits, then NUL (or end of buffer).
std::optional<PingpongDest> parse_pingpong_dest(const char* msg, size_t len);

std::string gid_to_wire(const Gid& g);  // 32 lower-case hex digits
std::optional<Gid> gid_from_wire(std::string_view hex);
Gid gid_from_ipv4(uint32_t ipv4);                     // ::ffff:a.b.c.d
std::optional<uint32_t> ipv4_from_gid(const Gid& g);  // only for IPv4-mapped GIDs
std::string format_gid(const Gid& g);                 // RFC 5952 text, as rc_pingpong prints

}  // namespace epic::tools::rc_peer
